package judge

import (
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

var (
	kept, absent = obs.Value(Marker{Present: true, GPC0: "1"}), obs.Value(Marker{})
	unread       = obs.Failure[Marker]("show table first/marker: i/o timeout")
	noExits      = obs.Value([]cliout.WorkerExit(nil))
)

func both(first, second obs.Of[Marker]) map[string]obs.Of[Marker] {
	return map[string]obs.Of[Marker]{"first/marker": first, "second/marker": second}
}

func exits(e ...cliout.WorkerExit) obs.Of[[]cliout.WorkerExit] { return obs.Value(e) }

// How one round is judged from what it observed; no HAProxy needed. The
// verdict is the one rule's too: a read harp failed to make is never a
// violation.
func TestJudge(t *testing.T) {
	segv := cliout.WorkerExit{PID: 8, Code: 139, Reason: "Segmentation fault"}
	for _, c := range []struct {
		name                     string
		f                        Facts
		violation, unmet, remark string
		want                     verdict.Verdict
	}{
		{"both markers kept: held", Facts{OldExited: true, Markers: both(kept, kept)}, "", "", "", verdict.Pass},
		{"one section not taught: the issue", Facts{OldExited: true, Markers: both(absent, kept)}, "first/marker lost", "", "", verdict.Reproduced},
		{"a wrong value is a violation too", Facts{OldExited: true, Markers: both(obs.Value(Marker{Present: true, GPC0: "0"}), kept)}, "first/marker gpc0=0 (want 1)", "", "", verdict.Reproduced},
		{"every marker lost is not this issue's signature", Facts{OldExited: true, Markers: both(absent, absent)},
			"", "every marker lost: the old process taught no section, which is not this issue's signature", "", verdict.Inconclusive},
		{"a marker table never read is never a pass", Facts{OldExited: true, Markers: map[string]obs.Of[Marker]{"second/marker": kept}},
			"", "after reload: only 1 of 2 marker tables were read", "", verdict.Inconclusive},
		{"an old worker that never left cannot be judged", Facts{Markers: both(absent, kept)},
			"", "old worker 8 still running 20s after SIGUSR2: how it ended cannot be judged", "", verdict.Inconclusive},
		{"a crash with a loss: cannot tell which", Facts{OldExited: true, Exits: exits(segv), Markers: both(absent, kept)},
			"", "old worker 8 exited with code 139 (Segmentation fault) during soft-stop, and first/marker lost: the loss may come from the crash", "", verdict.Inconclusive},
		{"a crash after teaching everything: a remark", Facts{OldExited: true, Exits: exits(segv), Markers: both(kept, kept)},
			"", "", "old worker crashed after teaching its tables", verdict.Pass},
		{"the current worker died", Facts{OldExited: true, Exits: exits(cliout.WorkerExit{PID: 9, Code: 134, Reason: "Aborted", Current: true}), Markers: both(kept, kept)},
			"", "current worker 9 exited with code 134 (Aborted)", "", verdict.Inconclusive},
		{"many sections (SECTIONS=10): a count of the lost tables", func() Facts {
			f := Facts{OldExited: true, Tables: TablesFor(10), Markers: map[string]obs.Of[Marker]{}}
			for _, t := range TablesFor(10) {
				f.Markers[t] = absent
			}
			f.Markers["first/marker"] = kept
			return f
		}(), "9 of 10 marker tables lost (s10/marker, s3/marker, s4/marker, ...)", "", "", verdict.Reproduced},
		{"many sections, one never read", Facts{OldExited: true, Tables: TablesFor(3), Markers: both(kept, kept)},
			"", "after reload: only 2 of 3 marker tables were read", "", verdict.Inconclusive},
		// Harness faults: unknown, never a violation (today's code read an
		// unreadable master log as a current worker that died).
		{"a table that cannot be read is never a pass", Facts{OldExited: true, Markers: both(unread, kept)}, "", "", "", verdict.Inconclusive},
		{"a table that cannot be read beside a lost one is never reproduced", Facts{OldExited: true, Markers: both(absent, unread)}, "first/marker lost", "", "", verdict.Inconclusive},
		{"an unread master log may hide a crash", Facts{OldExited: true, Exits: obs.Failure[[]cliout.WorkerExit]("docker logs: context deadline exceeded"), Markers: both(absent, kept)},
			"first/marker lost", "", "", verdict.Inconclusive},
	} {
		c.f.OldPID = 8
		if c.f.Exits.State == "" {
			c.f.Exits = noExits
		}
		v, u, r := Round(c.f)
		if v != c.violation || u != c.unmet || r != c.remark {
			t.Errorf("%s:\n got  %q, %q, %q\n want %q, %q, %q", c.name, v, u, r, c.violation, c.unmet, c.remark)
		}
		tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Remark: r, Evidence: &c.f}
		if got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "reloads"); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, reason, c.want)
		}
	}
}

