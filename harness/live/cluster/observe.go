package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/live/node"
)

// What cluster suites observe: the mesh, keys written and spreading,
// what each node lacks, and the doctor's diagnosis.

const (
	MeshTimeout     = 30 * time.Second // every link established (2.6 may collide and retry after 5 s)
	ConvergeTimeout = 15 * time.Second // a written key on every node
	// DefaultTable is the first table of the default section, tracked by
	// each node's HTTP frontend.
	DefaultTable = "cluster/tbl"
)

// Configs is the configuration a report shows: the first node's, and any
// node's that differs from it.
func (c *Cluster) Configs() string {
	var b strings.Builder
	for i, m := range c.Members {
		if i == 0 || m.Config != c.Members[0].Config {
			fmt.Fprintf(&b, "# %s (%s)\n%s\n", m.Name, m.IP, m.Config)
		}
	}
	return b.String()
}

// WaitSockets waits until every node's stats socket answers (its worker is
// up behind Docker's port proxy).
func (c *Cluster) WaitSockets(ctx context.Context, timeout time.Duration) error {
	for _, m := range c.Members {
		err := node.Poll(ctx, timeout, 100*time.Millisecond, func() (bool, error) {
			_, err := m.Node.Stats(ctx, "show info")
			return err == nil, nil
		})
		if err != nil {
			return fmt.Errorf("%s: the stats socket never answered: %w", m.Name, err)
		}
	}
	return nil
}

// WaitMesh polls until every node's local peer has an established session
// with every remote peer and every node has finished its initial resync;
// else it says which links never came up or which resync never finished.
func (c *Cluster) WaitMesh(ctx context.Context, timeout time.Duration) string {
	m := c.Meshed(ctx, timeout)
	down, ok := m.Get()
	switch {
	case !ok:
		return fmt.Sprintf("the cluster never meshed and synced within %s: %s", timeout, m.Unknown())
	case len(down) > 0:
		return fmt.Sprintf("the cluster never meshed and synced within %s: %s", timeout, strings.Join(down, ", "))
	}
	return ""
}

