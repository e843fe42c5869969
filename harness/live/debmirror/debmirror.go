// Package debmirror asks Debian's mirror which HAProxy builds it serves,
// through a private apt configuration (the host's own apt state is never
// touched). The mirror URL is read from the machine's apt configuration.
package debmirror

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/live/cache"
	"github.com/harp-project/harp/harness/live/child"
)

// Package is the Debian source and binary package name harp builds from.
const Package = "haproxy"

// Build is one haproxy binary package the mirror serves.
type Build struct {
	Version string // Debian version, e.g. 3.0.11-1+deb13u4
	// Release is Debian's name for it (what Debian calls a suite; harp
	// keeps "suite" for its own): bookworm, trixie, sid, experimental. The
	// JSON name stays as the cache of build lists has it.
	Release string `json:"Suite"`
	// Pocket is the archive it came from: the release itself, or its
	// -security or -updates pocket (as apt on that release installs it).
	Pocket string `json:",omitempty"`
}

// FromPocket is the pocket, the release's own when not set.
func (b Build) FromPocket() string {
	if b.Pocket == "" {
		return b.Release
	}
	return b.Pocket
}

// Upstream is the upstream part of the Debian version (3.0.11).
func (b Build) Upstream() string { return Upstream(b.Version) }

// Upstream strips epoch and Debian revision from a Debian version.
func Upstream(v string) string {
	if _, after, ok := strings.Cut(v, ":"); ok {
		v = after
	}
	if i := strings.LastIndex(v, "-"); i > 0 {
		v = v[:i]
	}
	return v
}

// Mirror is a private apt state directory pointed at one Debian mirror
// (and its security archive).
type Mirror struct {
	URL      string
	Security string // the security archive: $HARP_DEBIAN_SECURITY_MIRROR, else URL's sibling debian-security
	Dir      string
}

// Stable are the suites with -security and -updates pockets.
var Stable = []string{"bookworm", "trixie"}

// Pockets are the archives apt on a release reads beside the release's own.
func Pockets(release string) []string {
	for _, s := range Stable {
		if s == release {
			return []string{release + "-security", release + "-updates"}
		}
	}
	return nil
}

// PocketURL is the archive serving a pocket.
func (m *Mirror) PocketURL(pocket string) string {
	if strings.HasSuffix(pocket, "-security") {
		return m.Security
	}
	return m.URL
}

// securityMirror derives the security archive from the mirror's URL.
func securityMirror(url string) string {
	if u := os.Getenv("HARP_DEBIAN_SECURITY_MIRROR"); u != "" {
		return strings.TrimRight(u, "/")
	}
	if base, ok := strings.CutSuffix(url, "/debian"); ok {
		return base + "/debian-security"
	}
	return url + "-security"
}

// Open prepares the private apt state under dir. The mirror URL comes from
// $HARP_DEBIAN_MIRROR, else from the machine's apt sources.
func Open(dir string) (*Mirror, error) {
	url := os.Getenv("HARP_DEBIAN_MIRROR")
	if url == "" {
		var err error
		if url, err = SystemMirror(); err != nil {
			return nil, err
		}
	}
	m := &Mirror{URL: strings.TrimRight(url, "/"), Dir: dir}
	m.Security = securityMirror(m.URL)
	for _, d := range []string{"lists/partial", "cache/archives/partial", "src"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	var b strings.Builder
	for _, s := range spec.DebReleases {
		fmt.Fprintf(&b, "deb %s %s main\ndeb-src %s %s main\n", m.URL, s, m.URL, s)
		for _, p := range Pockets(s) {
			fmt.Fprintf(&b, "deb %s %s main\ndeb-src %s %s main\n", m.PocketURL(p), p, m.PocketURL(p), p)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "sources.list"), []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	return m, nil
}

var debLine = regexp.MustCompile(`^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)`)

// SystemMirror finds the Debian archive URL in the machine's apt sources
// (deb822 .sources files and one-line .list files), skipping the security
// archive.
func SystemMirror() (string, error) {
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	files = append(files, "/etc/apt/sources.list")
	more, _ := filepath.Glob("/etc/apt/sources.list.d/*.list")
	files = append(files, more...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			var url string
			if strings.HasPrefix(line, "URIs:") {
				url = strings.Fields(strings.TrimPrefix(line, "URIs:"))[0]
			} else if m := debLine.FindStringSubmatch(line); m != nil {
				url = m[1]
			}
			if url != "" && strings.HasSuffix(strings.TrimRight(url, "/"), "/debian") {
				return url, nil
			}
		}
	}
	return "", fmt.Errorf("no Debian mirror found in /etc/apt sources; set HARP_DEBIAN_MIRROR")
}

func (m *Mirror) aptOpts() []string {
	return []string{
		"-o", "Dir::Etc::SourceList=" + filepath.Join(m.Dir, "sources.list"),
		"-o", "Dir::Etc::SourceParts=/dev/null",
		"-o", "Dir::State::Lists=" + filepath.Join(m.Dir, "lists"),
		"-o", "Dir::Cache=" + filepath.Join(m.Dir, "cache"),
		"-o", "Dir::State::Status=/dev/null",
		"-o", "Debug::NoLocking=1",
		// The mirror may be a snapshot whose Release files have expired.
		"-o", "Acquire::Check-Valid-Until=false",
		"-o", "Acquire::Languages=none",
		"-o", "APT::Sandbox::User=root",
	}
}

func (m *Mirror) apt(ctx context.Context, tool string, args ...string) ([]byte, error) {
	out, err := child.Output(ctx, 15*time.Minute, tool, append(m.aptOpts(), args...)...)
	if err != nil {
		return out, fmt.Errorf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, tail(out, 20))
	}
	return out, nil
}

