package images

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	ocispec "github.com/moby/docker-image-spec/specs-go/v1"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/live/engine"
)

// Python is an image that runs Python 3 scripts beside a build's HAProxy
// (at Binary), and the argv that starts Python 3 in it.
type Python struct {
	Image string
	Argv  []string
	Env   []string
}

// BundleDir is where WithPython puts a Python of its own in an image that
// has no apt.
const BundleDir = "/opt/harp-python"

// pythonRecipe changes whenever the way bundles are made changes.
const pythonRecipe = "harp-python-bundle-v1"

// WithPython returns img's image with Python 3 added. A Debian root gets
// python3-minimal from its own apt (WithTools). A packed build (src:,
// bin:: the binary and its libraries, no apt) gets donor's Python (donor:
// a Debian build's image): the interpreter, python3-minimal's standard
// library, the shared libraries they load and their loader, under
// BundleDir, started through that loader so that they never mix with the
// build's own libraries, which HAProxy keeps using. Made once, kept by tag.
func (b *Builder) WithPython(ctx context.Context, img *Image, donor *Image) (Python, error) {
	if img.HostBinary == "" {
		tag, err := b.WithTools(ctx, img.Tag)
		return Python{Image: tag, Argv: []string{"python3"}}, err
	}
	if donor == nil || donor.HostBinary != "" {
		return Python{}, fmt.Errorf("%s has no apt: Python comes from a Debian build's image, and none was given", img.Name)
	}
	from, err := b.WithTools(ctx, donor.Tag)
	if err != nil {
		return Python{}, err
	}
	info, err := b.Docker.ImageInspect(ctx, img.Tag)
	if err != nil {
		return Python{}, fmt.Errorf("image %s: %w", img.Tag, err)
	}
	finfo, err := b.Docker.ImageInspect(ctx, from)
	if err != nil {
		return Python{}, fmt.Errorf("image %s: %w", from, err)
	}
	hint := regexp.MustCompile(`[^A-Za-z0-9_.-]`).ReplaceAllString(strings.TrimPrefix(img.Tag, Repository+":"), "_")
	if len(hint) > 80 {
		hint = hint[:80]
	}
	tag := fmt.Sprintf("%s:%s-py-%s", ToolsRepository, hint, inputsHash(pythonRecipe, info.ID, finfo.ID))
	py := Python{Image: tag, Argv: []string{BundleDir + "/loader", "--library-path", BundleDir + "/lib", BundleDir + "/bin/python3"},
		Env: []string{"PYTHONHOME=" + BundleDir}}
	if _, err := b.Docker.ImageInspect(ctx, tag); err == nil {
		return py, nil
	} else if !cerrdefs.IsNotFound(err) {
		return Python{}, fmt.Errorf("inspecting image %s: %w", tag, err)
	}
	done := progress.Start("adding %s's Python to %s (once: kept as %s)", donor.Name, img.Name, tag)
	bundle, err := b.pythonBundle(ctx, from)
	if err == nil {
		err = b.commitWith(ctx, img.Tag, info.Config, bundle, tag, "harp: "+img.Tag+" with the Python of "+from)
	}
	done(err)
	return py, err
}

// collect gathers the bundle under /out in a Debian root with Python 3:
// the interpreter, its standard library, every library ldd lists for
// them and the loader (named loader: its name is the architecture's).
const collect = `set -e
py=$(readlink -f "$(command -v python3)")
v=$(basename "$py")
o=/out/opt/harp-python
mkdir -p "$o/bin" "$o/lib"
cp "$py" "$o/bin/python3"
cp -a "/usr/lib/$v" "$o/lib/$v"
for f in "$py" $(find "/usr/lib/$v" -name '*.so'); do ldd "$f"; done >/tmp/ldd
sed -n 's/.*=> \(\/[^ ]*\) (0x.*/\1/p' /tmp/ldd | sort -u | while read -r l; do cp -L "$l" "$o/lib/"; done
ld=$(sed -n 's/^[[:space:]]*\(\/[^ ]*ld-linux[^ ]*\) (0x.*/\1/p' /tmp/ldd | head -1)
[ -n "$ld" ]
cp -L "$ld" "$o/loader"
`

