package images

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/harp-project/harp/harness/child"
	"github.com/harp-project/harp/harness/owner"
	"github.com/harp-project/harp/harness/progress"
	"github.com/harp-project/harp/harness/spec"
)

// SlowHTTPBinary is where harp's slow HTTP server lives in its image.
const SlowHTTPBinary = "/slowbackend"

// LinkProxyBinary is where the link proxy (toxiproxy's server) lives in
// its image.
const LinkProxyBinary = "/linkproxy"

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

// goImage compiles a Go command of this module statically and imports it
// alone into an image tagged harp-<name>:<hash of the binary>.
func (b *Builder) goImage(ctx context.Context, name, what, pkg, dst string) (string, error) {
	dir := filepath.Join(b.Cache, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	compiled := progress.Start("compiling %s", what)
	cmd, cancel := child.Command(ctx, 10*time.Minute, "go", "build", "-trimpath", "-o", bin, pkg)
	defer cancel()
	cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	compiled(err)
	if err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", what, err, out)
	}
	sum, err := fileSum(bin)
	if err != nil {
		return "", err
	}
	tag := "harp-" + name + ":" + inputsHash(name, sum)
	if name == "slowbackend" {
		tag = "harp-backend:" + inputsHash("backend", sum) // the tag it always had
	}
	s := spec.Spec{Raw: name, Scheme: spec.Bin, Target: bin}
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
	if err := writeFiles(tmp, map[string]string{bin: dst}); err == nil {
		_, err = tmp.Seek(0, 0)
	}
	if err == nil {
		// The -vv label marks the image complete; these binaries have no -vv.
		_, err = b.importTar(ctx, s, tag, "HAProxy version none (harp "+name+")", tmp)
	}
	done(err)
	return tag, err
}
