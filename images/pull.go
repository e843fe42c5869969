package images

import (
	"archive/tar"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/distribution/reference"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/registry"
	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/live/child"
	"github.com/harp-project/harp/harness/live/engine"
	"github.com/harp-project/harp/harness/live/owner"
)

// binDirs are where an image's haproxy is looked for after its PATH.
var binDirs = []string{"/usr/local/sbin", "/usr/sbin", "/usr/local/bin", "/usr/bin", "/sbin", "/bin"}

// image makes a harp image of an image from any registry, or a local one:
// its root filesystem with its haproxy also at Binary and the directories
// harp uses, so that it runs as every harp build does (harp's command,
// config and root user, whatever the image's entrypoint and user). The
// image is used as found locally, else pulled.
func (b *Builder) image(ctx context.Context, s spec.Spec) (*Image, error) {
	ref := s.Target
	if _, err := reference.ParseNormalizedNamed(ref); err != nil {
		return nil, fmt.Errorf("build spec %q: %s is not an image reference: %v", s.Raw, ref, err)
	}
	info, err := b.Docker.ImageInspect(ctx, ref)
	if cerrdefs.IsNotFound(err) {
		if err := b.pull(ctx, ref); err != nil {
			return nil, fmt.Errorf("build spec %q: pulling %s: %w", s.Raw, ref, err)
		}
		info, err = b.Docker.ImageInspect(ctx, ref)
	}
	if err != nil {
		return nil, fmt.Errorf("build spec %q: %s: %w", s.Raw, ref, err)
	}
	digest := repoDigest(ref, info.RepoDigests)
	origin := fmt.Sprintf("image %s (%s; image id %s)", ref, digest, info.ID)
	tag := tagFor("image", path.Base(strings.SplitN(ref, "@", 2)[0]), "image", info.ID, s.BinPath)
	if img, err := b.lookup(ctx, s, tag); img != nil || err != nil {
		if img != nil {
			img.Origin = origin
		}
		return img, err
	}
	done := progress.Start("building image for %s (the image's files, its haproxy at %s)", s.Raw, Binary)
	var env []string
	if info.Config != nil {
		env = info.Config.Env
	}
	img, err := b.derive(ctx, s, env, tag)
	done(err)
	if err != nil {
		return nil, fmt.Errorf("build spec %q: %w", s.Raw, err)
	}
	img.Origin = origin
	return img, nil
}

// repoDigest is the digest the reference's own repository gives the image
// (an image pushed to several registries has one per repository).
func repoDigest(ref string, digests []string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err == nil {
		for _, d := range digests {
			if dn, err := reference.ParseNormalizedNamed(d); err == nil && dn.Name() == named.Name() {
				return d
			}
		}
	}
	return "no registry digest for " + ref + ": a local image"
}

// derive exports the image's files, finds its haproxy, reads -vv and
// imports the files with harp's additions as tag.
func (b *Builder) derive(ctx context.Context, s spec.Spec, env []string, tag string) (*Image, error) {
	export, err := os.CreateTemp(b.Cache, owner.TempPrefix("image-")+"*.tar")
	if err != nil {
		return nil, err
	}
	defer os.Remove(export.Name())
	defer export.Close()
	if err := b.exportImage(ctx, s.Target, export); err != nil {
		return nil, err
	}
	files, err := indexTar(export.Name())
	if err != nil {
		return nil, err
	}
	bin := s.BinPath
	if bin == "" {
		var looked []string
		bin, looked = findBinary(files, env)
		if bin == "" {
			return nil, fmt.Errorf("no haproxy in image %s (looked in %s); give its path with bin=/path", s.Target, strings.Join(looked, ", "))
		}
	} else if _, ok := files.resolve(bin); !ok {
		return nil, fmt.Errorf("image %s has no file %s (bin=)", s.Target, bin)
	}
	vv, err := b.imageVV(ctx, s.Target, bin)
	if err != nil {
		return nil, err
	}
	derived, err := os.CreateTemp(b.Cache, owner.TempPrefix("image-")+"*.tar")
	if err != nil {
		return nil, err
	}
	defer os.Remove(derived.Name())
	defer derived.Close()
	if err := withHarpFiles(export.Name(), derived, files, bin); err != nil {
		return nil, err
	}
	if _, err := derived.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return b.importTar(ctx, s, tag, vv, derived)
}

