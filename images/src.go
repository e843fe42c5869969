package images

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/live/cache"
	"github.com/harp-project/harp/harness/live/child"
)

// src compiles HAProxy from a source tree or tarball with the spec's patches
// applied in order, then packs the binary like a bin: build.
func (b *Builder) src(ctx context.Context, s spec.Spec) (*Image, error) {
	var source string
	var err error
	if s.IsURL() {
		source, err = b.download(ctx, s)
	} else {
		source, err = b.sourcePath(ctx, s.Target)
	}
	if err != nil {
		return nil, err
	}
	srcSum, err := treeSum(source)
	if err != nil {
		return nil, fmt.Errorf("src:%s: %w", s.Target, err)
	}
	inputs := []string{"src", srcSum}
	var patches []string
	for _, p := range s.Patches {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		if err := spec.CheckPatch(abs); err != nil { // hashing /dev/zero would never end
			return nil, fmt.Errorf("src spec %q: %w", s.Raw, err)
		}
		sum, err := fileSum(abs)
		if err != nil {
			return nil, fmt.Errorf("src spec %q: patch file %s: %w", s.Raw, p, err)
		}
		patches = append(patches, abs)
		inputs = append(inputs, "patch", sum)
	}
	flavor := s.FlavorOrDefault()
	if err := checkFlavor(ctx, flavor); err != nil {
		return nil, fmt.Errorf("build spec %q: %w", s.Raw, err)
	}
	makeArgs := append(append([]string{"TARGET=linux-glibc"}, FlavorMake(flavor)...), s.Make...)
	if flavor != spec.Minimal { // minimal builds keep the hash they always had
		inputs = append(inputs, "flavor", string(flavor))
	}
	inputs = append(inputs, "make", strings.Join(makeArgs, " "), compilerID(ctx))
	dir := filepath.Join(b.Cache, "build", inputsHash(inputs...))
	binary := filepath.Join(dir, "haproxy")
	// One build directory per set of inputs, shared by every harp here.
	unlock, err := cache.Lock(ctx, dir+".lock", func() { progress.Printf("waiting for another harp building %s", s.Raw) })
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(dir, ".harp-built")); err != nil {
		if err := b.compile(ctx, s, source, patches, makeArgs, dir); err != nil {
			return nil, err
		}
	}
	img, err := b.packBinary(ctx, s, "src", binary)
	if err == nil && s.IsURL() {
		img.Origin = fmt.Sprintf("tarball %s (sha256 %s)", s.Target, srcSum)
	}
	return img, err
}

// FlavorMake is what a flavour adds to make (the spec's make= options come
// after, and win).
func FlavorMake(f spec.Flavor) []string {
	switch f {
	case spec.Full:
		return []string{"USE_OPENSSL=1", "USE_LUA=1", "USE_PCRE2=1", "USE_PCRE2_JIT=1", "USE_PROMEX=1", "USE_ZLIB=1"}
	case spec.ASan:
		// As HAProxy's CI builds its ASan jobs (.github/matrix.py).
		return []string{"USE_OBSOLETE_LINKER=1", "ARCH_FLAGS=-g -fsanitize=address", "OPT_CFLAGS=-O1", "DEBUG=-DDEBUG_STRICT=2"}
	case spec.NoThreads:
		return []string{"USE_THREAD="}
	}
	return nil
}

// flavorNeeds are the headers a flavour compiles against, and the Debian
// package that has each.
var flavorNeeds = map[spec.Flavor][][2]string{
	spec.Full: {{"/usr/include/openssl/ssl.h", "libssl-dev"}, {"/usr/include/lua5.4/lua.h", "liblua5.4-dev"},
		{"/usr/include/pcre2.h", "libpcre2-dev"}, {"/usr/include/zlib.h", "zlib1g-dev"}},
}