// Meshed is WaitMesh as an observation: what was still down (links not
// established, resyncs not finished) when timeout passed, none when the
// cluster meshed. It is unknown when the reading that decides failed on a
// node: a socket harp could not read is not a link that is down. A failed
// reading at the deadline is retried for up to 5 s more.
func (c *Cluster) Meshed(ctx context.Context, timeout time.Duration) obs.Of[[]string] {
	deadline := time.Now().Add(timeout)
	for {
		var down, failed []string
		for _, m := range c.Members {
			sec, err := m.Node.Section(ctx, node.StatsSocket, c.Section)
			if err != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", m.Name, err))
				continue
			}
			for _, p := range sec.Peers {
				if !p.Local && !p.Established() {
					down = append(down, fmt.Sprintf("%s->%s (last_status=%s)", m.Name, p.Name, p.LastStatus))
				}
			}
			if !sec.ResyncFinished() {
				down = append(down, fmt.Sprintf("%s: initial resync not finished (flags=0x%x)", m.Name, sec.Flags))
			}
		}
		if len(down) == 0 && len(failed) == 0 {
			return obs.Value([]string{})
		}
		now := time.Now()
		if ctx.Err() != nil || (now.After(deadline) && (len(failed) == 0 || now.After(deadline.Add(5*time.Second)))) {
			if len(failed) > 0 {
				return obs.Failure[[]string]("show peers at the end of %s: %s", timeout, strings.Join(failed, ", "))
			}
			return obs.Value(down)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Table reads a table on a member, entries included.
func (m *Member) Table(ctx context.Context, table string) (cliout.Table, error) {
	return m.Node.Table(ctx, node.StatsSocket, table)
}

// SetKeys writes keys on a member through its runtime socket; wrote, when
// set, is told each key as soon as it is written.
func (m *Member) SetKeys(ctx context.Context, table string, keys []string, data string, wrote ...func(string)) error {
	for _, k := range keys {
		if err := m.Node.SetEntry(ctx, node.StatsSocket, table, k, data); err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		for _, f := range wrote {
			f(k)
		}
	}
	return nil
}

// Spread polls the members until each key is on all of them, and gives
// when each key was first seen everywhere (missing keys are left out).
func Spread(ctx context.Context, members []*Member, table string, keys []string, timeout time.Duration) map[string]time.Time {
	seen := map[string]time.Time{}
	_ = node.Poll(ctx, timeout, 20*time.Millisecond, func() (bool, error) {
		on := map[string]int{}
		for _, m := range members {
			t, err := m.Table(ctx, table)
			if err != nil {
				continue
			}
			for _, e := range t.Entries {
				on[e.Key]++
			}
		}
		now := time.Now()
		for _, k := range keys {
			if _, done := seen[k]; !done && on[k] == len(members) {
				seen[k] = now
			}
		}
		return len(seen) == len(keys), nil
	})
	return seen
}

// Missing lists, per member, the keys it lacks.
func Missing(ctx context.Context, members []*Member, table string, keys []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, m := range members {
		t, err := m.Table(ctx, table)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if _, ok := t.Lookup(k); !ok {
				out[m.Name] = append(out[m.Name], k)
			}
		}
	}
	return out, nil
}

// Holds counts the keys a member holds, read once: a table harp could not
// read is unknown, never an absence.
func (m *Member) Holds(ctx context.Context, table string, ks []string) obs.Of[int] {
	tb, err := m.Table(ctx, table)
	if err != nil {
		return obs.From(0, err)
	}
	return obs.Value(held(tb, ks))
}

func held(tb cliout.Table, ks []string) int {
	n := 0
	for _, k := range ks {
		if _, ok := tb.Lookup(k); ok {
			n++
		}
	}
	return n
}

// Keys makes n keys with a prefix: p000, p001, ...
func Keys(prefix string, n int) []string {
	var ks []string
	for i := range n {
		ks = append(ks, fmt.Sprintf("%s%03d", prefix, i))
	}
	return ks
}

// HTTPKeys sends per requests for each key to a member's frontend, which
// tracks the x-key header: real traffic that counts http_req_cnt per key.
func (m *Member) HTTPKeys(ctx context.Context, ks []string, per int, wrote ...func(string)) error {
	cl := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, k := range ks {
		for range per {
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+m.HTTP+"/", nil)
			req.Header.Set("x-key", k)
			resp, err := cl.Do(req)
			if err != nil {
				return fmt.Errorf("HTTP to %s: %w", m.Name, err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				return fmt.Errorf("HTTP to %s: status %d", m.Name, resp.StatusCode)
			}
		}
		for _, f := range wrote {
			f(k)
		}
	}
	return nil
}

// Want is the value a data field must hold on some keys.
type Want struct {
	Keys  []string
	Value string
}

// SettledData polls WrongData until every entry holds what was written, or
// timeout passed (counters replicate as they grow: an http_req_cnt of 3
// may first arrive as 1 or 2); it gives the last answer.
func SettledData(ctx context.Context, members []*Member, table string, fields map[string]Want, timeout time.Duration) (string, error) {
	var bad string
	err := node.Poll(ctx, timeout, 100*time.Millisecond, func() (bool, error) {
		var err error
		bad, err = WrongData(ctx, members, table, fields)
		return bad == "", err
	})
	if err != nil && !errors.Is(err, node.ErrDeadline) {
		return "", err
	}
	return bad, nil
}

// WrongData checks the data replicated with keys on every member: "" when
// every entry present holds what was written (absent keys are not counted
// here), else how many do not, with an example.
func WrongData(ctx context.Context, members []*Member, table string, fields map[string]Want) (string, error) {
	bad, example := 0, ""
	for _, m := range members {
		tb, err := m.Table(ctx, table)
		if err != nil {
			return "", err
		}
		for field, w := range fields {
			for _, k := range w.Keys {
				if e, ok := tb.Lookup(k); ok && e.Data[field] != w.Value {
					bad++
					if example == "" {
						example = fmt.Sprintf("%s on %s has %s=%s, want %s", k, m.Name, field, e.Data[field], w.Value)
					}
				}
			}
		}
	}
	if bad > 0 {
		return fmt.Sprintf("%d replicated entries hold other data than was written (e.g. %s)", bad, example), nil
	}
	return "", nil
}