// Update refreshes the package lists when they are older than maxAge.
func (m *Mirror) Update(ctx context.Context, maxAge time.Duration) error {
	// The stamp names the mirror the lists came from: another mirror
	// (HARP_DEBIAN_MIRROR) means other lists.
	stamp := filepath.Join(m.Dir, "updated")
	unlock, err := cache.Lock(ctx, filepath.Join(m.Dir, "apt.lock"), func() { progress.Printf("waiting for another harp refreshing the package lists") })
	if err != nil {
		return err
	}
	defer unlock()
	if st, err := os.Stat(stamp); err == nil && time.Since(st.ModTime()) < maxAge {
		if from, _ := os.ReadFile(stamp); string(from) == m.stamp() {
			return nil
		}
	}
	done := progress.Start("refreshing Debian package lists from %s (%s)", m.URL, strings.Join(spec.DebReleases, ", "))
	out, err := m.apt(ctx, "apt-get", "update")
	if err == nil {
		// apt-get update exits 0 when every fetch failed: read what it said.
		// A mirror without the -security or -updates pockets (a snapshot)
		// is still usable: say what suite names will mean there.
		failed, pockets := updateFailed(out)
		if failed != "" {
			err = fmt.Errorf("some package lists could not be fetched:\n%s", failed)
		} else if pockets != "" {
			progress.Printf("the -security and -updates pockets could not be read, so deb:<release> means the release's own build, not what apt on it would install:\n%s", pockets)
		}
	}
	done(err)
	if err != nil {
		os.Remove(stamp) // never fresh after a failed refresh
		return fmt.Errorf("Debian mirror %s not usable: %w", m.URL, err)
	}
	return os.WriteFile(stamp, []byte(m.stamp()), 0o644)
}

// stamp names what the lists were fetched from: other archives, or the
// pockets added, mean other lists.
func (m *Mirror) stamp() string { return m.URL + " " + m.Security + " pockets" }

// Builds lists every haproxy binary build the mirror serves, newest first.
// The answer is kept until the package lists are next refreshed.
func (m *Mirror) Builds(ctx context.Context) ([]Build, error) {
	cache := filepath.Join(m.Dir, "builds.json")
	if fresh(cache, filepath.Join(m.Dir, "updated")) {
		var bs []Build
		if data, err := os.ReadFile(cache); err == nil && json.Unmarshal(data, &bs) == nil && len(bs) > 0 {
			return bs, nil
		}
	}
	out, err := m.apt(ctx, "apt-cache", "madison", Package)
	if err != nil {
		return nil, err
	}
	bs, err := sortBuilds(ctx, parseMadison(string(out), "Packages"))
	if err == nil {
		if data, e := json.Marshal(bs); e == nil {
			os.WriteFile(cache, data, 0o644)
		}
	}
	return bs, err
}

// fresh says whether path was written after stamp.
func fresh(path, stamp string) bool {
	a, err1 := os.Stat(path)
	b, err2 := os.Stat(stamp)
	return err1 == nil && err2 == nil && !a.ModTime().Before(b.ModTime())
}

// parseMadison reads `apt-cache madison` lines of the given index kind
// ("Packages" or "Sources"), e.g.
// " haproxy |    3.4.7-1 | http://.../debian experimental/main amd64 Packages".
func parseMadison(out, kind string) []Build {
	var bs []Build
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 || strings.TrimSpace(f[0]) != Package {
			continue
		}
		src := strings.Fields(f[2])
		if len(src) < 3 || src[len(src)-1] != kind {
			continue
		}
		dist, _, _ := strings.Cut(src[1], "/")
		b := Build{Version: strings.TrimSpace(f[1]), Release: dist}
		for _, pocket := range []string{"-security", "-updates"} {
			if release, ok := strings.CutSuffix(dist, pocket); ok {
				b.Release, b.Pocket = release, dist
			}
		}
		bs = append(bs, b)
	}
	return bs
}

