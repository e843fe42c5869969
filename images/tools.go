package images

import (
	"archive/tar"
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
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/live/engine"
)

// ToolsRepository names the images a build's image becomes with the tools
// a standalone reproducer needs added.
const ToolsRepository = "harp-repro"

// ToolPackages are those tools: Debian's socat and python3-minimal,
// nothing else (a reproducer is POSIX sh with socat, or Python 3's
// standard library).
var ToolPackages = []string{"socat", "python3-minimal"}

// toolsRecipe changes whenever the way tools images are made changes.
const toolsRecipe = "harp-repro-tools-v2"

// errNoApt is the exit status of the install step in an image without apt.
const errNoApt = 97

// WithTools returns the tag of base (a build's image) with ToolPackages
// installed by its own apt from the Debian mirror its root was
// bootstrapped from, made once and kept by tag (a hash of base's image
// id and the packages). A build whose image is not a Debian root (src:
// and bin: builds: a binary and its libraries) has no apt: that is an
// error saying so.
func (b *Builder) WithTools(ctx context.Context, base string) (string, error) {
	return b.WithPackages(ctx, base, ToolPackages...)
}

// WithPackages returns the tag of base (a build's image) with the Debian
// packages pkgs installed by its own apt (see WithTools), made once and
// kept by tag.
func (b *Builder) WithPackages(ctx context.Context, base string, pkgs ...string) (string, error) {
	info, err := b.Docker.ImageInspect(ctx, base)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", base, err)
	}
	hint := base
	if _, t, ok := strings.Cut(base, ":"); ok {
		hint = t
	}
	hint = regexp.MustCompile(`[^A-Za-z0-9_.-]`).ReplaceAllString(hint, "_")
	if len(hint) > 80 {
		hint = hint[:80]
	}
	tag := fmt.Sprintf("%s:%s-%s", ToolsRepository, hint, inputsHash(append([]string{toolsRecipe, info.ID}, pkgs...)...))
	if _, err := b.Docker.ImageInspect(ctx, tag); err == nil {
		return tag, nil
	} else if !cerrdefs.IsNotFound(err) {
		return "", fmt.Errorf("inspecting image %s: %w", tag, err)
	}
	// A name "a|b" is the first of them this root's apt has (sid renamed
	// varnish vinyl-cache).
	var names []string
	for _, p := range pkgs {
		names = append(names, fmt.Sprintf("$(pick %s)", strings.ReplaceAll(p, "|", " ")))
	}
	install := fmt.Sprintf(`command -v apt-get >/dev/null || exit %d
export DEBIAN_FRONTEND=noninteractive
pick() { for p in "$@"; do apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: [0-9]' && { echo "$p"; return; }; done; echo "$1"; }
apt-get -q -o Acquire::Check-Valid-Until=false -o Acquire::Languages=none update &&
apt-get -q -y --no-install-recommends install %s &&
apt-get clean && rm -rf /var/lib/apt/lists/*`, errNoApt, strings.Join(names, " "))
	done := progress.Start("adding %s to %s (once: kept as %s)", strings.Join(pkgs, " and "), base, tag)
	labels := engine.Labels("image-build")
	// The install runs as the command, the entrypoint replaced only where
	// the base has one: a commit keeps what its config leaves unset from
	// the container, and the install must not stay the image's command.
	run := &container.Config{Image: base, Cmd: []string{"/bin/sh", "-c", install}, User: "0:0", Tty: true, Labels: labels}
	if info.Config != nil && len(info.Config.Entrypoint) > 0 {
		run.Entrypoint = []string{"/bin/sh", "-c", install}
		run.Cmd = nil
	}
	res, err := b.Docker.ContainerCreate(ctx, client.ContainerCreateOptions{Config: run})
	if err != nil {
		done(err)
		return "", fmt.Errorf("creating a container of %s: %w", base, err)
	}
	defer b.removeContainer(res.ID)
	out, code, err := b.runContainer(ctx, res.ID, 15*time.Minute)
	if err == nil && code == errNoApt {
		err = fmt.Errorf("image %s has no apt-get: it is not a Debian root (a src: or bin: build holds only haproxy and its libraries), so %s cannot be added to it", base, strings.Join(pkgs, " and "))
	} else if err == nil && code != 0 {
		err = fmt.Errorf("installing %s in %s exited %d:\n%s", strings.Join(pkgs, " "), base, code, lastLines([]byte(out), 15))
	}
	if err != nil {
		done(err)
		return "", err
	}
	// The base's own configuration back, with a label saying what was
	// added; an image without a command gets a shell.
	ccfg := &container.Config{Labels: map[string]string{}, Cmd: []string{"/bin/sh"}}
	if c := info.Config; c != nil {
		ccfg.Env, ccfg.Entrypoint, ccfg.WorkingDir, ccfg.User = c.Env, c.Entrypoint, c.WorkingDir, c.User
		if len(c.Cmd) > 0 {
			ccfg.Cmd = c.Cmd
		}
		for k, v := range c.Labels {
			ccfg.Labels[k] = v
		}
	}
	ccfg.Labels["harp.tools"] = strings.Join(pkgs, " ")
	ccfg.Labels["harp.tools.base"] = base
	if _, err := b.Docker.ContainerCommit(ctx, res.ID, client.ContainerCommitOptions{Reference: tag, Config: ccfg,
		Comment: "harp: " + base + " with " + strings.Join(pkgs, " ")}); err != nil {
		done(err)
		return "", fmt.Errorf("committing %s: %w", tag, err)
	}
	done(nil)
	return tag, nil
}

