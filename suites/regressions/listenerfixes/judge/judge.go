// Package judge holds upstream-fixes-listeners' cases
// (fixtures/upstream-fixes/listeners) and the Go judges of those whose
// file says `want go`; pure, so that `make unit` tests them alone on facts
// captured from real builds.
package judge

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/fixtures"
	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/fixcase"
)

// Cases in their files' order.
var Cases = fixcase.MustLoadJudged(fixtures.UpstreamFixes, "upstream-fixes/listeners", fixcase.GoWants{
	"listener-shards-distinct-ids":       distinctListeners("fe", 8),
	"listener-shards-close-ids-distinct": distinctListeners("fe2", 9),
	"old-worker-no-accept-wakeups":       fewWakeups,
	"single-shard-groups-keeps-accepting": func(a string) (bool, string, error) {
		var first, total, parallel, later, of int
		var took string
		if _, err := fmt.Sscanf(a, "answered: %d of %d requests %d at a time, then %d of %d one after another; show info answered in %s", &first, &total, &parallel, &later, &of, &took); err != nil {
			return false, "", fmt.Errorf("no counts in %q", a)
		}
		stats, err := time.ParseDuration(took)
		switch {
		case err != nil:
			return false, "", fmt.Errorf("show info's time in %q: %w", a, err)
		case later == of:
			return true, "", nil
		case later > 0 || stats > time.Second:
			// Some served, or a slow CLI: a loaded machine, not a
			// listener that stopped accepting.
			return false, "", fmt.Errorf("%s: neither all served nor a listener that stopped while the worker answered at once", a)
		}
		return false, fmt.Sprintf("a single-shard frontend across two thread groups stopped accepting: %s", a), nil
	},
})

// WakeConnections: the new worker's connections the old worker must not
// be woken for; enough that a wakeup for each stands out of the few events
// an idle old worker may count.
const WakeConnections = 200

var wakeupsRe = regexp.MustCompile(`^poll_drop_fd of the old worker: \+(-?\d+) over (\d+) connections`)

// fewWakeups: the old worker dropped events for fewer than a quarter of
// the new worker's connections (a fixed build: none; without the fix, one
// for each).
func fewWakeups(a string) (bool, string, error) {
	if strings.HasPrefix(a, "the old worker died") {
		return false, a, nil
	}
	m := wakeupsRe.FindStringSubmatch(a)
	if m == nil {
		return false, "", fmt.Errorf("no poll_drop_fd count in %q", a)
	}
	drops, _ := strconv.Atoi(m[1])
	conns, _ := strconv.Atoi(m[2])
	return 4*drops < conns, fmt.Sprintf("%d dropped events for %d connections", drops, conns), nil
}

// distinctListeners: the proxy has want listener rows, no two sharing a
// name or an id.
func distinctListeners(proxy string, want int) fixcase.Want {
	return func(a string) (bool, string, error) {
		rows, err := cliout.ParseStat(a)
		if err != nil {
			return false, "", fmt.Errorf("show stat: %w", err) // unreadable is unknown, never a listener lost
		}
		names, ids := map[string]int{}, map[string]int{}
		var dup []string
		k, frontend := 0, false
		for _, r := range rows {
			frontend = frontend || (r.Proxy == proxy && r.Type() == 0)
			if r.Proxy != proxy || r.Type() != 3 {
				continue
			}
			k++
			names[r.Server]++
			ids[r.Fields["sid"]]++
			if names[r.Server] == 2 {
				dup = append(dup, "name "+r.Server)
			}
			if ids[r.Fields["sid"]] == 2 {
				dup = append(dup, "id "+r.Fields["sid"])
			}
		}
		if !frontend {
			return false, "", fmt.Errorf("show stat has no frontend %s: it says nothing of its listeners", proxy)
		}
		return k == want && dup == nil, fmt.Sprintf("%s: %d listener rows (want %d), shared: %s", proxy, k, want, strings.Join(dup, ", ")), nil
	}
}
