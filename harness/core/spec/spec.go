// Package spec parses build specs: the strings a user writes to name an
// HAProxy build (HAPROXY=deb:..., src:..., bin:...).
package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Scheme is the kind of build a spec names.
type Scheme string

const (
	Deb   Scheme = "deb"   // a Debian binary package from the mirror
	Src   Scheme = "src"   // a source tree or tarball, compiled here
	Bin   Scheme = "bin"   // a binary already on this machine
	Git   Scheme = "git"   // a commit of a local git clone, compiled here
	Image Scheme = "image" // a container image, local or pulled
)

// DebReleases are the Debian releases (Debian calls them suites) harp knows how to turn into images.
var DebReleases = []string{"bookworm", "trixie", "sid", "experimental"}

// Spec is one parsed build spec.
type Spec struct {
	Raw    string
	Scheme Scheme
	// Deb: a suite name, "latest", an exact Debian version or an upstream
	// version (3.0.11). Src: a directory, a tarball, or "deb:<version>" for
	// the upstream tarball Debian serves for that version. Bin: a path.
	Target string
	// Src and git: patches applied in order, and extra make variables.
	Patches []string
	Make    []string
	// Src from a URL: the tarball's expected sha256 ("" checks nothing).
	SHA256 string
	// Git: the clone and the ref (Target is REPO@REF); a range A..B of
	// release tags names several builds (Expand).
	Repo, Ref string
	// Image: where haproxy is in the image ("" looks for it).
	BinPath string
	// Src and git: the build flavour ("" is minimal).
	Flavor Flavor
}

// Flavor is how a source build is compiled.
type Flavor string

const (
	// Minimal: TARGET=linux-glibc and HAProxy's default features.
	Minimal Flavor = "minimal"
	// Full: the features distributions build (OpenSSL, Lua, PCRE2 with
	// JIT, the Prometheus exporter, zlib).
	Full Flavor = "full"
	// ASan: AddressSanitizer and HAProxy's strict debug checks, as
	// HAProxy's own CI builds it (-O1, DEBUG_STRICT=2), on the minimal
	// features.
	ASan Flavor = "asan"
	// NoThreads: the minimal features without thread support (USE_THREAD=),
	// the build some embedded users run and whose single-threaded paths
	// (#ifndef USE_THREAD) no threaded build takes.
	NoThreads Flavor = "nothreads"
)

// Flavors are the flavours a src: or git: spec may ask for.
var Flavors = []Flavor{Minimal, Full, ASan, NoThreads}

// FlavorOrDefault is the spec's flavour, minimal when none was given.
func (s Spec) FlavorOrDefault() Flavor {
	if s.Flavor == "" {
		return Minimal
	}
	return s.Flavor
}

// IsURL says whether a src target is a tarball to download.
func (s Spec) IsURL() bool {
	return s.Scheme == Src && (strings.HasPrefix(s.Target, "http://") || strings.HasPrefix(s.Target, "https://"))
}

// Range gives the ends of a git: range of release tags (ok false for one ref).
func (s Spec) Range() (from, to string, ok bool) {
	if s.Scheme != Git {
		return "", "", false
	}
	return strings.Cut(s.Ref, "..")
}

// String gives the spec back in its canonical form.
func (s Spec) String() string {
	var b strings.Builder
	b.WriteString(string(s.Scheme) + ":" + s.Target)
	for _, p := range s.Patches {
		b.WriteString(",patch=" + p)
	}
	for _, m := range s.Make {
		b.WriteString(",make=" + m)
	}
	if s.SHA256 != "" {
		b.WriteString(",sha256=" + s.SHA256)
	}
	if s.BinPath != "" {
		b.WriteString(",bin=" + s.BinPath)
	}
	if s.Flavor != "" {
		b.WriteString(",flavor=" + string(s.Flavor))
	}
	return b.String()
}

// IsRelease tells whether a deb target names a release (or "latest").
func (s Spec) IsRelease() bool {
	if s.Target == "latest" {
		return true
	}
	for _, x := range DebReleases {
		if s.Target == x {
			return true
		}
	}
	return false
}

