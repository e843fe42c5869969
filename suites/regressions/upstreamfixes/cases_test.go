package upstreamfixes

import (
	"testing"

	"github.com/harp-project/harp/suites/regressions/upstreamfixes/judge"
)

// Every case the judge knows has one way to reach HAProxy, and every way
// names a case the judge knows.
func TestEveryCaseReaches(t *testing.T) {
	known := map[string]bool{}
	for _, c := range judge.Cases {
		known[c.ID] = true
		_, one := oneExchange[c.ID]
		_, steps := stepCases[c.ID]
		if one == steps {
			t.Errorf("case %s: in oneExchange %v, in stepCases %v: want exactly one", c.ID, one, steps)
		}
	}
	for _, m := range []map[string]Reach{oneExchange, stepCases} {
		for id, r := range m {
			if !known[id] {
				t.Errorf("%s reaches HAProxy but the judge has no such case", id)
			}
			if r.Kind == "" {
				t.Errorf("%s: no kind", id)
			}
		}
	}
	if len(Cases) != len(judge.Cases) {
		t.Errorf("%d cases, the judge has %d", len(Cases), len(judge.Cases))
	}
}
