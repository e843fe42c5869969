package partition

// What the suite reads and does: its own code (#43), moved
// from the toolkit, built on its primitives.

import (
	"context"
	"time"

	"github.com/harp-project/harp/harness/live/cluster"
)

// healProbe is Attached in words, for saying why links did not come back
// after a Heal: what Docker shows of the member on the cluster network,
// or that the probe itself failed.
func healProbe(ctx context.Context, c *cluster.Cluster, m *cluster.Member) string {
	probe, err := c.Attached(ctx, m)
	switch {
	case err != nil:
		return "it failed: " + err.Error()
	case probe == "":
		return "Docker shows " + m.Name + " back on the cluster network at its own address"
	}
	return probe
}

// latest is the last of the times (what Spread gives: key -> when it was
// on every member), the zero time when there is none.
func latest(at map[string]time.Time) time.Time {
	var last time.Time
	for _, x := range at {
		if x.After(last) {
			last = x
		}
	}
	return last
}
