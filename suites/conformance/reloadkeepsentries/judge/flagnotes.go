package judge

import (
	"fmt"

	"github.com/harp-project/harp/harness/core/cliout"
)

// FlagNotes are, for each section, its flags as who showed them
// ("new worker, section s1: flags=0x3"), for a trial's notes: the resync
// state a worker reached, which a wait's unmet text gives only for the
// first section short of it.
func FlagNotes(who string, sections []cliout.PeersSection) []string {
	var notes []string
	for _, s := range sections {
		notes = append(notes, fmt.Sprintf("%s, section %s: flags=0x%x", who, s.Name, s.Flags))
	}
	return notes
}