// exportImage writes the image's root filesystem (a container created,
// never started, then removed) to w.
func (b *Builder) exportImage(ctx context.Context, ref string, w io.Writer) error {
	id, err := b.scratchContainer(ctx, ref, []string{"/harp-never-runs"}, nil)
	if err != nil {
		return err
	}
	defer b.removeContainer(id)
	rc, err := b.Docker.ContainerExport(ctx, id, client.ContainerExportOptions{})
	if err != nil {
		return fmt.Errorf("exporting %s: %w", ref, err)
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("exporting %s: %w", ref, err)
	}
	return nil
}

// imageVV runs `bin -vv` in the image as root, with no shell needed.
func (b *Builder) imageVV(ctx context.Context, ref, bin string) (string, error) {
	id, err := b.scratchContainer(ctx, ref, []string{bin}, []string{"-vv"})
	if err != nil {
		return "", err
	}
	defer b.removeContainer(id)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	wait := b.Docker.ContainerWait(wctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if _, err := b.Docker.ContainerStart(wctx, id, client.ContainerStartOptions{}); err != nil {
		return "", fmt.Errorf("running %s -vv in %s: %w", bin, ref, err)
	}
	select {
	case <-wait.Result:
	case err := <-wait.Error:
		return "", fmt.Errorf("running %s -vv in %s: %w", bin, ref, err)
	}
	rc, err := b.Docker.ContainerLogs(wctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return "", err
	}
	defer rc.Close()
	out, _ := io.ReadAll(rc)
	vv := strings.ReplaceAll(string(out), "\r\n", "\n") // a tty's line ends
	if VersionOf(vv) == "unknown" {
		return "", fmt.Errorf("`%s -vv` in image %s does not look like HAProxy:\n%s", bin, ref, lastLines(out, 10))
	}
	return vv, nil
}

// scratchContainer creates a container of ref with harp's labels (a
// killed harp's leftovers are swept), as root, with a tty so that its
// output needs no demultiplexing.
func (b *Builder) scratchContainer(ctx context.Context, ref string, entrypoint, cmd []string) (string, error) {
	labels := engine.Labels("image-build")
	res, err := b.Docker.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{Image: ref, Entrypoint: entrypoint, Cmd: cmd, User: "0:0", Tty: true, Labels: labels},
	})
	if err != nil {
		return "", fmt.Errorf("creating a container of %s: %w", ref, err)
	}
	return res.ID, nil
}

func (b *Builder) removeContainer(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b.Docker.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
}

// pull pulls ref with progress, with the registry credentials of the
// usual Docker configuration.
func (b *Builder) pull(ctx context.Context, ref string) error {
	var layers, doneLayers atomic.Int32
	var bytes atomic.Int64
	done := progress.StartWith(func() string {
		return fmt.Sprintf("%d of %d layers, %d MiB", doneLayers.Load(), layers.Load(), bytes.Load()>>20)
	}, "pulling %s", ref)
	res, err := b.Docker.ImagePull(ctx, ref, client.ImagePullOptions{RegistryAuth: registryAuth(ctx, ref)})
	if err != nil {
		done(err)
		return err
	}
	seen := map[string]bool{}
	for msg, err := range res.JSONMessages(ctx) {
		if err == nil && msg.Error != nil {
			err = errors.New(msg.Error.Message)
		}
		if err != nil {
			done(err)
			return err
		}
		switch {
		case msg.Status == "Pulling fs layer" && !seen[msg.ID]:
			seen[msg.ID] = true
			layers.Add(1)
		case msg.Status == "Pull complete" || msg.Status == "Already exists":
			doneLayers.Add(1)
		case msg.Status == "Downloading" && msg.Progress != nil:
			bytes.Store(msg.Progress.Current)
		}
	}
	done(nil)
	return nil
}

