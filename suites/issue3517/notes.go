package issue3517

import (
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/live/node"
)

// reloadNotes are a reload's timeline for a trial's notes, counted from how it
// was asked (node.BySignal: "after SIGUSR2"): when the new worker was listed,
// and when the old one left or that it was still listed after timeout.
func reloadNotes(r node.Reload, how node.How, timeout time.Duration) []string {
	notes := []string{fmt.Sprintf("new worker %d listed %s after %s", r.NewPID, r.NewUp.Round(time.Millisecond), how)}
	if r.OldExited {
		return append(notes, fmt.Sprintf("old worker %d gone %s after %s", r.OldPID, r.OldGone.Round(time.Millisecond), how))
	}
	return append(notes, fmt.Sprintf("old worker %d still listed %s after %s", r.OldPID, timeout, how))
}
