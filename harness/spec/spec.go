// Package spec parses build specs: the strings a user writes to name an
// HAProxy build (HAPROXY=deb:..., src:..., bin:...).
package spec

import (
	"fmt"
	"strings"
)

// Scheme is the kind of build a spec names.
type Scheme string

const (
	Deb Scheme = "deb" // a Debian binary package from the mirror
	Src Scheme = "src" // a source tree or tarball, compiled here
	Bin Scheme = "bin" // a binary already on this machine
)

// DebSuites are the Debian suites harp knows how to turn into images.
var DebSuites = []string{"bookworm", "trixie", "sid", "experimental"}

// Spec is one parsed build spec.
type Spec struct {
	Raw    string
	Scheme Scheme
	// Deb: a suite name, "latest", an exact Debian version or an upstream
	// version (3.0.11). Src: a directory, a tarball, or "deb:<version>" for
	// the upstream tarball Debian serves for that version. Bin: a path.
	Target string
	// Src only: patches applied in order, and extra make variables.
	Patches []string
	Make    []string
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
	return b.String()
}

// IsSuite tells whether a deb target names a suite (or "latest").
func (s Spec) IsSuite() bool {
	if s.Target == "latest" {
		return true
	}
	for _, x := range DebSuites {
		if s.Target == x {
			return true
		}
	}
	return false
}

// Parse reads one spec. Forms:
//
//	deb:latest | deb:<suite> | deb:<debian-version> | deb:<upstream-version>
//	src:<dir|tarball|deb:VERSION>[,patch=FILE]...[,make=VAR=VALUE]...
//	bin:<path>
func Parse(raw string) (Spec, error) {
	raw = strings.TrimSpace(raw)
	scheme, rest, ok := strings.Cut(raw, ":")
	if !ok || rest == "" {
		return Spec{}, fmt.Errorf("build spec %q: want deb:<version|suite|latest>, src:<path>[,patch=FILE] or bin:<path>", raw)
	}
	s := Spec{Raw: raw, Scheme: Scheme(scheme)}
	switch s.Scheme {
	case Deb:
		if strings.ContainsAny(rest, ", /") {
			return Spec{}, fmt.Errorf("build spec %q: a deb spec is a suite (%s), latest, or a version", raw, strings.Join(DebSuites, ", "))
		}
		s.Target = rest
	case Bin:
		if strings.Contains(rest, ",") {
			return Spec{}, fmt.Errorf("build spec %q: bin takes a path and no options", raw)
		}
		s.Target = rest
	case Src:
		parts := strings.Split(rest, ",")
		s.Target = parts[0]
		if s.Target == "" {
			return Spec{}, fmt.Errorf("build spec %q: src needs a directory or tarball", raw)
		}
		for _, opt := range parts[1:] {
			k, v, _ := strings.Cut(opt, "=")
			switch {
			case k == "patch" && v != "":
				s.Patches = append(s.Patches, v)
			case k == "make" && strings.Contains(v, "="):
				s.Make = append(s.Make, v)
			default:
				return Spec{}, fmt.Errorf("build spec %q: unknown src option %q (want patch=FILE or make=VAR=VALUE)", raw, opt)
			}
		}
	default:
		return Spec{}, fmt.Errorf("build spec %q: unknown scheme %q (want deb, src or bin)", raw, scheme)
	}
	return s, nil
}

// ParseList reads several specs separated by whitespace or ';'.
func ParseList(raw string) ([]Spec, error) {
	fields := strings.FieldsFunc(raw, func(r rune) bool { return r == ';' || r == ' ' || r == '\n' || r == '\t' })
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
