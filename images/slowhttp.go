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

// SlowHTTPImage builds (or finds) the image of harp's slow HTTP server
// (cmd/slowbackend): a static Go binary alone in an image, tagged by its hash.
func (b *Builder) SlowHTTPImage(ctx context.Context) (string, error) {
	dir := filepath.Join(b.Cache, "slowbackend")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "slowbackend")
	compiled := progress.Start("compiling the slow backend")
	cmd, cancel := child.Command(ctx, 10*time.Minute, "go", "build", "-trimpath", "-o", bin, "github.com/harp-project/harp/cmd/slowbackend")
	defer cancel()
	cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	compiled(err)
	if err != nil {
		return "", fmt.Errorf("building the slow backend: %v\n%s", err, out)
	}
	sum, err := fileSum(bin)
	if err != nil {
		return "", err
	}
	tag := "harp-backend:" + inputsHash("backend", sum)
	s := spec.Spec{Raw: "backend", Scheme: spec.Bin, Target: bin}
	if img, err := b.lookup(ctx, s, tag); img != nil || err != nil {
		return tag, err
	}
	done := progress.Start("building the slow backend image")
	tmp, err := os.CreateTemp(b.Cache, owner.TempPrefix("backend-")+"*.tar")
	if err != nil {
		done(err)
		return "", err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := writeFiles(tmp, map[string]string{bin: SlowHTTPBinary}); err == nil {
		_, err = tmp.Seek(0, 0)
	}
	if err == nil {
		// The -vv label marks the image complete; the backend has no -vv.
		_, err = b.importTar(ctx, s, tag, "HAProxy version none (harp slow backend)", tmp)
	}
	done(err)
	return tag, err
}
