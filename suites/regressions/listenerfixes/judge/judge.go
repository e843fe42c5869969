// Package judge holds upstream-fixes-listeners' cases
// (fixtures/upstream-fixes/listeners) and the Go judges of those whose
// file says `want go`; pure, so that `make unit` tests them alone on facts
// captured from real builds.
package judge

import (
	"fmt"
	"strings"

	"github.com/harp-project/harp/fixtures"
	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/fixcase"
)

// Cases in their files' order.
var Cases = fixcase.MustLoadJudged(fixtures.UpstreamFixes, "upstream-fixes/listeners", fixcase.GoWants{
	"listener-shards-distinct-ids":       distinctListeners("fe", 8),
	"listener-shards-close-ids-distinct": distinctListeners("fe2", 9),
})

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
