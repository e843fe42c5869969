package tables

import "testing"

func TestJudge(t *testing.T) {
	base := Facts{Odd: "node3", Keys: 10}
	for _, c := range []struct {
		name             string
		edit             func(f *Facts)
		violation, unmet string
	}{
		// Observed on every build: the ip-keyed node3 holds no keytype key.
		{"no keytype key once the marker arrived: held", func(f *Facts) {}, "", ""},
		{"keytype keys applied", func(f *Facts) { f.Keytype = 10 }, "node3 applied 10 of 10 updates of cluster/keytype although its key type (ip) differs from the sender's (string)", ""},
		{"a failed control is never a violation", func(f *Facts) { f.Control = "control failed: only 3 of 10 keys of cluster/store" }, "", "control failed: only 3 of 10 keys of cluster/store"},
		{"absence before the marker arrived proves nothing", func(f *Facts) { f.Marker = "the identical table cluster/tbl, written last: only 5 of 10" },
			"", "the identical table cluster/tbl, written last: only 5 of 10"},
		{"presence needs no marker", func(f *Facts) { f.Keytype, f.Marker = 2, "no marker" }, "node3 applied 2 of 10 updates of cluster/keytype although its key type (ip) differs from the sender's (string)", ""},
	} {
		f := base
		c.edit(&f)
		v, u := Judge(f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
}
