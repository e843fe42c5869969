package suite

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Param is a knob a suite declares (threads, nodes, rates). Values come
// from `harp run --param NAME=VALUE`, or from make variables of the same
// name (`make test-cluster-partition NODES=5`); the runner checks them
// before any work and hands them to the suite in Env.Params.
type Param struct {
	Name    string // upper case, as the make variable: NODES
	Default string // "" when the suite derives it from other values
	Doc     string
	check   func(v string) error
}

// Check says whether v is a valid value.
func (p Param) Check(v string) error {
	if p.check == nil {
		return nil
	}
	if err := p.check(v); err != nil {
		return fmt.Errorf("%s=%q: %w", p.Name, v, err)
	}
	return nil
}

// Int declares a whole number from lo to hi.
func Int(name string, def, lo, hi int, doc string) Param {
	return Param{Name: name, Default: strconv.Itoa(def), Doc: doc, check: func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("want a whole number from %d to %d", lo, hi)
		}
		return nil
	}}
}

// Duration declares a positive Go duration ("15s", "100ms").
func Duration(name string, def time.Duration, doc string) Param {
	return Param{Name: name, Default: def.String(), Doc: doc, check: func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("want a positive duration such as 15s or 100ms")
		}
		return nil
	}}
}

// OneOf declares one of a few words.
func OneOf(name, def, doc string, allowed ...string) Param {
	return Param{Name: name, Default: def, Doc: doc, check: func(v string) error {
		for _, a := range allowed {
			if v == a {
				return nil
			}
		}
		return fmt.Errorf("want one of %s", strings.Join(allowed, ", "))
	}}
}

// Text declares a free-form value, checked by check when given (nil: any).
func Text(name, def, doc string, check func(string) error) Param {
	return Param{Name: name, Default: def, Doc: doc, check: check}
}

// Values are the parameters of one suite run, checked: every declared
// name is there (with its default when not given).
type Values struct {
	v     map[string]string
	given map[string]bool
}

// Has says whether the suite declares the parameter (a value, given or
// its default).
func (v Values) Has(name string) bool { _, ok := v.v[name]; return ok }

// Given says whether the user set the value (not the default).
func (v Values) Given(name string) bool { return v.given[name] }

// String is the value as given.
func (v Values) String(name string) string {
	s, ok := v.v[name]
	if !ok {
		panic("suite: parameter " + name + " is not declared by this suite")
	}
	return s
}

// Int is a declared Int parameter (0 when it is empty).
func (v Values) Int(name string) int {
	n, _ := strconv.Atoi(v.String(name))
	return n
}

// Duration is a declared Duration parameter.
func (v Values) Duration(name string) time.Duration {
	d, _ := time.ParseDuration(v.String(name))
	return d
}

// ValuesFor checks given values against a suite's parameters and fills in
// the defaults; names the suite does not declare are left out.
func ValuesFor(params []Param, given map[string]string) (Values, error) {
	v := Values{v: map[string]string{}, given: map[string]bool{}}
	for _, p := range params {
		v.v[p.Name] = p.Default
		if g, ok := given[p.Name]; ok {
			if err := p.Check(g); err != nil {
				return v, err
			}
			v.v[p.Name], v.given[p.Name] = g, true
		}
	}
	return v, nil
}

// CheckParams refuses, before any work, a value no selected suite
// declares (a typo would otherwise be ignored) or one a suite refuses.
func CheckParams(suites []*Suite, given map[string]string) error {
	declared := map[string]bool{}
	for _, s := range suites {
		if _, err := ValuesFor(s.Params, given); err != nil {
			return fmt.Errorf("suite %s: %w", s.ID, err)
		}
		for _, p := range s.Params {
			declared[p.Name] = true
		}
	}
	var unknown []string
	for name := range given {
		if !declared[name] {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		var known []string
		for name := range declared {
			known = append(known, name)
		}
		sort.Strings(known)
		if len(known) == 0 {
			return fmt.Errorf("parameter %s: the selected suites take no parameters", strings.Join(unknown, ", "))
		}
		return fmt.Errorf("parameter %s: no selected suite takes it (they take %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return nil
}

// ParseParams reads NAME=VALUE pairs.
func ParseParams(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range pairs {
		name, val, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--param %q: want NAME=VALUE", p)
		}
		out[name] = val
	}
	return out, nil
}

// FromEnv reads the suites' declared parameters from environment
// variables of the same names, as make passes its command-line variables
// (only when asked: `harp run --params-from-env`).
func FromEnv(suites []*Suite, lookup func(string) (string, bool)) map[string]string {
	out := map[string]string{}
	for _, s := range suites {
		for _, p := range s.Params {
			if v, ok := lookup(p.Name); ok && v != "" {
				out[p.Name] = v
			}
		}
	}
	return out
}

// NodesParam is the cluster size every cluster suite declares; the last
// node is the one a suite singles out.
var NodesParam = Int("NODES", 3, 3, 9, "nodes in the cluster (the last one is singled out)")
