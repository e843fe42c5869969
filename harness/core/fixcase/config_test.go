package fixcase

import (
	"strings"
	"testing"
)

const caseHead = "fix 0123456789ab\norder 1\ndoes d\nexpects e\nwhy w\n"

func TestSectionsParse(t *testing.T) {
	c, err := Parse("x/a.case", []byte(caseHead+"kind connect\nsection {\nfrontend f\n    bind \"0.0.0.0:${PORT_f}\"\n\nbackend b\n    mode tcp\n}\nsection {\nbackend t\n    stick-table type ip size 1k\n}\nwant anything\n"))
	if err != nil {
		t.Fatal(err)
	}
	secs, err := SplitSections(c.Sections)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, s := range secs {
		keys = append(keys, s.Key())
	}
	if got := strings.Join(keys, ","); got != "frontend f,backend b,backend t" {
		t.Errorf("sections %s", got)
	}
	if p, err := c.ReachPort(); p != "f" || err != nil {
		t.Errorf("reach port %q %v", p, err)
	}
}

func TestSectionsRefused(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"kind stats\nsend \"x\\n\"\nsection {\n    bind :1\n}\nwant anything\n", "lines before any section header"},
		{"kind stats\nsend \"x\\n\"\nsection {\nglobal\n    nbthread 2\n}\nwant anything\n", "shared part's"},
		{"kind stats\nsend \"x\\n\"\nsection {\n}\nwant anything\n", "no section"},
		{"kind connect\nwant anything\n", "reaches one port"},
		{"kind connect\nsection {\nfrontend a\n    bind \"0.0.0.0:${PORT_a}\"\n    bind \"0.0.0.0:${PORT_b}\"\n}\nwant anything\n", "they name 2"},
		{"kind peer-session\nsection {\nfrontend a\n    bind \"0.0.0.0:${PORT_a}\"\n}\nwant go\n", "one peers section"},
		{"kind stats\nsend \"x\\n\"\nsection {\nbackend t\n}\nnode {\nglobal\n}\nwant anything\n", "not both"},
	} {
		text := caseHead + c.text
		if strings.Contains(c.text, "want go") {
			text = strings.TrimSuffix(caseHead, "why w\n") + c.text
		}
		_, err := Parse("x/a.case", []byte(text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

func TestNodeConfig(t *testing.T) {
	parse := func(id, sections string) Case {
		c, err := Parse("x/"+id+".case", []byte(caseHead+"kind stats\nsend \"x\\n\"\n"+sections+"want anything\n"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a := parse("a", "section {\nfrontend f\n    bind \"0.0.0.0:${PORT_f}\"\n\nbackend t\n    stick-table type ip size 1k\n}\n")
	b := parse("b", "section {\nbackend t\n    stick-table type ip size 1k\n}\n")
	none := parse("c", "")
	ports := Number([]Case{a, b, none}, 8080)
	cfg, used, err := NodeConfig("global\n    nbthread 1\n", []Case{a, b, none}, ports)
	if err != nil {
		t.Fatal(err)
	}
	want := "global\n    nbthread 1\n\nfrontend f\n    bind \"0.0.0.0:8080\"\n\nbackend t\n    stick-table type ip size 1k\n"
	if cfg != want || len(used) != 1 || used[0] != "8080/tcp" {
		t.Errorf("got %q %v\nwant %q", cfg, used, want)
	}
	// One section, two texts: the node can hold only one.
	other := parse("d", "section {\nbackend t\n    stick-table type string size 1k\n}\n")
	if _, _, err := NodeConfig("", []Case{a, other}, ports); err == nil || !strings.Contains(err.Error(), "cases a and d give backend t different texts") {
		t.Errorf("conflict: %v", err)
	}
	if _, _, err := WithPorts("bind \"${PORT_zz}\"", ports); err == nil {
		t.Error("a port with no number must be an error")
	}
}
