// Package judge holds upstream-fixes-master's cases
// (fixtures/upstream-fixes/master) and the Go judges of those whose file
// says `want go`; pure, so that `make unit` tests them alone on facts
// captured from real builds.
package judge

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/fixtures"
	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/fixcase"
	"github.com/harp-project/harp/harness/core/text"
)

// Cases in their files' order.
var Cases = fixcase.MustLoadJudged(fixtures.UpstreamFixes, "upstream-fixes/master", fixcase.GoWants{
	"mcli-master-uptime-sane": func(a string) (bool, string, error) {
		p, err := cliout.ParseProcs(a)
		if err != nil {
			return false, "", fmt.Errorf("show proc: %w", err) // unreadable is unknown, never a wrong uptime
		}
		return p.Master.Uptime >= 0 && p.Master.Uptime < time.Hour, fmt.Sprintf("the master's uptime is not that of a node up for less than an hour (%v)", p.Master.Uptime), nil
	},
	"master-devnull-fd-kept-across-reloads": func(a string) (bool, string, error) {
		var before, after, reloads int
		if _, err := fmt.Sscanf(a, "/dev/null descriptors of the master: %d before, %d after %d reloads", &before, &after, &reloads); err != nil {
			return false, "", fmt.Errorf("no counts in %q", text.OneLine(a, 200))
		}
		return after <= before, fmt.Sprintf("the master held %d more descriptors on /dev/null after %d reloads (%d before, %d after): one leaked per re-execution", after-before, reloads, before, after), nil
	},
	"exec-thread-groups-master-cli": func(a string) (bool, string, error) {
		code, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(a, "\n", 2)[0], "exit "))
		if err != nil {
			return false, "", fmt.Errorf("no exit status in %q", text.OneLine(a, 200))
		}
		return code >= 0 && code < 128, "the master-worker start ended on a signal (" + text.OneLine(a, 200) + ")", nil
	},
})