// checkFlavor says what this machine lacks to build a flavour, before any
// work: the Debian packages to install, or a compiler without ASan.
func checkFlavor(ctx context.Context, f spec.Flavor) error {
	var missing []string
	for _, need := range flavorNeeds[f] {
		if _, err := os.Stat(need[0]); err != nil {
			missing = append(missing, need[1])
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("flavor=%s needs Debian packages that are not installed: %s (apt-get install %s; make deps installs them)", f, strings.Join(missing, ", "), strings.Join(missing, " "))
	}
	if f == spec.ASan {
		out, err := child.Output(ctx, 30*time.Second, "cc", "-print-file-name=libasan.so")
		if p := strings.TrimSpace(string(out)); err != nil || !filepath.IsAbs(p) {
			return fmt.Errorf("flavor=asan: the compiler has no AddressSanitizer runtime (libasan; Debian: libasan8 with gcc 12)")
		}
	}
	return nil
}

// sourcePath gives a local directory or tarball for a src target, fetching
// Debian's upstream tarball for src:deb:VERSION.
func (b *Builder) sourcePath(ctx context.Context, target string) (string, error) {
	if v, ok := strings.CutPrefix(target, "deb:"); ok {
		m, err := b.Mirror(ctx)
		if err != nil {
			return "", err
		}
		build, err := m.Resolve(ctx, v)
		if err != nil {
			return "", err
		}
		return m.FetchOrig(ctx, build.Version)
	}
	if s := (spec.Spec{Scheme: spec.Src, Target: target}); s.IsURL() {
		return "", fmt.Errorf("src:%s: a URL is downloaded by the build, not here", target)
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("src:%s: no such source directory or tarball", target)
	}
	return abs, nil
}

func (b *Builder) compile(ctx context.Context, s spec.Spec, source string, patches, makeArgs []string, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	if err := unpack(ctx, source, dir); err != nil {
		return fmt.Errorf("src:%s: %w", s.Target, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "src", "haproxy.c")); err != nil {
		return fmt.Errorf("src:%s: not an HAProxy source tree (no src/haproxy.c)", s.Target)
	}
	for _, p := range patches {
		out, err := child.Output(ctx, 2*time.Minute, "patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-d", dir, "-i", p)
		if err != nil {
			rej := ""
			filepath.WalkDir(dir, func(path string, d fs.DirEntry, _ error) error {
				if d != nil && !d.IsDir() && strings.HasSuffix(path, ".rej") {
					data, _ := os.ReadFile(path)
					rej += "--- " + strings.TrimPrefix(path, dir+"/") + "\n" + string(data)
				}
				return nil
			})
			return fmt.Errorf("patch %s does not apply to %s:\n%s\n%s", p, s.Target, strings.TrimSpace(string(out)), rej)
		}
	}
	jobs := fmt.Sprintf("-j%d", runtime.NumCPU())
	logPath := filepath.Join(dir, "build.log")
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	done := progress.StartWith(func() string { return objectsBuilt(dir) }, "compiling %s (make %s %s)", s.Raw, jobs, strings.Join(makeArgs, " "))
	// On interrupt or after an hour, make and the compilers it started
	// are killed as a group.
	cmd, cancel := child.Command(ctx, time.Hour, "make", append(append([]string{"-C", dir, jobs}, b.ccache(dir)...), makeArgs...)...)
	defer cancel()
	cmd.Env = append(cmd.Env, ccacheEnv(b.Cache, dir)...)
	cmd.Stdout, cmd.Stderr = log, log
	err = cmd.Run()
	done(err)
	if err != nil {
		data, _ := os.ReadFile(logPath)
		return fmt.Errorf("compiling %s failed (%v); last lines of %s:\n%s", s.Raw, err, logPath, lastLines(data, 30))
	}
	ok = true
	return os.WriteFile(filepath.Join(dir, ".harp-built"), nil, 0o644)
}

// ccache compiles through ccache when it is installed (HARP_CCACHE=0 turns
// it off), so rebuilding nearby sources (patches, bisect steps) takes
// seconds. It does not change what is built, so it is not a build input.
func (b *Builder) ccache(dir string) []string {
	if os.Getenv("HARP_CCACHE") == "0" {
		return nil
	}
	if _, err := exec.LookPath("ccache"); err != nil {
		return nil
	}
	return []string{"CC=ccache cc"}
}

// ccacheEnv keeps ccache's store in harp's cache and lets builds in
// different directories share it (sources are unpacked per build).
func ccacheEnv(cache, dir string) []string {
	return []string{"CCACHE_DIR=" + filepath.Join(cache, "ccache"), "CCACHE_BASEDIR=" + dir, "CCACHE_NOHASHDIR=true", "CCACHE_MAXSIZE=2G"}
}

// objectsBuilt says how far a build is: objects compiled of sources present.
func objectsBuilt(dir string) string {
	objs, _ := filepath.Glob(filepath.Join(dir, "src", "*.o"))
	srcs, _ := filepath.Glob(filepath.Join(dir, "src", "*.c"))
	return fmt.Sprintf("%d of about %d objects", len(objs), len(srcs))
}

// unpack copies a source directory or extracts a tarball into dir.
func unpack(ctx context.Context, source, dir string) error {
	st, err := os.Stat(source)
	if err != nil {
		return err
	}
	var out []byte
	if st.IsDir() {
		out, err = child.Output(ctx, 10*time.Minute, "cp", "-a", source+"/.", dir)
	} else {
		out, err = child.Output(ctx, 10*time.Minute, "tar", "-xf", source, "-C", dir, "--strip-components=1")
	}
	if err != nil {
		return fmt.Errorf("unpacking %s: %v\n%s", source, err, out)
	}
	return nil
}

// treeSum hashes a tarball, or every file of a directory (paths and
// contents, .git left out).
func treeSum(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return fileSum(path)
	}
	h := sha256.New()
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		io.WriteString(h, strings.TrimPrefix(p, path)+"\x00")
		_, err = io.Copy(h, f)
		return err
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

func compilerID(ctx context.Context) string {
	out, _ := child.Output(ctx, 30*time.Second, "cc", "--version")
	first, _, _ := strings.Cut(string(out), "\n")
	return first
}
