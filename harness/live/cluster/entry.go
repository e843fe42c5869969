package cluster

import (
	"context"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/live/node"
)

// SetEntry writes one entry on a member's admin socket (node.SetEntry:
// `set table <table> key <key> <data>`), its error as the node gave it.
func (m *Member) SetEntry(ctx context.Context, table, key, data string) error {
	return m.Node.SetEntry(ctx, node.StatsSocket, table, key, data)
}

// WaitData reads a key on a member's admin socket every 20 ms until its
// field reads want or timeout passed (read at least once); it gives the
// last reading ("" when the key or the field is absent; unknown when that
// read failed) and how long the wait took.
func (m *Member) WaitData(ctx context.Context, table, key, field, want string, timeout time.Duration) (obs.Of[string], time.Duration) {
	t0 := time.Now()
	e, _, err := m.Node.WaitEntry(ctx, node.StatsSocket, table, key, timeout, 20*time.Millisecond, func(e cliout.Entry, _ bool) bool { return e.Data[field] == want })
	return obs.From(e.Data[field], err), time.Since(t0)
}
