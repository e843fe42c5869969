package judge

import (
	"slices"
	"testing"

	"github.com/harp-project/harp/harness/core/cliout"
)

func TestLocalPeerNotes(t *testing.T) {
	secs := []cliout.PeersSection{
		{Name: "first", Flags: 0x3, Peers: []cliout.Peer{{Name: "remote"}, {Name: "harp", Local: true, LastStatus: "NONE", LastHdshk: "<NEVER>"}}},
		{Name: "second", Flags: 0x1, Peers: []cliout.Peer{{Name: "remote"}}},
	}
	if got, want := LocalPeerNotes(secs), []string{"first: flags=0x3, local peer last_status=NONE last_hdshk=<NEVER>"}; !slices.Equal(got, want) {
		t.Errorf("LocalPeerNotes = %q, want %q", got, want)
	}
}
