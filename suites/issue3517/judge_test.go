package issue3517

import (
	"strings"
	"testing"
)

// How one round is judged from what it observed; no HAProxy needed.
func TestJudge(t *testing.T) {
	kept := Marker{Present: true, GPC0: "1"}
	both := func(first, second Marker) map[string]Marker {
		return map[string]Marker{"first/marker": first, "second/marker": second}
	}
	for _, c := range []struct {
		name                     string
		f                        Facts
		violation, unmet, remark string
	}{
		{"both markers kept: held", Facts{OldExited: true, Markers: both(kept, kept)}, "", "", ""},
		{"one section not taught: the issue", Facts{OldExited: true, Markers: both(Marker{}, kept)}, "first/marker lost", "", ""},
		{"a wrong value is a violation too", Facts{OldExited: true, Markers: both(Marker{Present: true, GPC0: "0"}, kept)}, "first/marker gpc0=0 (want 1)", "", ""},
		{"every marker lost is not this issue's signature", Facts{OldExited: true, Markers: both(Marker{}, Marker{})},
			"", "every marker lost: the old process taught no section, which is not this issue's signature", ""},
		{"a table that cannot be read is never a violation", Facts{OldExited: true, Markers: both(Marker{Err: "show table: i/o timeout"}, kept)},
			"", "after reload: first/marker could not be read: show table: i/o timeout", ""},
		{"a marker table never read is never a pass", Facts{OldExited: true, Markers: map[string]Marker{"second/marker": kept}},
			"", "after reload: only 1 of 2 marker tables were read", ""},
		{"an old worker that never left cannot be judged", Facts{Markers: both(Marker{}, kept)},
			"", "old worker 8 still running 20s after SIGUSR2: how it ended cannot be judged", ""},
		{"a crash with a loss: cannot tell which", Facts{OldExited: true, OldCrash: "old worker 8 exited with code 139 (Segmentation fault) during soft-stop", Markers: both(Marker{}, kept)},
			"", "old worker 8 exited with code 139 (Segmentation fault) during soft-stop, and first/marker lost: the loss may come from the crash", ""},
		{"a crash after teaching everything: a remark", Facts{OldExited: true, OldCrash: "old worker 8 exited with code 139", Markers: both(kept, kept)},
			"", "", "old worker crashed after teaching its tables"},
		{"the current worker died", Facts{OldExited: true, Died: "current worker 9 exited with code 134 (Aborted)", Markers: both(kept, kept)},
			"", "current worker 9 exited with code 134 (Aborted)", ""},
		{"many sections (SECTIONS=10): a count of the lost tables", func() Facts {
			f := Facts{OldExited: true, Tables: TablesFor(10), Markers: map[string]Marker{}}
			for _, t := range TablesFor(10) {
				f.Markers[t] = Marker{}
			}
			f.Markers["first/marker"] = kept
			return f
		}(), "9 of 10 marker tables lost (s10/marker, s3/marker, s4/marker, ...)", "", ""},
		{"many sections, one never read", Facts{OldExited: true, Tables: TablesFor(3), Markers: both(kept, kept)},
			"", "after reload: only 2 of 3 marker tables were read", ""},
	} {
		c.f.OldPID = 8
		v, u, r := Judge(c.f)
		if v != c.violation || u != c.unmet || r != c.remark {
			t.Errorf("%s:\n got  %q, %q, %q\n want %q, %q, %q", c.name, v, u, r, c.violation, c.unmet, c.remark)
		}
	}
}

// What a round whose new worker never finished its resync still says.
func TestWeak(t *testing.T) {
	kept := Marker{Present: true, GPC0: "1"}
	both := func(first, second Marker) map[string]Marker {
		return map[string]Marker{"first/marker": first, "second/marker": second}
	}
	for _, c := range []struct {
		name string
		f    Facts
		want string
	}{
		{"one section taught, the other not: the asymmetry", Facts{OldExited: true, Markers: both(kept, Marker{})},
			"first/marker held and second/marker lost although the resync never finished"},
		{"both held: no lead (never a pass either)", Facts{OldExited: true, Markers: both(kept, kept)}, ""},
		{"both lost: not the signature", Facts{OldExited: true, Markers: both(Marker{}, Marker{})}, ""},
		{"a wrong value says nothing", Facts{OldExited: true, Markers: both(Marker{Present: true, GPC0: "0"}, Marker{})}, ""},
		{"an unreadable table says nothing", Facts{OldExited: true, Markers: both(Marker{Err: "timeout"}, Marker{})}, ""},
		{"the old worker still there: nothing taught yet", Facts{Markers: both(kept, Marker{})}, ""},
		{"the old worker crashed: the loss may be the crash's", Facts{OldExited: true, OldCrash: "old worker 8 exited with code 139", Markers: both(kept, Marker{})}, ""},
	} {
		if got := Weak(c.f); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSections(t *testing.T) {
	if got := strings.Join(Sections(4), " "); got != "first second s3 s4" {
		t.Errorf("Sections(4) = %s", got)
	}
	cfg, err := ConfigFor(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"peers first\n    peer harp 127.0.0.1:10000\n", "peers s3\n    peer harp 127.0.0.1:10002\n"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
	if two, _ := Config(); !strings.Contains(two, "peers second\n    peer harp 127.0.0.1:10001") || strings.Contains(two, "s3") {
		t.Errorf("the issue's config changed:\n%s", two)
	}
}
