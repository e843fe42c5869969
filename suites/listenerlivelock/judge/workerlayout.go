package judge

import "fmt"

// WorkerLayout is how a worker runs a frontend: its version and threads
// (show info), its thread groups (show threads) and the frontend's
// listeners (show stat, with `option socket-stats`).
type WorkerLayout struct {
	Version   string
	Threads   int64 // from show info
	Groups    int   // from show threads
	Listeners int   // the frontend's, from show stat
}

// Differs says how the worker runs unlike want, what its config asks
// (thread groups, threads, the frontend's listeners; not the version):
// layout names how the config lays its listeners out, which decides how
// many it wants. "" when it runs as asked: a suite whose property needs
// that layout has no precondition before it.
func (l WorkerLayout) Differs(want WorkerLayout, layout string) string {
	switch {
	case l.Groups != want.Groups:
		return fmt.Sprintf("the worker runs %d thread groups, the config asks %d", l.Groups, want.Groups)
	case l.Threads != want.Threads:
		return fmt.Sprintf("the worker runs %d threads, the config asks %d", l.Threads, want.Threads)
	case l.Listeners != want.Listeners:
		return fmt.Sprintf("the frontend has %d listeners, the layout %q wants %d", l.Listeners, layout, want.Listeners)
	}
	return ""
}