// registryAuth reads the credentials for ref's registry the way the
// docker CLI does, from $DOCKER_CONFIG/config.json or ~/.docker/config.json:
// the registry's credential helper (credHelpers), else the default store
// (credsStore), else the auths entry ("" when none; a helper that fails
// or knows nothing means anonymous, as for docker pull).
func registryAuth(ctx context.Context, ref string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ""
	}
	host := reference.Domain(named)
	dir := os.Getenv("DOCKER_CONFIG")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".docker")
	}
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return ""
	}
	var cfg struct {
		Auths       map[string]struct{ Auth string } `json:"auths"`
		CredsStore  string                           `json:"credsStore"`
		CredHelpers map[string]string                `json:"credHelpers"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return ""
	}
	keys := []string{host, "https://" + host, "http://" + host}
	if host == "docker.io" {
		keys = append(keys, "https://index.docker.io/v1/", "index.docker.io")
	}
	encode := func(a registry.AuthConfig) string {
		a.ServerAddress = host
		enc, _ := json.Marshal(a)
		return base64.URLEncoding.EncodeToString(enc)
	}
	helper := cfg.CredsStore
	for _, k := range keys {
		if h, ok := cfg.CredHelpers[k]; ok {
			helper = h
			break
		}
	}
	if helper != "" {
		for _, k := range keys {
			if a, ok := fromHelper(ctx, helper, k); ok {
				return encode(a)
			}
		}
	}
	for _, k := range keys {
		a, ok := cfg.Auths[k]
		if !ok || a.Auth == "" {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(a.Auth)
		user, pass, found := strings.Cut(string(raw), ":")
		if err != nil || !found {
			continue
		}
		return encode(registry.AuthConfig{Username: user, Password: pass})
	}
	return ""
}

// fromHelper asks docker-credential-<helper> for server's credentials
// (the credential helper protocol: `get`, the server on stdin, JSON out).
func fromHelper(ctx context.Context, helper, server string) (registry.AuthConfig, bool) {
	cmd, cancel := child.Command(ctx, 30*time.Second, "docker-credential-"+helper, "get")
	defer cancel()
	cmd.Stdin = strings.NewReader(server)
	out, err := cmd.Output()
	if err != nil {
		return registry.AuthConfig{}, false
	}
	var c struct{ Username, Secret string }
	if json.Unmarshal(out, &c) != nil || c.Secret == "" {
		return registry.AuthConfig{}, false
	}
	if c.Username == "<token>" { // an identity token, not a password
		return registry.AuthConfig{IdentityToken: c.Secret}, true
	}
	return registry.AuthConfig{Username: c.Username, Password: c.Secret}, true
}

// tarIndex maps a root filesystem tarball's paths (absolute, cleaned) to
// their entries, to look for files without running the image.
type tarIndex map[string]*tar.Header

func indexTar(file string) (tarIndex, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx := tarIndex{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return idx, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the image's files: %w", err)
		}
		idx[path.Clean("/"+h.Name)] = h
	}
}

// resolve follows symlinks (of the path and of its directories) inside
// the image; ok is false when the path does not end at a regular file.
func (idx tarIndex) resolve(p string) (string, bool) {
	p = path.Clean(p)
	for hops := 0; hops < 40; hops++ {
		parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
		cur, moved := "/", false
		for i, part := range parts {
			next := path.Join(cur, part)
			h, ok := idx[next]
			if !ok {
				return "", false
			}
			if h.Typeflag == tar.TypeSymlink {
				target := h.Linkname
				if !path.IsAbs(target) {
					target = path.Join(cur, target)
				}
				p, moved = path.Join(append([]string{target}, parts[i+1:]...)...), true
				break
			}
			if h.Typeflag == tar.TypeLink {
				p, moved = path.Join(append([]string{"/" + h.Linkname}, parts[i+1:]...)...), true
				break
			}
			cur = next
		}
		if !moved {
			h := idx[p]
			return p, h != nil && h.Typeflag == tar.TypeReg && h.Mode&0o111 != 0
		}
	}
	return "", false
}

// findBinary looks for haproxy in the image's PATH, then the usual places.
func findBinary(idx tarIndex, env []string) (string, []string) {
	var dirs []string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			dirs = append(dirs, strings.Split(v, ":")...)
		}
	}
	var looked []string
	seen := map[string]bool{}
	for _, d := range append(dirs, binDirs...) {
		if d == "" || seen[d] {
			continue
		}
		seen[d] = true
		looked = append(looked, d)
		if p, ok := idx.resolve(path.Join(d, "haproxy")); ok {
			return p, looked
		}
	}
	return "", looked
}

// withHarpFiles copies the image's files to w, with its haproxy also at
// Binary (a hard link: gdb and harp's file copies see the binary itself)
// and the directories every harp image has.
func withHarpFiles(export string, w io.Writer, idx tarIndex, bin string) error {
	f, err := os.Open(export)
	if err != nil {
		return err
	}
	defer f.Close()
	tr, tw := tar.NewReader(f), tar.NewWriter(w)
	skip := bin != Binary
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if skip && path.Clean("/"+h.Name) == Binary {
			continue // replaced by the link below
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
	now := time.Now()
	for _, d := range []string{"/tmp", "/run", "/etc/harp", "/var/lib/haproxy", path.Dir(Binary)} {
		if _, ok := idx[d]; !ok {
			if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o1777, Typeflag: tar.TypeDir, ModTime: now}); err != nil {
				return err
			}
		}
	}
	if skip {
		if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(Binary, "/"), Linkname: strings.TrimPrefix(bin, "/"), Typeflag: tar.TypeLink, ModTime: now}); err != nil {
			return err
		}
	}
	return tw.Close()
}