func sortBuilds(ctx context.Context, bs []Build) ([]Build, error) {
	var err error
	sort.SliceStable(bs, func(i, j int) bool {
		gt, e := VersionGreater(ctx, bs[i].Version, bs[j].Version)
		if e != nil {
			err = e
		}
		return gt
	})
	return bs, err
}

// VersionGreater compares Debian versions as dpkg does.
func VersionGreater(ctx context.Context, a, b string) (bool, error) {
	_, err := child.Output(ctx, 30*time.Second, "dpkg", "--compare-versions", a, "gt", b)
	if err == nil {
		return true, nil
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return false, nil
	}
	return false, fmt.Errorf("dpkg --compare-versions: %w", err)
}

// Resolve turns a deb spec target (latest, a suite, a Debian version or an
// upstream version) into one build the mirror serves.
func (m *Mirror) Resolve(ctx context.Context, target string) (Build, error) {
	bs, err := m.Builds(ctx)
	if err != nil {
		return Build{}, err
	}
	if len(bs) == 0 {
		return Build{}, fmt.Errorf("the Debian mirror %s serves no %s package", m.URL, Package)
	}
	if b, ok := resolveIn(bs, target); ok {
		return b, nil
	}
	var served []string
	for _, b := range bs {
		served = append(served, b.Version+" ("+b.FromPocket()+")")
	}
	return Build{}, fmt.Errorf("deb:%s is not served by the Debian mirror; served: %s", target, strings.Join(served, ", "))
}

// resolveIn picks from bs (newest first) the build a target names: an
// exact Debian version, else the newest of "latest", a release (its
// -security and -updates pockets included, as apt on it would install)
// or an upstream version.
func resolveIn(bs []Build, target string) (Build, bool) {
	for _, b := range bs {
		if b.Version == target {
			return b, true
		}
	}
	for _, b := range bs {
		if target == "latest" || b.Release == target || b.Upstream() == target {
			return b, true
		}
	}
	return Build{}, false
}

// FetchOrig downloads the upstream tarball Debian serves for a source
// version (checked against its SHA-256) and returns its path.
func (m *Mirror) FetchOrig(ctx context.Context, version string) (string, error) {
	out, err := m.apt(ctx, "apt-get", "source", "--print-uris", Package+"="+version)
	if err != nil {
		return "", fmt.Errorf("no Debian source for haproxy %s: %w", version, err)
	}
	// 'URL' name size SHA256:hex
	re := regexp.MustCompile(`'([^']+)' (\S+\.orig\.tar\.\w+) \d+ SHA256:([0-9a-f]{64})`)
	mm := re.FindStringSubmatch(string(out))
	if mm == nil {
		return "", fmt.Errorf("Debian source for haproxy %s has no orig tarball:\n%s", version, tail(out, 10))
	}
	dest := filepath.Join(m.Dir, "src", mm[2])
	if sum, _ := FileSHA256(dest); sum == mm[3] {
		return dest, nil
	}
	done := progress.Start("downloading %s", mm[2])
	var o []byte
	for _, url := range m.origURLs(mm[1]) {
		if o, err = child.Output(ctx, 30*time.Minute, "/usr/lib/apt/apt-helper", append(m.aptOpts(), "download-file", url, dest, "SHA256:"+mm[3])...); err == nil {
			break
		}
		err = fmt.Errorf("downloading %s: %v\n%s", url, err, tail(o, 10))
	}
	done(err)
	return dest, err
}

// origURLs is where an orig tarball may be: where apt says, and for a
// security update also the main archive's pool, since the security
// archive keeps only what changed and every Debian revision of an upstream
// version shares its orig tarball (the SHA-256 is checked either way).
func (m *Mirror) origURLs(url string) []string {
	urls := []string{url}
	if rest, ok := strings.CutPrefix(url, m.Security+"/pool/updates/"); ok {
		urls = append(urls, m.URL+"/pool/"+rest)
	}
	return urls
}

// FileSHA256 is the hex SHA-256 of a file's contents.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func tail(b []byte, n int) string { return text.LastLines(string(b), n) }

// updateFailed gives the lines in which apt-get update said a fetch
// failed ("" when none did): those of the suites, and those of the
// -security and -updates pockets apart.
func updateFailed(out []byte) (suites, pockets string) {
	var bad, pocket []string
	for _, line := range strings.Split(string(out), "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "Err:") || strings.HasPrefix(l, "E: ") || strings.Contains(l, "Failed to fetch") || strings.Contains(l, "failed to download") {
			switch {
			case strings.Contains(l, "Some index files failed to download"):
				// a summary: the lines before say which
			case strings.Contains(l, "-security") || strings.Contains(l, "-updates"):
				pocket = append(pocket, l)
			default:
				bad = append(bad, l)
			}
		}
	}
	return strings.Join(bad, "\n"), strings.Join(pocket, "\n")
}
