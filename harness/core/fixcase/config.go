package fixcase

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Section is one top-level section of a config: its keyword, its name
// ("" for one without) and its whole text, header included.
type Section struct{ Kind, Name, Text string }

// Key names a section as HAProxy does: kind and name (a frontend and a
// backend may share a name).
func (s Section) Key() string { return strings.TrimSpace(s.Kind + " " + s.Name) }

var sectionStart = regexp.MustCompile(`(?m)^[a-z]`)

// SplitSections reads a case's `section` text: top-level sections only,
// neither global nor defaults (those are the shared part's, stated once).
func SplitSections(text string) ([]Section, error) {
	starts := sectionStart.FindAllStringIndex(text, -1)
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("no section")
	}
	if len(starts) == 0 || strings.TrimSpace(text[:starts[0][0]]) != "" {
		return nil, fmt.Errorf("lines before any section header (a header starts its line: `backend t`)")
	}
	var out []Section
	for i, s := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		body := strings.TrimRight(text[s[0]:end], "\n") + "\n"
		head := strings.Fields(strings.SplitN(body, "\n", 2)[0])
		sec := Section{Kind: head[0], Text: body}
		if len(head) > 1 {
			sec.Name = head[1]
		}
		if sec.Kind == "global" || sec.Kind == "defaults" {
			return nil, fmt.Errorf("%s is the shared part's (fixtures/upstream-fixes/shared.cfg), stated once", sec.Kind)
		}
		out = append(out, sec)
	}
	return out, nil
}

// PortRef is a named port in a case's config: ${PORT_name}.
var PortRef = regexp.MustCompile(`\$\{PORT_(\w+)\}`)

// PortNames are the ports a config text names, sorted, each once.
func PortNames(text string) []string {
	var names []string
	for _, m := range PortRef.FindAllStringSubmatch(text, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Number gives every port the cases name a number from first on, in the
// names' order: the same name is the same port in every suite, and Go
// code that reaches a case's frontend asks by its name.
func Number(cases []Case, first int) map[string]int {
	var names []string
	for _, c := range cases {
		names = append(names, PortNames(c.Sections+c.Node)...)
	}
	slices.Sort(names)
	ports := map[string]int{}
	for i, n := range slices.Compact(names) {
		ports[n] = first + i
	}
	return ports
}

// WithPorts puts the numbers in a config's named ports and lists them as
// a container's ports ("8081/tcp").
func WithPorts(text string, ports map[string]int) (string, []string, error) {
	var used []string
	for _, name := range PortNames(text) {
		n, ok := ports[name]
		if !ok {
			return "", nil, fmt.Errorf("port %s has no number", name)
		}
		used = append(used, strconv.Itoa(n)+"/tcp")
	}
	out := PortRef.ReplaceAllStringFunc(text, func(ref string) string {
		return strconv.Itoa(ports[PortRef.FindStringSubmatch(ref)[1]])
	})
	return out, used, nil
}

// NodeConfig is the shared node's config for a suite's cases: the shared
// part, then every case's sections once (in the cases' order), ports
// numbered; and the node's ports. Two cases that give one section
// different texts are an error: the node can hold only one.
func NodeConfig(shared string, cases []Case, ports map[string]int) (string, []string, error) {
	var b strings.Builder
	b.WriteString(strings.TrimRight(shared, "\n") + "\n")
	seen := map[string]Section{}
	owner := map[string]string{}
	for _, c := range cases {
		if c.Sections == "" {
			continue
		}
		secs, err := SplitSections(c.Sections)
		if err != nil {
			return "", nil, fmt.Errorf("case %s: %w", c.ID, err)
		}
		for _, s := range secs {
			if prev, ok := seen[s.Key()]; ok {
				if prev.Text != s.Text {
					return "", nil, fmt.Errorf("cases %s and %s give %s different texts: the shared node holds one", owner[s.Key()], c.ID, s.Key())
				}
				continue
			}
			seen[s.Key()], owner[s.Key()] = s, c.ID
			b.WriteString("\n" + s.Text)
		}
	}
	return WithPorts(b.String(), ports)
}

// ReachPort is the one port a case's sections name: where a connect, http or
// peer case reaches.
func (c Case) ReachPort() (string, error) {
	names := PortNames(c.Sections)
	if len(names) != 1 {
		return "", fmt.Errorf("case %s (kind %s) reaches one port of its sections; they name %d (%v)", c.ID, c.Kind, len(names), names)
	}
	return names[0], nil
}

// Peers is the one peers section among a case's sections.
func (c Case) Peers() (string, error) {
	secs, err := SplitSections(c.Sections)
	if err != nil {
		return "", fmt.Errorf("case %s: %w", c.ID, err)
	}
	var names []string
	for _, s := range secs {
		if s.Kind == "peers" {
			names = append(names, s.Name)
		}
	}
	if len(names) != 1 {
		return "", fmt.Errorf("case %s (kind %s) needs one peers section among its sections; it has %d", c.ID, c.Kind, len(names))
	}
	return names[0], nil
}
