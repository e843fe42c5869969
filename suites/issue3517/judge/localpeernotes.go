package judge

import (
	"fmt"

	"github.com/harp-project/harp/harness/core/cliout"
)

// LocalPeerNotes are, for each section that lists its local peer, the
// section's flags and that peer's last status and handshake, for notes.
func LocalPeerNotes(sections []cliout.PeersSection) []string {
	var notes []string
	for _, s := range sections {
		if p, ok := s.Local(); ok {
			notes = append(notes, fmt.Sprintf("%s: flags=0x%x, local peer last_status=%s last_hdshk=%s", s.Name, s.Flags, p.LastStatus, p.LastHdshk))
		}
	}
	return notes
}
