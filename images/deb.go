package images

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/live/child"
	"github.com/harp-project/harp/harness/live/owner"
)

// deb builds a minimal Debian root filesystem of the suite that serves the
// requested haproxy version, with that package installed.
func (b *Builder) deb(ctx context.Context, s spec.Spec) (*Image, error) {
	m, err := b.Mirror(ctx)
	if err != nil {
		return nil, err
	}
	build, err := m.Resolve(ctx, s.Target)
	if err != nil {
		return nil, err
	}
	pocket := build.FromPocket()
	origin := fmt.Sprintf("Debian %s (%s)", pocket, m.PocketURL(pocket))
	tag := tagFor("deb", build.Version, "deb", build.Version, build.Release, pocket, m.URL, m.PocketURL(pocket))
	if img, err := b.lookup(ctx, s, tag); img != nil || err != nil {
		if img != nil {
			img.Origin = origin
		}
		return img, err
	}
	base := build.Release
	sources := []string{fmt.Sprintf("deb %s %s main", m.URL, build.Release)}
	if pocket != build.Release { // a build from -security or -updates installs over its release
		sources = append(sources, fmt.Sprintf("deb %s %s main", m.PocketURL(pocket), pocket))
	}
	if build.Release == "experimental" { // experimental is not a full suite: bootstrap sid under it
		base = "sid"
		sources = append([]string{fmt.Sprintf("deb %s sid main", m.URL)}, sources...)
	}
	work, err := os.MkdirTemp(b.Cache, owner.TempPrefix("deb-"))
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	tarball := filepath.Join(work, "rootfs.tar")
	vvFile := filepath.Join(work, "vv.txt")
	args := []string{"--variant=minbase", "--include=haproxy=" + build.Version,
		"--aptopt=Acquire::Check-Valid-Until \"false\"", "--aptopt=Acquire::Languages \"none\"",
		"--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*",
		"--dpkgopt=path-exclude=/usr/share/locale/*",
		"--customize-hook=chroot \"$1\" " + Binary + " -vv > " + shellQuote(vvFile), // HARP_CACHE may hold spaces
		base, tarball}
	args = append(args, sources...)
	done := progress.Start("building image for deb:%s (haproxy %s from Debian %s)", s.Target, build.Version, pocket)
	cmd, cancel := child.Command(ctx, 30*time.Minute, "mmdebstrap", args...)
	defer cancel()
	// On interrupt, let mmdebstrap unmount and remove its temporary root
	// (it is killed 30 s later if it has not; what is left, the next harp
	// sweeps).
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		done(err)
		return nil, fmt.Errorf("mmdebstrap for haproxy %s (%s): %v\n%s", build.Version, build.Release, err, lastLines(out, 25))
	}
	vv, err := os.ReadFile(vvFile)
	if err != nil || len(vv) == 0 {
		done(fmt.Errorf("no -vv"))
		return nil, fmt.Errorf("haproxy %s: `haproxy -vv` gave nothing in the new root filesystem", build.Version)
	}
	f, err := os.Open(tarball)
	if err != nil {
		done(err)
		return nil, err
	}
	defer f.Close()
	img, err := b.importTar(ctx, s, tag, string(vv), f)
	done(err)
	if img != nil {
		img.Origin = origin
	}
	return img, err
}

// shellQuote quotes a word for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
