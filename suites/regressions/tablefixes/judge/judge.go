// Package judge holds upstream-fixes-tables' cases
// (fixtures/upstream-fixes/tables) and the Go judges of those whose file
// says `want go`; pure, so that `make unit` tests them alone on facts
// captured from real builds.
package judge

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/fixtures"
	"github.com/harp-project/harp/harness/core/fixcase"
	"github.com/harp-project/harp/harness/core/text"
)

// Cases in their files' order.
var Cases = fixcase.MustLoadJudged(fixtures.UpstreamFixes, "upstream-fixes/tables", fixcase.GoWants{
	"failed-entry-allocations-not-counted": func(a string) (bool, string, error) {
		var u1, u2 int
		if _, err := fmt.Sscanf(a, "used after the sets: %d of 2000 keys; after clear table: %d", &u1, &u2); err != nil {
			return false, "", fmt.Errorf("no counts in %q", text.OneLine(a, 200))
		}
		return u2 == 0, fmt.Sprintf("clear table left the table counting %d entries (%d after the sets): each failed allocation stayed counted", u2, u1), nil
	},
	"expire-before-tick-wrap-purged": func(a string) (bool, string, error) {
		var late float64
		// Two forms: the last reading still holding entries (now), or the
		// first empty one (the captures of the first runs).
		if _, err := fmt.Sscanf(a, "tshort last held entries %f s after", &late); err == nil {
			return late <= purgeSlack.Seconds(), fmt.Sprintf("tshort's entries outlived their expiry by %.1f s, more than %s", late, purgeSlack), nil
		}
		if _, err := fmt.Sscanf(a, "tshort emptied %f s after", &late); err == nil {
			return late <= purgeSlack.Seconds(), fmt.Sprintf("tshort's entries outlived their expiry by %.1f s, more than %s", late, purgeSlack), nil
		}
		var left int
		if _, err := fmt.Sscanf(a, "tshort still held %d entries %f s after", &left, &late); err == nil {
			if late <= purgeSlack.Seconds() {
				// harp's last reading began too early to say anything.
				return false, "", fmt.Errorf("harp's last reading of tshort began %.1f s after the entries were due: too soon to tell", late)
			}
			return false, fmt.Sprintf("tshort's entries due before the clock's wrap were never purged: %d left %.1f s after they were due", left, late), nil
		}
		return false, "", fmt.Errorf("no reading of tshort in %q", text.OneLine(a, 200))
	},
	"http-other-table-counter-by-own-key": func(a string) (bool, string, error) {
		g, ok := strings.CutPrefix(a, "x-g:")
		if !ok {
			return false, "", fmt.Errorf("no x-g header in %q", a)
		}
		return strings.TrimSpace(g) != "42", "a counter of another table was read with the tracked key's bytes", nil
	},
	"expired-entries-all-purged": func(a string) (bool, string, error) {
		_, after, ok := fixcase.Arrow(a, "tpurge used")
		if !ok {
			return false, "", fmt.Errorf("no tpurge counts before and after in %q", a)
		}
		return after == 0, fmt.Sprintf("expired entries outlived the expire task (%s)", a), nil
	},
	"idle-worker-after-entries-expired": idle,
	"idle-worker-with-entry-in-use":     idle,
})

// PurgeKeys: 3.2 expires at most 100 entries of a shard per run of its
// expire task, and a default build (MAX_THREADS 1024) has 64 shards: about
// 250 a shard.
const PurgeKeys = 16200 // 324 lines of the suite's perLine

// Wrapped: HAProxy's internal millisecond clock wraps 20 s after boot, and
// a date of "never" compares as past only on the far side of the wrap.
const Wrapped = 22

// busyLoops: an idle worker loops a few times a second (timers, harp's
// own CLI connections); one whose task wakes at once loops thousands.
const busyLoops = 500

var loopRateRe = regexp.MustCompile(`(\d+) loops/s`)

func idle(a string) (bool, string, error) {
	m := loopRateRe.FindStringSubmatch(a)
	if m == nil {
		return false, "", fmt.Errorf("no loop rate in %q", a) // unknown, never a busy worker
	}
	r, _ := strconv.Atoi(m[1])
	return r < busyLoops, fmt.Sprintf("the idle worker loops %d times a second", r), nil
}

// purgeSlack: how late after its expiry an entry may still be listed (the
// expiry task runs at the first due entry, and harp reads every 250 ms).
const purgeSlack = 3 * time.Second
