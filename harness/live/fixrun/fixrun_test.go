package fixrun

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/harp-project/harp/fixtures"
	"github.com/harp-project/harp/harness/core/fixcase"
	"github.com/harp-project/harp/harness/live/cli"
	"github.com/harp-project/harp/harness/live/node"
)

func TestAreaCheck(t *testing.T) {
	steps := fixcase.Judged{Case: fixcase.Case{ID: "s", Kind: fixcase.Steps}}
	stats := fixcase.Judged{Case: fixcase.Case{ID: "t", Kind: fixcase.Stats}}
	drive := func(context.Context, *node.Node) (string, error) { return "", nil }
	for _, c := range []struct {
		a   Area
		err string
	}{
		{Area{Cases: []fixcase.Judged{steps, stats}, Drives: map[string]Drive{"s": drive}}, ""},
		{Area{Cases: []fixcase.Judged{steps}}, "case s (kind steps): a drive false"},
		{Area{Cases: []fixcase.Judged{stats}, Drives: map[string]Drive{"t": drive}}, "case t (kind stats): a drive true"},
		{Area{Cases: []fixcase.Judged{steps}, Drives: map[string]Drive{"s": drive, "x": drive}}, "Go code for x"},
	} {
		err := c.a.check()
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%+v: %v, want %q", c.a, err, c.err)
		}
	}
}

// Harp's failures are never a case's answer (f084f4d gave "" for an
// empty close, a silence and an answer cut by its deadline, and judged
// it: 5 cases REPRODUCED and 4 `lacks` cases PASS on an empty close).
func TestAnswer(t *testing.T) {
	cut := fmt.Errorf("the answer was cut: %w", cli.ErrCut)
	for _, c := range []struct {
		name   string
		r      cli.Reply
		err    error
		silent bool
		want   string
		fails  string
	}{
		{"closed after words", cli.Reply{Text: "Pid: 7\n", Closed: true}, nil, false, "Pid: 7\n", ""},
		{"quiet after words (master CLI)", cli.Reply{Text: "Can't find\n", Quiet: true}, nil, false, "Can't find\n", ""},
		{"an empty close where words are expected", cli.Reply{Closed: true}, nil, false, "", "closed the connection without a byte"},
		{"an empty close of a silent case", cli.Reply{Closed: true}, nil, true, "", ""},
		{"quiet without a byte, silent case", cli.Reply{Quiet: true}, nil, true, "", ""},
		{"quiet without a byte, words expected", cli.Reply{Quiet: true}, nil, false, "", "no byte while it answered the control"},
		{"cut by harp's deadline", cli.Reply{Text: "Pid: 7\nUptime"}, cut, false, "", "cut"},
		{"silence harp could not prove", cli.Reply{}, cli.ErrNoAnswer, true, "", "silence"},
		{"an abort: nothing to judge but what follows", cli.Reply{Aborted: true}, nil, false, "", ""},
	} {
		got, err := Answer(c.r, c.err, c.silent)
		if got != c.want || (err == nil) != (c.fails == "") || (err != nil && !strings.Contains(err.Error(), c.fails)) {
			t.Errorf("%s: %q, %v", c.name, got, err)
		}
	}
}

// A setup's `set table` commands are read back, each.
func TestSetTables(t *testing.T) {
	got := SetTables("set table tstr key a data.gpc0 42\nexpert-mode on; set table t2 key 10.0.0.1 data.gpt0 1;show info\n")
	want := []Write{{"tstr", "a", "gpc0", "42"}, {"t2", "10.0.0.1", "gpt0", "1"}}
	if !slices.Equal(got, want) {
		t.Errorf("%+v", got)
	}
}

// fakeStats answers a setup with reply and every show table with table.
type fakeStats struct {
	reply cli.Reply
	err   error
	table string
}

func (f fakeStats) Raw(context.Context, string, string, cli.RawOptions) (cli.Reply, error) {
	return f.reply, f.err
}
func (f fakeStats) Stats(context.Context, string) (string, error) { return f.table, nil }

// A setup is checked: f084f4d discarded the answer to `set table tstr key
// a data.gpc0 42` and never read it back, so a setup that did not take
// let a buggy build pass.
func TestSetupChecked(t *testing.T) {
	const set = "set table tstr key a data.gpc0 42\n"
	took := "# table: tstr, type: string, size:1024, used:1\n0x1: key=a use=0 exp=0 gpc0=42\n\n"
	for _, c := range []struct {
		name  string
		f     fakeStats
		fails string
	}{
		{"took", fakeStats{reply: cli.Reply{Text: "\n", Closed: true}, table: took}, ""},
		{"refused", fakeStats{reply: cli.Reply{Text: "Unknown command\n", Closed: true}, table: took}, "did not take: HAProxy said"},
		{"not read back", fakeStats{reply: cli.Reply{Text: "\n", Closed: true}, table: "# table: tstr, type: string, size:1024, used:0\n\n"}, "did not take: show table says"},
		{"cut", fakeStats{reply: cli.Reply{Text: "\n"}}, "no whole answer"},
		{"harp's failure", fakeStats{err: cli.ErrNoAnswer}, "silence"},
	} {
		err := Setup(context.Background(), c.f, set)
		if (err == nil) != (c.fails == "") || (err != nil && !strings.Contains(err.Error(), c.fails)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// Every suite's shared node holds the shared part and its cases' sections
// once, every named port numbered below the stats and master sockets.
func TestEveryAreaHasANodeConfig(t *testing.T) {
	dirs, err := fs.ReadDir(fixtures.UpstreamFixes, "upstream-fixes")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		cs, err := fixcase.Load(fixtures.UpstreamFixes, path.Join("upstream-fixes", d.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var a Area
		for _, c := range cs {
			a.Cases = append(a.Cases, fixcase.Judged{Case: c})
		}
		cfg, ports, err := a.nodeConfig()
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		if !strings.HasPrefix(cfg, fixtures.UpstreamFixesShared) || strings.Contains(cfg, "${PORT_") {
			t.Errorf("%s: config\n%s", d.Name(), cfg)
		}
		for _, p := range ports {
			if n, _ := strconv.Atoi(strings.TrimSuffix(p, "/tcp")); n < firstPort || n >= 9997 {
				t.Errorf("%s: port %s", d.Name(), p)
			}
		}
	}
	for _, name := range []string{"limited", "nul", "held", "www"} { // what the suites' Go code asks for
		if Port(name) == "" {
			t.Errorf("no port %s", name)
		}
	}
}