// Parse reads one spec. Forms:
//
//	deb:latest | deb:<release> | deb:<debian-version> | deb:<upstream-version>
//	src:<dir|tarball|deb:VERSION>[,patch=FILE]...[,make=VAR=VALUE]...[,flavor=minimal|full|asan|nothreads]
//	src:<http(s) URL of a tarball>[,sha256=HEX][,patch=FILE]...[,make=VAR=VALUE]...[,flavor=...]
//	git:<clone>@<ref>[,patch=FILE]...[,make=VAR=VALUE]...[,flavor=...]  (~ is $HOME)
//	git:<clone>@<vX.Y.Z>..<vX.Y.Z>  (the release tags between, for matrix)
//	image:<reference>[,bin=/path/in/image]  (a local image, else pulled)
//	bin:<path>
func Parse(raw string) (Spec, error) {
	raw = strings.TrimSpace(raw)
	scheme, rest, ok := strings.Cut(raw, ":")
	if !ok || rest == "" {
		return Spec{}, fmt.Errorf("build spec %q: want deb:<version|suite|latest>, src:<path|URL>[,patch=FILE], git:<clone>@<ref>, image:<ref> or bin:<path>", raw)
	}
	s := Spec{Raw: raw, Scheme: Scheme(scheme)}
	switch s.Scheme {
	case Deb:
		if strings.ContainsAny(rest, ", /") {
			return Spec{}, fmt.Errorf("build spec %q: a deb spec is a Debian release (%s), latest, or a version", raw, strings.Join(DebReleases, ", "))
		}
		s.Target = rest
	case Image:
		parts := strings.Split(rest, ",")
		s.Target = parts[0]
		for _, opt := range parts[1:] {
			if v, ok := strings.CutPrefix(opt, "bin="); ok && strings.HasPrefix(v, "/") {
				s.BinPath = v
				continue
			}
			return Spec{}, fmt.Errorf("build spec %q: unknown image option %q (want bin=/path/in/image)", raw, opt)
		}
	case Bin:
		if strings.Contains(rest, ",") {
			return Spec{}, fmt.Errorf("build spec %q: bin takes a path and no options", raw)
		}
		s.Target = rest
	case Src, Git:
		parts := strings.Split(rest, ",")
		s.Target = parts[0]
		if s.Target == "" {
			return Spec{}, fmt.Errorf("build spec %q: %s needs %s", raw, scheme, map[Scheme]string{Src: "a directory, tarball or URL", Git: "a clone and a ref (git:~/haproxy@v3.0.0)"}[s.Scheme])
		}
		for _, opt := range parts[1:] {
			k, v, _ := strings.Cut(opt, "=")
			switch {
			case k == "patch" && v != "":
				s.Patches = append(s.Patches, v)
			case k == "make" && strings.Contains(v, "="):
				s.Make = append(s.Make, v)
			case k == "flavor" || k == "flavour":
				if !slices.Contains(Flavors, Flavor(v)) {
					return Spec{}, fmt.Errorf("build spec %q: flavor=%s: want minimal, full, asan or nothreads", raw, v)
				}
				if Flavor(v) != Minimal { // the default: the same build, the same name
					s.Flavor = Flavor(v)
				}
			case k == "sha256" && s.IsURL():
				if !sha256Hex.MatchString(v) {
					return Spec{}, fmt.Errorf("build spec %q: sha256=%s is not 64 hexadecimal digits", raw, v)
				}
				s.SHA256 = strings.ToLower(v)
			default:
				want := "patch=FILE, make=VAR=VALUE or flavor=minimal|full|asan|nothreads"
				if s.IsURL() {
					want += " or sha256=HEX"
				}
				return Spec{}, fmt.Errorf("build spec %q: unknown %s option %q (want %s)", raw, scheme, opt, want)
			}
		}
		if s.Scheme == Git {
			if err := s.parseGit(raw); err != nil {
				return Spec{}, err
			}
		}
	default:
		return Spec{}, fmt.Errorf("build spec %q: unknown scheme %q (want deb, src, git, image or bin)", raw, scheme)
	}
	return s, nil
}

var sha256Hex = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)

