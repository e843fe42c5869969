package images

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/live/child"
	"github.com/harp-project/harp/harness/live/debmirror"
	"github.com/harp-project/harp/harness/live/owner"
)

// bin packs an existing binary and the shared libraries ldd says it needs.
func (b *Builder) bin(ctx context.Context, s spec.Spec) (*Image, error) {
	path, err := filepath.Abs(s.Target)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("bin:%s: %w", s.Target, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("bin:%s: not an executable file", s.Target)
	}
	return b.packBinary(ctx, s, "bin", path)
}

// packBinary makes an image holding only the binary at Binary, its shared
// libraries and the few files HAProxy reads.
func (b *Builder) packBinary(ctx context.Context, s spec.Spec, kind, path string) (*Image, error) {
	vvOut, err := child.Output(ctx, 30*time.Second, path, "-vv")
	vv := string(vvOut)
	var exit *exec.ExitError
	if err != nil && errors.As(err, &exit) && VersionOf(vv) != "unknown" && strings.Contains(vv, "Build options") {
		// A build whose -vv prints everything, then dies on its way out (a
		// bug of its own: upstream 28ca7fc594ca): still HAProxy, and what a
		// suite running -vv must see.
		progress.Printf("%s: `haproxy -vv` printed its version and build options, then failed (%v): the build is kept", s.Raw, err)
		err = nil
	}
	if err != nil || VersionOf(vv) == "unknown" {
		why := "it printed no HAProxy version line"
		if err != nil {
			why = err.Error()
		}
		return nil, fmt.Errorf("%s", strings.TrimSpace(fmt.Sprintf("%s: `%s -vv` does not look like HAProxy: %s\n%s", s.Raw, path, why, lastLines(vvOut, 10))))
	}
	libs, err := sharedLibs(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Raw, err)
	}
	inputs := []string{kind}
	for _, p := range append([]string{path}, libs...) {
		sum, err := fileSum(p)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, p, sum)
	}
	tag := tagFor(kind, VersionOf(vv), inputs...)
	if img, err := b.lookup(ctx, s, tag); img != nil || err != nil {
		if img != nil {
			img.HostBinary = path
		}
		return img, err
	}
	done := progress.Start("building image for %s (binary and %d shared libraries)", s.Raw, len(libs))
	tmp, err := os.CreateTemp(b.Cache, owner.TempPrefix("bin-")+"*.tar")
	if err != nil {
		done(err)
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := writeRootfs(tmp, path, libs); err != nil {
		done(err)
		return nil, err
	}
	if _, err := tmp.Seek(0, 0); err != nil {
		done(err)
		return nil, err
	}
	img, err := b.importTar(ctx, s, tag, vv, tmp)
	done(err)
	if img != nil {
		img.HostBinary = path
	}
	return img, err
}

var lddLine = regexp.MustCompile(`(?:=>\s*)?(/\S+)\s+\(0x`)

// sharedLibs lists the absolute paths of the libraries (and the loader)
// that the binary loads, as ldd reports them.
func sharedLibs(ctx context.Context, path string) ([]string, error) {
	out, err := child.Output(ctx, 30*time.Second, "ldd", path)
	if err != nil {
		if strings.Contains(string(out), "not a dynamic executable") {
			return nil, nil // static binary
		}
		return nil, fmt.Errorf("ldd %s: %v\n%s", path, err, out)
	}
	var libs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if strings.Contains(sc.Text(), "not found") {
			return nil, fmt.Errorf("ldd %s: a shared library is missing: %s", path, strings.TrimSpace(sc.Text()))
		}
		if m := lddLine.FindStringSubmatch(sc.Text()); m != nil {
			libs = append(libs, m[1])
		}
	}
	// glibc loads libgcc_s at run time (thread exit, backtraces): ldd does
	// not list it, HAProxy needs it.
	for _, l := range libs {
		if filepath.Base(l) == "libc.so.6" {
			if extra := filepath.Join(filepath.Dir(l), "libgcc_s.so.1"); !slices.Contains(libs, extra) {
				if _, err := os.Stat(extra); err == nil {
					libs = append(libs, extra)
				}
			}
			break
		}
	}
	sort.Strings(libs)
	return libs, nil
}

func writeRootfs(w io.Writer, binary string, libs []string) error {
	files := map[string]string{binary: Binary}
	for _, l := range libs {
		files[l] = l // the path ldd printed; the content is the symlink's target
	}
	return writeFiles(w, files)
}

// writeFiles writes a root filesystem tarball: the given host files at
// their destinations, plus the few directories and files every harp image has.
func writeFiles(w io.Writer, files map[string]string) error {
	tw := tar.NewWriter(w)
	now := time.Now()
	dirs := map[string]bool{}
	mkdirs := func(p string) error {
		var parts []string
		for d := filepath.Dir(p); d != "/" && !dirs[d]; d = filepath.Dir(d) {
			parts = append([]string{d}, parts...)
		}
		for _, d := range parts {
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: now}); err != nil {
				return err
			}
		}
		return nil
	}
	addFile := func(dst string, mode int64, data []byte) error {
		if err := mkdirs(dst); err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(dst, "/"), Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: now}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, d := range []string{"/tmp/", "/run/", "/etc/harp/", "/var/lib/haproxy/"} {
		if err := mkdirs(d + "x"); err != nil {
			return err
		}
	}
	for src, dst := range files {
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := addFile(dst, 0o755, data); err != nil {
			return err
		}
	}
	if err := addFile("/etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/false\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")); err != nil {
		return err
	}
	if err := addFile("/etc/group", 0o644, []byte("root:x:0:\nnogroup:x:65534:\n")); err != nil {
		return err
	}
	return tw.Close()
}

func fileSum(path string) (string, error) { return debmirror.FileSHA256(path) }

func lastLines(b []byte, n int) string { return text.LastLines(string(b), n) }
