// Package chaos is the randomized peers history as a suite (label
// area:chaos): one history per trial, faults and reloads drawn from the
// seed, judged by the chaos checker. `harp chaos` runs the same with
// --count and --failfast; `harp rejudge` judges a stored history again.
package chaos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/chaos"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/chaosdrive"
	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/suiteenv"
)

var Suite = suite.Register(&suite.Suite{
	ID:       "chaos",
	Upstream: "robustness: randomized peers histories with faults",
	Title:    "A peers cluster under random link and process faults and reloads converges to what its writers wrote",
	Summary:  "every node writes its own keys by the CLI and by traffic while faults (latency, slicer, resets, stalls, partitions, paused nodes and workers, restarts) and reloads are drawn from a seed; healed and quiet, every node must hold the same values, those the owners' writes leave, with no expiry beyond the table's and no key lost by a reload",
	Labels:   []string{"area:chaos"},
	Trials:   1,
	Noun:     "histories",
	Params: []suite.Param{
		suite.NodesParam,
		suite.Duration("DURATION", 30*time.Second, "how long faults and writes run"),
		suite.Text("SEED", "0", "the first history's seed (0: from the clock; printed, so a history replays)", func(v string) error {
			_, err := strconv.ParseInt(v, 10, 64)
			return err
		}),
		suite.OneOf("FAILFAST", "0", "1: stop at the first history that breaks the model (harp chaos --failfast)", "0", "1"),
		suite.Text("FAULTS", "all", "faults to draw from, comma-separated: "+strings.Join(chaos.FaultKinds, ","), func(v string) error {
			_, err := Faults(v)
			return err
		}),
	},
	StepsFor: func(p suite.Values) []string {
		return []string{
			fmt.Sprintf("Setup: %d nodes on a private network, every directed peer link through the link proxy (toxiproxy); tables `tbl` (string len 32, gpc0, expire 10m; HTTP requests track x-key and increment gpc0) and `short` (expire 5s). Wait until every link is established and every initial resync finished.", p.Int("NODES")),
			fmt.Sprintf("For %s: each node writes only its own keys (4 in tbl, 2 in short for the first third), every 50 to 150 ms, by `set table` with a new value or by an HTTP request; every 1.5 to 3 s a fault drawn from the seed (%s) on a random node or link, held 1 to 3 s then healed; every third event a reload of a node whose resync finished (its writer paused until the new worker resynced), its keys read before and after. Every operation is recorded with its node, times and result.", p.Duration("DURATION"), p.String("FAULTS")),
			"Then: every fault healed (each action retried, its errors recorded), the link proxy read back and every peer session waited for (up to 30 s), up to 20 s quiet until the nodes agree, and every node's tables read. The quiet ends early when the nodes disagree and nothing can change the main table any more: two readings in a row, the tables unchanged between, show every session established, every resync finished and every local update pushed to every peer and acknowledged (a correct build sends entries only as local updates or in a resync, and no writer is left).",
			"Expectation (the checker, on the history): every node holds every key with the same value; that value is one the owner's writes, in order, leave (a write whose result was not seen may or may not count, at any time after it started, until its owner restarts); after its owner restarted, a key needs to converge again only once the owner wrote it after that restart's resync, and until then each node holds what some prefix of the writes left; no entry has more time left than its table's expire, and none outlives it; no key a node held before a reload (its resync finished) is missing from its new worker. A heal harp could not make, a link it could not clear, or a read it could not make is inconclusive.",
		}
	},
	Run: run,
})

// Faults parses FAULTS ("all" or kinds).
func Faults(v string) ([]string, error) { return chaos.ParseFaults(v) }

// ClusterOptions is the cluster a history runs on.
func ClusterOptions() cluster.Options {
	return cluster.Options{Tables: chaosdrive.Tables, HTTPRules: []string{"sc-inc-gpc0(0)"}, Links: true}
}

// Evidence is one history and the checker's result on it.
type Evidence struct {
	Result  chaos.Result  `json:"result"`
	History chaos.History `json:"history"`
}

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	faults, _ := Faults(env.Params.String("FAULTS"))
	seed, _ := strconv.ParseInt(env.Params.String("SEED"), 10, 64)
	if seed == 0 {
		seed = time.Now().UnixNano() % 1_000_000_000
	}
	return env.OnCluster(ctx, ClusterOptions(), true, func(ctx context.Context, c *cluster.Cluster, t *verdict.Trial) error {
		s := seed + int64(t.N-1)
		h, err := chaosdrive.Run(ctx, c, chaosdrive.Options{Seed: s, Duration: env.Params.Duration("DURATION"), Faults: faults, Logf: env.Logf})
		if err != nil {
			return err
		}
		r := chaos.Check(h)
		t.Evidence = &Evidence{Result: r, History: h}
		t.Notef("seed %d (SEED=%d replays it); schedule: %s", s, s, strings.Join(h.Schedule, "; "))
		t.Notef("checker: %s: %s", r.Verdict, r.Reason)
		for i, v := range r.Violations {
			if i == 5 {
				t.Notef("... and %d more violations", len(r.Violations)-5)
				break
			}
			t.Notef("%s: %s (operations %s)", v.Key, v.What, chaos.IDs(v.Ops, 10))
		}
		switch r.Verdict {
		case "REPRODUCED":
			t.Violation = fmt.Sprintf("seed %d: %s", s, r.Reason)
			if env.Params.String("FAILFAST") == "1" {
				return suiteenv.Stop
			}
		case "INCONCLUSIVE":
			t.Unmet = fmt.Sprintf("seed %d: %s", s, r.Reason)
		}
		return nil
	})
}
