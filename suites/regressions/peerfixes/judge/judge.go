// Package judge holds upstream-fixes-peers's cases
// (fixtures/upstream-fixes/peers), each judged by its file's rule; pure, so
// that `make unit` tests them alone on facts captured from real builds.
package judge

import (
	"fmt"
	"time"

	"github.com/harp-project/harp/fixtures"
	"github.com/harp-project/harp/harness/core/fixcase"
)

// Cases in their files' order.
var Cases = fixcase.MustLoadJudged(fixtures.UpstreamFixes, "upstream-fixes/peers", fixcase.GoWants{
	"peer-stalled-reader-no-sync-storm": func(a string) (bool, string, error) {
		var most, windows int64
		var span string
		if _, err := fmt.Sscanf(a, "most loops per second while updates waited on a stalled session: %d (%d windows of 500ms, %s", &most, &windows, &span); err != nil {
			return false, "", fmt.Errorf("no loop rate in %q", a)
		}
		return most < stormLoops, fmt.Sprintf("the worker looped %d times a second while updates waited on a stalled peer session: its sync task woke in a loop", most), nil
	},
	"peer-updates-past-empty-table-pushed": func(a string) (bool, string, error) {
		var n int
		var took string
		if _, err := fmt.Sscanf(a, "table t2: all %d updates pushed in %s", &n, &took); err == nil {
			d, err := time.ParseDuration(took)
			if err != nil {
				return false, "", fmt.Errorf("no push time in %q", a)
			}
			return d <= pushBound, fmt.Sprintf("the updates of table t2 took %s to be pushed to a peer that read everything: the applet waited for a wakeup after an empty table", d), nil
		}
		var pushed, local uint64
		var after string
		if _, err := fmt.Sscanf(a, "table t2: last pushed %d of local update %d after %s", &pushed, &local, &after); err != nil {
			return false, "", fmt.Errorf("no push count in %q", a)
		}
		return false, fmt.Sprintf("table t2's updates were still not all pushed after %s (last pushed %d of %d) to a peer that read everything: the applet waited for a wakeup after an empty table", after, pushed, local), nil
	},
	"peer-incoming-updates-obey-at-once": func(a string) (bool, string, error) {
		var calls, updates, atOnce int64
		if _, err := fmt.Sscanf(a, "the peer applet took %d calls to read %d updates (max-updates-at-once %d)", &calls, &updates, &atOnce); err != nil || atOnce <= 0 {
			return false, "", fmt.Errorf("no call count in %q", a)
		}
		// A build that reads at most atOnce updates a call needs
		// updates/atOnce calls; half that leaves room for nothing but a
		// build that reads more at once.
		return calls >= updates/atOnce/2, fmt.Sprintf("the peer applet read %d updates in %d calls, more than %d a call on average: it ignored max-updates-at-once on the receive side", updates, calls, atOnce), nil
	},
	"peer-learnt-entry-keeps-its-shard": func(a string) (bool, string, error) {
		var total, one, none, both int
		if _, err := fmt.Sscanf(a, "of %d learnt entries updated on the node: %d reached one shard peer, %d none, %d both", &total, &one, &none, &both); err != nil || total == 0 {
			return false, "", fmt.Errorf("no routing counts in %q", a)
		}
		return one == total, fmt.Sprintf("of %d entries learnt from a shard peer, then updated on the node, %d reached no shard peer and %d both: their shard was not the one of their key", total, none, both), nil
	},
})

// pushBound: a peer applet that does not stall pushes 20 updates in
// milliseconds; one that waits for its 3 s heartbeat after each, in a
// minute.
const pushBound = 5 * time.Second

// stormLoops: an idle worker loops a few times a second; a task woken in
// a loop, tens of thousands.
const stormLoops = 5000
