package issue3517

import "testing"

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
	} {
		c.f.OldPID = 8
		v, u, r := Judge(c.f)
		if v != c.violation || u != c.unmet || r != c.remark {
			t.Errorf("%s:\n got  %q, %q, %q\n want %q, %q, %q", c.name, v, u, r, c.violation, c.unmet, c.remark)
		}
	}
}
