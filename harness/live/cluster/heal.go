package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/live/nemesis"
	"github.com/harp-project/harp/harness/live/node"
)

// Healing with deadlines and checking it took: toxiproxy's client has no
// deadline (a hung API would hang the run), and a heal call that returned
// is not proof the link is clear. These tell harp's failure to heal apart
// from HAProxy's failure to come back.

// AllLinks are every directed link of the cluster, in order.
func (c *Cluster) AllLinks() []*Link {
	var ls []*Link
	for _, l := range c.links {
		ls = append(ls, l)
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].String() < ls[j].String() })
	return ls
}

// proxyState is what toxiproxy's API shows of a proxy.
type proxyState struct {
	Enabled bool `json:"enabled"`
	Toxics  []struct {
		Name string `json:"name"`
	} `json:"toxics"`
}

func (l *Link) apiCall(ctx context.Context, method, path string, body io.Reader, out any) error {
	err := l.apiCallOnce(ctx, method, path, body, out)
	// A read of the link proxy that failed is asked again, twice: one
	// lost answer is no link in an unknown state.
	for try := 1; err != nil && method == "GET" && try < 3 && ctx.Err() == nil; try++ {
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(try) * 100 * time.Millisecond):
		}
		err = l.apiCallOnce(ctx, method, path, body, out)
	}
	return err
}

func (l *Link) apiCallOnce(ctx context.Context, method, path string, body io.Reader, out any) error {
	if err := nemesis.Toxiproxy(method + " " + l.String() + path); err != nil {
		return fmt.Errorf("link %s: %w", l, err)
	}
	req, err := http.NewRequestWithContext(ctx, method, l.api+"/proxies/"+l.String()+path, body)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("link %s: %w", l, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("link %s: %s %s: %w", l, method, path, err)
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("link %s: %s %s: %s: %s", l, method, path, resp.Status, strings.TrimSpace(string(data)))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("link %s: toxiproxy's answer: %w", l, err)
		}
	}
	return nil
}

// Restore removes every toxic of the link and enables it, like Clear,
// each call bounded by ctx.
func (l *Link) Restore(ctx context.Context) error {
	var st proxyState
	if err := l.apiCall(ctx, "GET", "", nil, &st); err != nil {
		return err
	}
	for _, t := range st.Toxics {
		if err := l.apiCall(ctx, "DELETE", "/toxics/"+t.Name, nil, nil); err != nil && !strings.Contains(err.Error(), "not found") {
			return err
		}
	}
	if !st.Enabled {
		if err := l.apiCall(ctx, "POST", "", strings.NewReader(`{"enabled":true}`), nil); err != nil {
			return err
		}
		l.proxy.Enabled = true // the client's copy, which Down and Up save whole
	}
	return nil
}

// Fault says what the link proxy shows on the link now: "" when it is
// clear (enabled, no toxic).
func (l *Link) Fault(ctx context.Context) (string, error) {
	var st proxyState
	if err := l.apiCall(ctx, "GET", "", nil, &st); err != nil {
		return "", err
	}
	var what []string
	if !st.Enabled {
		what = append(what, "down")
	}
	for _, t := range st.Toxics {
		what = append(what, t.Name)
	}
	if len(what) == 0 {
		return "", nil
	}
	return l.String() + ": " + strings.Join(what, " "), nil
}

// Faulted lists the links the link proxy shows faulted (Fault), nil when
// every link is clear.
func (c *Cluster) Faulted(ctx context.Context) ([]string, error) {
	var out []string
	for _, l := range c.AllLinks() {
		f, err := l.Fault(ctx)
		if err != nil {
			return nil, err
		}
		if f != "" {
			out = append(out, f)
		}
	}
	return out, nil
}

// Paused says whether Docker shows the member's container paused.
func (c *Cluster) Paused(ctx context.Context, m *Member) (bool, error) {
	res, err := c.Docker.ContainerInspect(ctx, m.Node.ContainerID(), client.ContainerInspectOptions{})
	if err != nil {
		return false, err
	}
	return res.Container.State != nil && res.Container.State.Paused, nil
}

// SessionsDown reads every node's show peers once and lists the sessions
// not established ("node1->node2 (last_status=...)"); an error names the
// nodes whose show peers could not be read (then the list says nothing).
func (c *Cluster) SessionsDown(ctx context.Context) ([]string, error) {
	var down []string
	var errs []error
	for _, m := range c.Members {
		sec, err := m.Node.Section(ctx, node.StatsSocket, c.Section)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: show peers: %w", m.Name, err))
			continue
		}
		for _, p := range sec.Peers {
			if !p.Local && !p.Established() {
				down = append(down, fmt.Sprintf("%s->%s (last_status=%s)", m.Name, p.Name, p.LastStatus))
			}
		}
	}
	return down, errors.Join(errs...)
}
