package judge

import (
	"slices"
	"testing"

	"github.com/harp-project/harp/harness/core/cliout"
)

func TestFlagNotes(t *testing.T) {
	got := FlagNotes("new worker", []cliout.PeersSection{{Name: "s1", Flags: 0x3}, {Name: "s2", Flags: 0x1}})
	if want := []string{"new worker, section s1: flags=0x3", "new worker, section s2: flags=0x1"}; !slices.Equal(got, want) {
		t.Errorf("FlagNotes = %q, want %q", got, want)
	}
	if got := FlagNotes("old worker", nil); got != nil {
		t.Errorf("no sections: %q", got)
	}
}
