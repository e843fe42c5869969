// Package spec parses build specs: the strings a user writes to name an
// HAProxy build (HAPROXY=deb:..., src:..., bin:...).
package spec

import (
	"fmt"
	"os"
	"path/filepath"
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
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			return fmt.Errorf("build spec %q: patch file %s: %v", s.Raw, p, orNotFile(err))
		}
	}
	switch {
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