// pythonBundle runs collect in a container of from and returns what it
// gathered as a tar stream (entries under opt/harp-python/).
func (b *Builder) pythonBundle(ctx context.Context, from string) ([]byte, error) {
	res, err := b.Docker.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &container.Config{Image: from,
		Entrypoint: []string{"/bin/sh", "-c", collect}, User: "0:0", Tty: true, Labels: engine.Labels("image-build")},
		HostConfig: &container.HostConfig{NetworkMode: "none"}})
	if err != nil {
		return nil, fmt.Errorf("creating a container of %s: %w", from, err)
	}
	defer b.removeContainer(res.ID)
	out, code, err := b.runContainer(ctx, res.ID, 5*time.Minute)
	if err == nil && code != 0 {
		err = fmt.Errorf("gathering Python in %s exited %d:\n%s", from, code, lastLines([]byte(out), 15))
	}
	if err != nil {
		return nil, err
	}
	cp, err := b.Docker.CopyFromContainer(ctx, res.ID, client.CopyFromContainerOptions{SourcePath: "/out/opt"})
	if err != nil {
		return nil, fmt.Errorf("copying Python out of %s: %w", from, err)
	}
	defer cp.Content.Close()
	return io.ReadAll(cp.Content)
}

// commitWith makes tag: base's image with the tar stream files unpacked at
// its root, base's own configuration kept.
func (b *Builder) commitWith(ctx context.Context, base string, cfg *ocispec.DockerOCIImageConfig, files []byte, tag, comment string) error {
	res, err := b.Docker.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &container.Config{Image: base,
		Entrypoint: []string{Binary}, Labels: engine.Labels("image-build")}})
	if err != nil {
		return fmt.Errorf("creating a container of %s: %w", base, err)
	}
	defer b.removeContainer(res.ID)
	if _, err := b.Docker.CopyToContainer(ctx, res.ID, client.CopyToContainerOptions{DestinationPath: "/", Content: bytes.NewReader(files)}); err != nil {
		return fmt.Errorf("copying Python into a container of %s: %w", base, err)
	}
	ccfg := &container.Config{Labels: map[string]string{}}
	if cfg != nil {
		ccfg.Env, ccfg.Entrypoint, ccfg.Cmd, ccfg.WorkingDir, ccfg.User = cfg.Env, cfg.Entrypoint, cfg.Cmd, cfg.WorkingDir, cfg.User
		for k, v := range cfg.Labels {
			ccfg.Labels[k] = v
		}
	}
	ccfg.Labels["harp.tools"] = "python3 (" + BundleDir + ")"
	ccfg.Labels["harp.tools.base"] = base
	if _, err := b.Docker.ContainerCommit(ctx, res.ID, client.ContainerCommitOptions{Reference: tag, Config: ccfg, Comment: comment}); err != nil {
		return fmt.Errorf("committing %s: %w", tag, err)
	}
	return nil
}

// RunScript runs a Python script of dir in py's image: dir's files copied
// to ReproducerDir (the working directory), the script started with args,
// as root and without network (the scripts use loopback and UNIX sockets
// only). It returns the output and exit status; err is harp's failure to
// run it.
func (b *Builder) RunScript(ctx context.Context, py Python, dir, script string, args []string, timeout time.Duration) (string, int, error) {
	if _, err := os.Stat(filepath.Join(dir, script)); err != nil {
		return "", 0, err
	}
	argv := append(append(append([]string{}, py.Argv...), script), args...)
	res, err := b.Docker.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{Image: py.Image, Entrypoint: argv[:1], Cmd: argv[1:], Env: py.Env,
			User: "0:0", Tty: true, Labels: engine.Labels("repro"), WorkingDir: ReproducerDir},
		HostConfig: &container.HostConfig{NetworkMode: "none"},
	})
	if err != nil {
		return "", 0, fmt.Errorf("creating a container of %s: %w", py.Image, err)
	}
	defer b.removeContainer(res.ID)
	var tb bytes.Buffer
	if err := tarDir(dir, filepath.Base(ReproducerDir), &tb); err != nil {
		return "", 0, err
	}
	if _, err := b.Docker.CopyToContainer(ctx, res.ID, client.CopyToContainerOptions{DestinationPath: "/", Content: &tb}); err != nil {
		return "", 0, fmt.Errorf("copying %s into a container of %s: %w", dir, py.Image, err)
	}
	return b.runContainer(ctx, res.ID, timeout)
}
