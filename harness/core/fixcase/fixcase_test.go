package fixcase

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/harp-project/harp/fixtures"
)

const good = `# a comment
fix      0123456789ab
since    2.8
order    3
does     70 words
expects  refused

kind     stats
send     "show info" " x"*3 "\n"
send     "a\r\x00"
silent
times    5
apart    250ms
args     -W -c -f {cfg}
config {
global
.if defined(X)

.endif
}

want     lacks "Too many"
want     once "x"
why      it ran ({answer})
`

func TestParse(t *testing.T) {
	c, err := Parse("dir/cli-x.case", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "cli-x" || c.Order != 3 || c.Since != "2.8" || c.Kind != Stats || !c.Silent || c.Times != 5 || c.Apart != 250*time.Millisecond {
		t.Errorf("%+v", c)
	}
	if c.Send != "show info x x x\na\r\x00" {
		t.Errorf("send %q", c.Send)
	}
	if c.Config != "global\n.if defined(X)\n\n.endif\n" || strings.Join(c.Args, ",") != "-W,-c,-f,{cfg}" {
		t.Errorf("config %q args %q", c.Config, c.Args)
	}
	if ok, why, _ := c.Rule.Eval("x"); !ok || why != `it ran (x) ("x" printed 1 times)` {
		t.Errorf("Eval(x) = %v %q", ok, why)
	}
	if ok, _, _ := c.Rule.Eval("Too many x"); ok {
		t.Error("Eval(Too many x) held")
	}
}

func TestRuleTerms(t *testing.T) {
	for _, c := range []struct {
		want, answer string
		ok           bool
	}{
		{`is "a"`, "a", true}, {`is "a"`, "ab", false},
		{`contains "b"`, "abc", true}, {`lacks "b"`, "abc", false},
		{`starts-with "exit 0"`, "exit 0\n", true}, {`not-starts-with "exit 0"`, "exit 0\n", false},
		{"matches `\\[\\d\\]: `", "[3]: no", true}, {"matches `\\[\\d\\]: `", "[x]: no", false},
		{`once "a"`, "aa", false}, {`no-line "]"`, "a\n  ]\n", false}, {`no-line "]"`, "a]\n", true},
		{`then-lacks "key="`, "key=1" + ThenMark + "none", true}, {`then-lacks "key="`, ThenMark + "key=1", false},
		{"anything", "", true},
	} {
		p, err := Parse("x.case", []byte("fix f\norder 1\ndoes d\nexpects e\nkind stats\nwant "+c.want+"\nwhy w\n"))
		if err != nil {
			t.Fatal(err)
		}
		if ok, _, err := p.Rule.Eval(c.answer); ok != c.ok || err != nil {
			t.Errorf("want %s on %q: %v %v", c.want, c.answer, ok, err)
		}
	}
}

// A once term whose text never printed decides nothing: a build that
// does not print it (one without USE_DL, for the library list) is not
// printing it twice (f084f4d called it the double print).
func TestOnceNeverPrintedIsUnknown(t *testing.T) {
	p, err := Parse("x.case", []byte("fix f\norder 1\ndoes d\nexpects e\nkind exec\nwant once \"List of loaded object files:\"\nwhy w\n"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := p.Rule.Eval("exit 1\n[NOTICE] ...\n"); ok || err == nil || !strings.Contains(err.Error(), "never printed") {
		t.Errorf("printed 0 times: %v %v", ok, err)
	}
}

// needs names a capability of the build; an unknown one is refused.
func TestNeeds(t *testing.T) {
	head := "fix f\norder 1\ndoes d\nexpects e\nkind exec\nwant anything\n"
	c, err := Parse("x.case", []byte(head+"needs dump-libs threads\n"))
	if err != nil || strings.Join(c.Needs, ",") != "dump-libs,threads" {
		t.Errorf("%+v %v", c.Needs, err)
	}
	if _, err := Parse("x.case", []byte(head+"needs libc\n")); err == nil || !strings.Contains(err.Error(), `no capability "libc"`) {
		t.Errorf("an unknown capability: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	head := "fix f\norder 1\ndoes d\nexpects e\n"
	for _, c := range []struct{ text, err string }{
		{head + "kind stats\nsend show info\nwant anything\n", "x.case:6: send: want a double-quoted string"},
		{head + "kind stats\nsend \"x\"*0\nwant anything\n", "x.case:6: send: *0: not a count"},
		{head + "kind nosuch\n", "x.case:5: no kind \"nosuch\""},
		{head + "kind stats\nfix g\n", "x.case:6: fix given twice"},
		{head + "kind stats\nfrobnicate 1\n", "x.case:6: unknown key \"frobnicate\""},
		{head + "kind stats\nsilent yes\n", "x.case:6: silent is a flag"},
		{head + "kind exec\nconfig {\nglobal\n", "x.case:6: block config never ends"},
		{head + "kind stats\nwant contains x\n", "x.case:6: want: contains: want one Go-quoted argument"},
		{head + "kind stats\nwant matches \"(\"\n", "x.case:6: want: matches:"},
		{head + "kind stats\nwant frob \"x\"\n", "x.case:6: want: no term \"frob\""},
		{head + "kind stats\nwant lacks \"x\"\n", "x.case:6: no why"},
		{head + "kind stats\n", "x.case:5: no want"},
		{head + "kind stats\nwant go\nwhy w\n", "want go takes neither"},
		{"order 1\ndoes d\nexpects e\nkind stats\nwant anything\n", "x.case:5: no fix"},
		{"fix f\norder x\n", "x.case:2: order: \"x\" is not a positive number"},
		{head + "kind stats\napart soon\n", "x.case:6: apart: \"soon\" is not a positive duration"},
	} {
		_, err := Parse("x.case", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.err)
		}
	}
}

func TestLoad(t *testing.T) {
	one := func(order string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("fix f\norder " + order + "\ndoes d\nexpects e\nkind stats\nwant anything\n")}
	}
	cs, err := Load(fstest.MapFS{"d/b.case": one("1"), "d/a.case": one("2"), "d/c.txt": one("3")}, "d")
	if err != nil || len(cs) != 2 || cs[0].ID != "b" || cs[1].ID != "a" {
		t.Errorf("%+v %v", cs, err)
	}
	if _, err := Load(fstest.MapFS{"d/b.case": one("1"), "d/a.case": one("1")}, "d"); err == nil || !strings.Contains(err.Error(), "both order 1") {
		t.Errorf("same order: %v", err)
	}
	if _, err := Load(fstest.MapFS{"d/a.case": {Data: []byte("fix f\nnope\n")}}, "d"); err == nil || !strings.Contains(err.Error(), "d/a.case:2:") {
		t.Errorf("a bad file: %v", err)
	}
}

func TestThenFinalFlag(t *testing.T) {
	c, err := Parse("x.case", []byte("fix f\norder 1\ndoes d\nexpects e\nkind stats\nthen show table tip\nthen-final\nwant then-lacks \"key=\"\nwhy w\n"))
	if err != nil || !c.ThenFinal || c.Then != "show table tip" {
		t.Errorf("%+v %v", c, err)
	}
}

// {n} numbers the copies of a repeated string: one line gives what fifty
// did (cli-pipelined-then-close-all-run's pipeline).
func TestBytesCopyNumber(t *testing.T) {
	got, err := Bytes(`"set k{n}; "*3 "end\n"`)
	if err != nil || got != "set k1; set k2; set k3; end\n" {
		t.Errorf("%q %v", got, err)
	}
	c, err := Load(fixtures.UpstreamFixes, "upstream-fixes/cli")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := 1; i <= 50; i++ {
		sep := "; "
		if i == 50 {
			sep = "\n"
		}
		fmt.Fprintf(&want, "set table tpipe key 10.{try}.0.%d data.gpc0 1%s", i, sep)
	}
	for _, cs := range c {
		if cs.ID == "cli-pipelined-then-close-all-run" && cs.Send != want.String() {
			t.Errorf("the pipeline changed: %q", cs.Send)
		}
	}
}