// parseGit splits git:REPO@REF; the ref is after the last @ (a path may
// hold one, a ref may not start with one).
func (s *Spec) parseGit(raw string) error {
	i := strings.LastIndex(s.Target, "@")
	if i <= 0 || i == len(s.Target)-1 {
		return fmt.Errorf("build spec %q: git needs a clone and a ref: git:~/haproxy@v3.0.0, git:~/haproxy@HEAD~3", raw)
	}
	s.Repo, s.Ref = s.Target[:i], s.Target[i+1:]
	if rest, ok := strings.CutPrefix(s.Repo, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			s.Repo = filepath.Join(home, rest)
		}
	}
	if from, to, ok := s.Range(); ok && (from == "" || to == "" || len(s.Patches)+len(s.Make) > 0) {
		return fmt.Errorf("build spec %q: a range is git:<clone>@<vX.Y.Z>..<vX.Y.Z>, without options", raw)
	}
	return nil
}

// ParseList reads several specs separated by whitespace, or, when the list
// holds a ';' or a newline, separated by those only (so that paths with
// spaces can be given: "src:/my builds/haproxy;deb:trixie").
func ParseList(raw string) ([]Spec, error) {
	sep := func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == ';' }
	if strings.ContainsAny(raw, ";\n") {
		sep = func(r rune) bool { return r == ';' || r == '\n' }
	}
	var fields []string
	for _, f := range strings.FieldsFunc(raw, sep) {
		if f = strings.TrimSpace(f); f != "" {
			fields = append(fields, f)
		}
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("no build spec given")
	}
	var out []Spec
	for _, f := range fields {
		s, err := Parse(f)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Check looks at what a spec names on this machine before any work: a
// source directory must be an HAProxy tree (never hashed or copied
// otherwise: src:/ must not fill the disk), a tarball and every patch must
// exist, a binary must be an executable file.
func (s Spec) Check() error {
	for _, p := range s.Patches {
		if err := CheckPatch(p); err != nil {
			return fmt.Errorf("build spec %q: %w", s.Raw, err)
		}
	}
	switch {
	case s.IsURL():
	case s.Scheme == Git:
		if st, err := os.Stat(s.Repo); err != nil || !st.IsDir() {
			return fmt.Errorf("build spec %q: %s: no such clone", s.Raw, s.Repo)
		}
	case s.Scheme == Src && !strings.HasPrefix(s.Target, "deb:"):
		st, err := os.Stat(s.Target)
		if err != nil {
			return fmt.Errorf("build spec %q: %v", s.Raw, err)
		}
		if st.IsDir() {
			return HAProxyTree(s.Target)
		}
	case s.Scheme == Bin:
		st, err := os.Stat(s.Target)
		if err != nil {
			return fmt.Errorf("build spec %q: %v", s.Raw, err)
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("build spec %q: %s is not an executable file", s.Raw, s.Target)
		}
	}
	return nil
}

// MaxPatch bounds a patch file: patches are hashed and read whole.
const MaxPatch = 16 << 20

// CheckPatch says whether a patch is a regular file of at most MaxPatch
// bytes: a device (/dev/zero) or a FIFO would block or never end when
// hashed, and nothing would interrupt that read.
func CheckPatch(p string) error {
	st, err := os.Stat(p)
	switch {
	case err != nil || st.IsDir():
		return fmt.Errorf("patch file %s: %v", p, orNotFile(err))
	case !st.Mode().IsRegular():
		return fmt.Errorf("patch file %s: not a regular file (%s)", p, kind(st.Mode()))
	case st.Size() > MaxPatch:
		return fmt.Errorf("patch file %s: %d bytes, larger than %d MiB: not a patch", p, st.Size(), MaxPatch>>20)
	}
	return nil
}

// kind names what a path that is not a regular file is.
func kind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.Type().String()
}

func orNotFile(err error) error {
	if err == nil {
		return fmt.Errorf("a directory, not a file")
	}
	return err
}

// HAProxyTree says whether dir looks like an HAProxy source tree:
// src/haproxy.c, a Makefile, and a VERSION file or a git work tree.
func HAProxyTree(dir string) error {
	has := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
	if !has("src/haproxy.c") || !has("Makefile") || !(has("VERSION") || has(".git")) {
		return fmt.Errorf("%s is not an HAProxy source tree (no src/haproxy.c, Makefile and VERSION or .git)", dir)
	}
	return nil
}

// CheckAll checks every spec of a list.
func CheckAll(specs []Spec) error {
	for _, s := range specs {
		if err := s.Check(); err != nil {
			return err
		}
	}
	return nil
}