// What a round whose new worker never finished its resync still says.
func TestWeak(t *testing.T) {
	for _, c := range []struct {
		name string
		f    Facts
		want string
	}{
		{"one section taught, the other not: the asymmetry", Facts{OldExited: true, Exits: noExits, Markers: both(kept, absent)},
			"first/marker held and second/marker lost although the resync never finished"},
		{"both held: no lead (never a pass either)", Facts{OldExited: true, Exits: noExits, Markers: both(kept, kept)}, ""},
		{"both lost: not the signature", Facts{OldExited: true, Exits: noExits, Markers: both(absent, absent)}, ""},
		{"a wrong value says nothing", Facts{OldExited: true, Exits: noExits, Markers: both(obs.Value(Marker{Present: true, GPC0: "0"}), absent)}, ""},
		{"an unreadable table says nothing", Facts{OldExited: true, Exits: noExits, Markers: both(unread, absent)}, ""},
		{"an unread master log says nothing", Facts{OldExited: true, Exits: obs.Failure[[]cliout.WorkerExit]("EOF"), Markers: both(kept, absent)}, ""},
		{"the old worker still there: nothing taught yet", Facts{Exits: noExits, Markers: both(kept, absent)}, ""},
		{"the old worker crashed: the loss may be the crash's", Facts{OldExited: true, Exits: exits(cliout.WorkerExit{PID: 8, Code: 139}), Markers: both(kept, absent)}, ""},
	} {
		c.f.OldPID = 8
		if got := Weak(c.f); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSections(t *testing.T) {
	if got := strings.Join(Sections(4), " "); got != "first second s3 s4" {
		t.Errorf("Sections(4) = %s", got)
	}
}

// A marker harp did not see is never one that held, whatever reason its
// failed read carries: the precondition on the old worker reads Bad too.
func TestBadUnseen(t *testing.T) {
	for _, m := range []obs.Of[Marker]{{}, obs.Failure[Marker](""), obs.Failure[Marker]("timeout"), {State: obs.Refused}} {
		if Bad(m) == "" {
			t.Errorf("Bad(%+v) is empty: an unseen marker would count as held", m)
		}
	}
	if got := Bad(obs.Value(Marker{Present: true, GPC0: "1"})); got != "" {
		t.Errorf("the marker set: Bad = %q", got)
	}
}

// The information limit: the old worker gone and every table read decide
// the round at once; otherwise the round waits for the new worker's
// resync.
func TestDecided(t *testing.T) {
	for _, c := range []struct {
		name string
		f    Facts
		want bool
	}{
		{"old gone, both held: PASS is certain", Facts{OldExited: true, Markers: both(kept, kept)}, true},
		{"old gone, one absent: the loss is certain", Facts{OldExited: true, Markers: both(absent, kept)}, true},
		{"old still there: it may still teach", Facts{Markers: both(absent, kept)}, false},
		{"a table not read: wait and read again", Facts{OldExited: true, Markers: both(unread, kept)}, false},
		{"a table missing from the facts", Facts{OldExited: true, Markers: map[string]obs.Of[Marker]{"first/marker": kept}}, false},
		{"three sections, two read", Facts{OldExited: true, Tables: TablesFor(3), Markers: both(kept, kept)}, false},
	} {
		if got := Decided(c.f); got != c.want {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}
