package images

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/live/child"
	"github.com/harp-project/harp/harness/live/helper"
	"github.com/harp-project/harp/harness/live/owner"
)

// SlowHTTPBinary is where harp's slow HTTP server lives in its image.
const SlowHTTPBinary = "/" + helper.SlowBackend

// LinkProxyBinary is where the link proxy (toxiproxy's server) lives in
// its image. Both names are helper names: harp's own binary, started as
// either, is that helper.
const LinkProxyBinary = "/" + helper.LinkProxy

// SlowHTTPImage builds (or finds) the image of harp's slow HTTP server
// (cmd/slowbackend): a static Go binary alone in an image, tagged by its hash.
func (b *Builder) SlowHTTPImage(ctx context.Context) (string, error) {
	return b.goImage(ctx, "slowbackend", "the slow backend", "github.com/harp-project/harp/cmd/slowbackend", SlowHTTPBinary)
}

// LinkProxyImage builds (or finds) the image of the link proxy
// (cmd/linkproxy, toxiproxy's server) that peers clusters route their
// links through.
func (b *Builder) LinkProxyImage(ctx context.Context) (string, error) {
	return b.goImage(ctx, "linkproxy", "the link proxy", "github.com/harp-project/harp/cmd/linkproxy", LinkProxyBinary)
}

// goImage makes (or finds) the image of a helper: its binary alone (with
// the shared libraries it loads) at dst, tagged harp-<name>:<hash of the
// files>.
func (b *Builder) goImage(ctx context.Context, name, what, pkg, dst string) (string, error) {
	files, inputs, err := b.helperFiles(ctx, name, what, pkg, dst)
	if err != nil {
		return "", err
	}
	tag := "harp-" + name + ":" + inputsHash(inputs...)
	if name == "slowbackend" {
		tag = "harp-backend:" + inputsHash(append([]string{"backend"}, inputs[1:]...)...) // the tag it always had
	}
	s := spec.Spec{Raw: name, Scheme: spec.Bin, Target: dst}
	if img, err := b.lookup(ctx, s, tag); img != nil || err != nil {
		return tag, err
	}
	done := progress.Start("building the image of %s", what)
	tmp, err := os.CreateTemp(b.Cache, owner.TempPrefix(name+"-")+"*.tar")
	if err != nil {
		done(err)
		return "", err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := writeFiles(tmp, files); err == nil {
		_, err = tmp.Seek(0, 0)
	}
	if err == nil {
		// The -vv label marks the image complete; these binaries have no -vv.
		_, err = b.importTar(ctx, s, tag, "HAProxy version none (harp "+name+")", tmp)
	}
	done(err)
	return tag, err
}

// helperFiles are the files of a helper's image (host path: path in the
// image) and what its tag hashes. A binary that carries the helpers (harp:
// helper.Run) is its own helper, so harp makes these images from any
// directory, installed or not, with no source tree or Go toolchain. Any
// other (a test binary, run in the checkout) compiles the helper's command.
func (b *Builder) helperFiles(ctx context.Context, name, what, pkg, dst string) (map[string]string, []string, error) {
	if helper.Carried() {
		exe, err := os.Executable()
		if err == nil {
			exe, err = filepath.EvalSymlinks(exe)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: finding harp's own binary: %w", what, err)
		}
		libs, err := sharedLibs(ctx, exe)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", what, err)
		}
		files, inputs := map[string]string{exe: dst}, []string{name, "self"}
		for _, p := range append([]string{exe}, libs...) {
			sum, err := fileSum(p)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", what, err)
			}
			inputs = append(inputs, p, sum)
			if p != exe {
				files[p] = p
			}
		}
		return files, inputs, nil
	}
	dir := filepath.Join(b.Cache, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	bin := filepath.Join(dir, name)
	compiled := progress.Start("compiling %s", what)
	cmd, cancel := child.Command(ctx, 10*time.Minute, "go", "build", "-trimpath", "-o", bin, pkg)
	defer cancel()
	cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	compiled(err)
	if err != nil {
		return nil, nil, fmt.Errorf("building %s: %v\n%s", what, err, out)
	}
	sum, err := fileSum(bin)
	if err != nil {
		return nil, nil, err
	}
	return map[string]string{bin: dst}, []string{name, sum}, nil
}
