package resync

import (
	"fmt"
	"time"
)

// Unseen is why an entry a restarted process (who) lacks says nothing
// ("" when it does) when a correct process keeps it only expire (its own
// table's): it may have learnt the entry at once and dropped it before
// harp's first read of its table, or in a pause between reads (a loaded
// machine). The first read's lateness is taken at its latest: the
// worker's uptime, rounded down by HAProxy, plus a second, less how long
// ago harp first read the table (sinceFirst, taken before the uptime);
// gap is the longest pause between two reads. Beside LateLink: both say
// whether a restarted process's missing entry is its resync's failure.
func Unseen(who string, uptime, sinceFirst, gap, expire time.Duration) string {
	if late := uptime + time.Second - sinceFirst; late >= expire {
		return fmt.Sprintf("harp first read %s's table as late as %s after %s's worker started (uptime %s, first read %s ago): an entry %s learnt at its start could have expired (%s's expire %s) before harp looked (a loaded machine?)", who, late.Round(time.Millisecond), who, uptime, sinceFirst.Round(time.Millisecond), who, who, expire)
	}
	if gap >= expire {
		return fmt.Sprintf("harp's reads of %s's table paused for %s, beyond %s's expire %s: an entry could have come and gone unseen (a loaded machine?)", who, gap.Round(time.Millisecond), who, expire)
	}
	return ""
}
