// Package images turns a build spec into a local Docker image holding that
// HAProxy build. Nothing is pulled: Debian builds are bootstrapped from the
// mirror with mmdebstrap and imported; source and binary builds become a
// minimal image of the binary and the shared libraries it needs. Images are
// tagged by a hash of everything that went into them and reused.
package images

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/live/debmirror"
	"github.com/harp-project/harp/harness/live/engine"
)

// Repository is the local image name every harp HAProxy image uses.
const Repository = "harp-haproxy"

// Binary is where HAProxy lives in every harp image.
const Binary = "/usr/sbin/haproxy"

// recipe changes whenever the way images are made changes, so old images
// are not reused for new recipes.
const recipe = "harp-image-v2"

// Image is a built HAProxy image.
type Image struct {
	Spec    spec.Spec
	Tag     string // harp-haproxy:<kind>-<version>-<hash>
	Version string // from `haproxy -vv`, e.g. 3.4.7-1
	Name    string // what a verdict line calls the build: Version plus any patches
	VV      string // `haproxy -vv` output
	Reused  bool   // found already built
	// HostBinary is the binary on this machine a src: or bin: image was
	// made from ("" for deb:).
	HostBinary string
	// Origin says where the build came from when the spec does not (a git
	// commit and its subject, a downloaded tarball and its sha256).
	Origin string
	// Commit is the commit a git: build compiled ("" for others): what a
	// nightly on a branch head compares and bisects between.
	Commit string
}

// Builder makes images; Cache holds apt lists, downloads and source builds.
type Builder struct {
	Docker *client.Client
	Cache  string
	mu     sync.Mutex // builds may run in parallel (harp matrix --jobs)
	mirror *debmirror.Mirror
}

// Mirror opens (and refreshes, once a few hours) the private Debian state.
func (b *Builder) Mirror(ctx context.Context) (*debmirror.Mirror, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mirror != nil {
		return b.mirror, nil
	}
	m, err := debmirror.Open(filepath.Join(b.Cache, "apt"))
	if err != nil {
		return nil, err
	}
	if err := m.Update(ctx, 6*time.Hour); err != nil {
		return nil, err
	}
	b.mirror = m
	return m, nil
}

// Ensure returns the image for a spec, building it when it is not there.
func (b *Builder) Ensure(ctx context.Context, s spec.Spec) (*Image, error) {
	switch s.Scheme {
	case spec.Deb:
		return b.deb(ctx, s)
	case spec.Src:
		return b.src(ctx, s)
	case spec.Bin:
		return b.bin(ctx, s)
	case spec.Git:
		return b.git(ctx, s)
	case spec.Image:
		return b.image(ctx, s)
	}
	return nil, fmt.Errorf("build spec %q: unknown scheme", s.Raw)
}

// lookup returns the image already built for tag, or nil.
func (b *Builder) lookup(ctx context.Context, s spec.Spec, tag string) (*Image, error) {
	res, err := b.Docker.ImageInspect(ctx, tag)
	if cerrdefs.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("inspecting image %s: %w", tag, err)
	}
	var labels map[string]string
	if res.Config != nil {
		labels = res.Config.Labels
	}
	vvb, err := base64.StdEncoding.DecodeString(labels["harp.vv"])
	if err != nil || len(vvb) == 0 {
		return nil, nil // not one of ours, or incomplete: rebuild
	}
	vv := string(vvb)
	return &Image{Spec: s, Tag: tag, VV: vv, Version: VersionOf(vv), Name: displayName(s, VersionOf(vv)), Reused: true}, nil
}

// importTar imports a root filesystem tarball as the image tag.
func (b *Builder) importTar(ctx context.Context, s spec.Spec, tag, vv string, tarball *os.File) (*Image, error) {
	changes := []string{"LABEL " + engine.LabelHarp + "=1"}
	// -vv has newlines and quotes: a label keeps it base64-encoded.
	changes = append(changes, fmt.Sprintf("LABEL harp.spec=%q", s.String()),
		"LABEL harp.vv="+base64.StdEncoding.EncodeToString([]byte(vv)))
	res, err := b.Docker.ImageImport(ctx, client.ImageImportSource{Source: tarball, SourceName: "-"}, tag,
		client.ImageImportOptions{Changes: changes, Message: "harp " + s.String()})
	if err != nil {
		return nil, fmt.Errorf("importing image %s: %w", tag, err)
	}
	defer res.Close()
	if _, err := io.ReadAll(res); err != nil {
		return nil, fmt.Errorf("importing image %s: %w", tag, err)
	}
	v := VersionOf(vv)
	return &Image{Spec: s, Tag: tag, VV: vv, Version: v, Name: displayName(s, v)}, nil
}

// ASanOptions is the AddressSanitizer setup of every node of an ASan
// build: the first error aborts the worker (SIGABRT: a crash the master
// logs and harp reports), without a core (the shadow memory would make it
// huge; the report has the stacks) and without leak reports at exit.
const ASanOptions = "abort_on_error=1:disable_coredump=1:detect_leaks=0"

// ASanLeakOptions are ASanOptions with LeakSanitizer on, for one run of
// the binary whose leaks at exit are the bug a case looks for.
const ASanLeakOptions = "abort_on_error=1:disable_coredump=1:detect_leaks=1"

// Sanitized says whether the build was compiled with AddressSanitizer
// (its -vv shows the compiler flags), whatever spec made it.
func (img *Image) Sanitized() bool { return strings.Contains(img.VV, "-fsanitize=address") }

var versionLine = regexp.MustCompile(`(?m)^HA-?Proxy version (\S+)`)

// VersionOf reads the version from `haproxy -vv` output.
func VersionOf(vv string) string {
	if m := versionLine.FindStringSubmatch(vv); m != nil {
		return m[1]
	}
	return "unknown"
}

func displayName(s spec.Spec, version string) string {
	if s.Flavor != "" && s.Flavor != spec.Minimal {
		version += "-" + string(s.Flavor)
	}
	if len(s.Patches) == 0 {
		return version
	}
	var ps []string
	for _, p := range s.Patches {
		ps = append(ps, filepath.Base(p))
	}
	return version + "+" + strings.Join(ps, "+")
}

// tagFor makes a tag from a kind, a version hint and the hash of the inputs.
func tagFor(kind, hint string, inputs ...string) string {
	hint = regexp.MustCompile(`[^A-Za-z0-9_.-]`).ReplaceAllString(hint, "_")
	if len(hint) > 60 {
		hint = hint[:60]
	}
	return fmt.Sprintf("%s:%s-%s-%s", Repository, kind, hint, inputsHash(inputs...))
}

// inputsHash is a short hash of the recipe and the inputs.
func inputsHash(inputs ...string) string {
	h := sha256.New()
	h.Write([]byte(recipe))
	for _, in := range inputs {
		h.Write([]byte{0})
		h.Write([]byte(in))
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
