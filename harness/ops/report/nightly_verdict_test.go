package report

import (
	"testing"

	"github.com/harp-project/harp/harness/core/verdict"
)

func TestNightlyVerdict(t *testing.T) {
	gone := []Change{{Kind: "vanished", Suite: "3517", Build: "deb:2.6.12-1", Before: verdict.Pass}}
	if v := NightlyVerdict(verdict.Pass, gone); v != verdict.Inconclusive {
		t.Errorf("a vanished cell left the night %s", v)
	}
	if v := NightlyVerdict(verdict.Reproduced, gone); v != verdict.Reproduced {
		t.Errorf("a finding stays the night's verdict, got %s", v)
	}
	if v := NightlyVerdict(verdict.Pass, []Change{{Kind: "fixed"}}); v != verdict.Pass {
		t.Errorf("a fixed cell made the night %s", v)
	}
}