// runContainer starts a created container and waits for it (at most
// timeout), returning its output (a tty's: stdout and stderr together)
// and exit status.
func (b *Builder) runContainer(ctx context.Context, id string, timeout time.Duration) (string, int, error) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	wait := b.Docker.ContainerWait(wctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if _, err := b.Docker.ContainerStart(wctx, id, client.ContainerStartOptions{}); err != nil {
		return "", 0, fmt.Errorf("starting a container: %w", err)
	}
	code := 0
	select {
	case r := <-wait.Result:
		code = int(r.StatusCode)
		if r.Error != nil && r.Error.Message != "" {
			return "", 0, fmt.Errorf("waiting for a container: %s", r.Error.Message)
		}
	case err := <-wait.Error:
		if wctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("still running after %s", timeout)
		}
		return b.logs(id), 0, err
	}
	return b.logs(id), code, nil
}

func (b *Builder) logs(id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rc, err := b.Docker.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return ""
	}
	defer rc.Close()
	out, _ := io.ReadAll(rc)
	return strings.ReplaceAll(string(out), "\r\n", "\n")
}

// ReproducerDir is where RunReproducer puts a reproducer's directory.
const ReproducerDir = "/repro"

// RunReproducer runs a reproducer's directory in image (a copy at
// /repro, without network: the script uses loopback and UNIX sockets
// only): `/repro/reproduce /usr/sbin/haproxy`, as root. It returns the
// script's output and exit status; err is harp's failure to run it.
func (b *Builder) RunReproducer(ctx context.Context, image, dir string, timeout time.Duration) (string, int, error) {
	return b.RunIn(ctx, image, dir, ReproducerDir, []string{ReproducerDir + "/reproduce", Binary}, timeout)
}

// RunIn runs argv in a container of image with no network, dir's files
// copied to at (a folder under /), and gives its output (stdout and
// stderr together) and exit status; the container is removed.
func (b *Builder) RunIn(ctx context.Context, image, dir, at string, argv []string, timeout time.Duration) (string, int, error) {
	labels := engine.Labels("repro")
	res, err := b.Docker.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{Image: image, Entrypoint: argv[:1], Cmd: argv[1:],
			User: "0:0", Tty: true, Labels: labels, WorkingDir: at},
		HostConfig: &container.HostConfig{NetworkMode: "none"},
	})
	if err != nil {
		return "", 0, fmt.Errorf("creating a container of %s: %w", image, err)
	}
	defer b.removeContainer(res.ID)
	var tb bytes.Buffer
	if err := tarDir(dir, strings.TrimPrefix(at, "/"), &tb); err != nil {
		return "", 0, err
	}
	if _, err := b.Docker.CopyToContainer(ctx, res.ID, client.CopyToContainerOptions{DestinationPath: "/", Content: &tb}); err != nil {
		return "", 0, fmt.Errorf("copying %s into a container of %s: %w", dir, image, err)
	}
	return b.runContainer(ctx, res.ID, timeout)
}

// tarDir writes dir's regular files under name/ as a tar stream, with
// their modes.
func tarDir(dir, name string, w io.Writer) error {
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(&tar.Header{Name: name + "/", Mode: 0o755, Typeflag: tar.TypeDir}); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		st, err := e.Info()
		if err != nil {
			return err
		}
		body, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: name + "/" + e.Name(), Mode: int64(st.Mode().Perm()), Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(body); err != nil {
			return err
		}
	}
	return tw.Close()
}
