package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/harp-project/harp/harness/live/nemesis"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/harp-project/harp/harness/live/engine"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/images"
)

// The link proxy's APIs: toxiproxy's, and that of harp's forwarders
// behind each toxiproxy proxy (they pass a direction's end on as a FIN,
// and half-close on demand).
const (
	linkAPIPort    = "8474/tcp"
	forwardAPIPort = "8475/tcp"
)

// Link is the directed peer link From -> To: the connections From opens
// to To's peer port go through a proxy of the cluster's link proxy
// (toxiproxy), whose toxics degrade them. A peers session runs on one such
// connection both ways: a fault on From -> To acts on the session when
// From's connection is the one the nodes kept.
type Link struct {
	From, To *Member
	Port     int // the proxy's port on the link proxy
	proxy    *toxiproxy.Proxy
	forward  string // harp's forwarder API
	api      string // toxiproxy's API (heal.go: calls with deadlines)
}

func (l *Link) String() string { return l.From.Name + "->" + l.To.Name }

// linkPort is the link proxy's port for the link from member i to j.
func linkPort(i, j int) int { return 20000 + 16*i + j }

// startLinks starts the link proxy on the cluster network (at the
// subnet's .250, its API published on loopback) and makes a proxy for
// every directed link; members' configs then name the proxies.
func (c *Cluster) startLinks(ctx context.Context, builder *images.Builder, subnet netip.Prefix) error {
	tag, err := builder.LinkProxyImage(ctx)
	if err != nil {
		return err
	}
	ip := subnet.Addr()
	for range 250 {
		ip = ip.Next()
	}
	nw := c.Network.ID
	ctr, err := testcontainers.Run(ctx, tag,
		testcontainers.WithEntrypoint(images.LinkProxyBinary),
		testcontainers.WithExposedPorts(linkAPIPort, forwardAPIPort),
		testcontainers.WithLabels(engine.Labels(c.RunID)),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = network.PortMap{}
			for _, p := range []string{linkAPIPort, forwardAPIPort} {
				hc.PortBindings[network.MustParsePort(p)] = []network.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1")}}
			}
		}),
		testcontainers.WithAdditionalLifecycleHooks(testcontainers.ContainerLifecycleHooks{
			PostCreates: []testcontainers.ContainerHook{func(ctx context.Context, ct testcontainers.Container) error {
				_, err := c.Docker.NetworkConnect(ctx, nw, client.NetworkConnectOptions{Container: ct.GetContainerID(),
					EndpointConfig: &network.EndpointSettings{Aliases: []string{"linkproxy"}, IPAMConfig: &network.EndpointIPAMConfig{IPv4Address: ip}}})
				return err
			}},
		}),
		// The image has no shell for a listening-port check: the API is
		// polled below.
		testcontainers.WithWaitStrategy(wait.ForMappedPort(linkAPIPort), wait.ForMappedPort(forwardAPIPort)),
	)
	if ctr != nil {
		c.linkProxy = ctr
	}
	if err != nil {
		return fmt.Errorf("starting the link proxy: %w", err)
	}
	mapped, err := ctr.MappedPort(ctx, linkAPIPort)
	if err != nil {
		return err
	}
	host := "http://" + net.JoinHostPort("127.0.0.1", mapped.Port()) // published on loopback only
	fmapped, err := ctr.MappedPort(ctx, forwardAPIPort)
	if err != nil {
		return err
	}
	forward := "http://" + net.JoinHostPort("127.0.0.1", fmapped.Port())

	api := toxiproxy.NewClient(host)
	var apiErr error
	if node.Poll(ctx, 10*time.Second, 100*time.Millisecond, func() (bool, error) {
		if _, apiErr = api.Proxies(); apiErr == nil {
			var resp *http.Response
			if resp, apiErr = http.Get(forward); apiErr == nil { // any answer: it listens
				resp.Body.Close()
			}
		}
		return apiErr == nil, nil
	}) != nil {
		return fmt.Errorf("the link proxy's API at %s never answered within 10s: %v", host, apiErr)
	}
	c.linkIP = ip
	c.links = map[[2]string]*Link{}
	for i, from := range c.Members {
		for j, to := range c.Members {
			if i == j {
				continue
			}
			l := &Link{From: from, To: to, Port: linkPort(i, j), forward: forward, api: host}
			// toxiproxy's proxy -> harp's forwarder -> the peer.
			fport := l.Port + 10000
			if err := l.post(ctx, "/forward", map[string]string{"name": l.String(), "listen": fmt.Sprintf("0.0.0.0:%d", fport), "upstream": fmt.Sprintf("%s:%d", to.IP, PeerPort)}); err != nil {
				return fmt.Errorf("link proxy: forwarder of %s: %w", l, err)
			}
			l.proxy, err = api.CreateProxy(l.String(), fmt.Sprintf("0.0.0.0:%d", l.Port), fmt.Sprintf("127.0.0.1:%d", fport))
			if err != nil {
				return fmt.Errorf("link proxy: creating %s: %w", l, err)
			}
			c.links[[2]string{from.Name, to.Name}] = l
		}
	}
	return nil
}

// Link is the directed link from -> to (nil when the cluster runs
// without Links).
func (c *Cluster) Link(from, to *Member) *Link {
	return c.links[[2]string{from.Name, to.Name}]
}

// Links are every directed link between a and b, both ways.
func (c *Cluster) Links(a, b *Member) []*Link {
	var ls []*Link
	for _, l := range []*Link{c.Link(a, b), c.Link(b, a)} {
		if l != nil {
			ls = append(ls, l)
		}
	}
	return ls
}

// toxic adds one toxic to both directions of the link's connections.
func (l *Link) toxic(kind string, attrs toxiproxy.Attributes) error {
	if err := nemesis.Toxiproxy("add toxic " + kind + " on " + l.String()); err != nil {
		return fmt.Errorf("link %s: %s: %w", l, kind, err)
	}
	for _, stream := range []string{"upstream", "downstream"} {
		if _, err := l.proxy.AddToxic(kind+"_"+stream, kind, stream, 1, attrs); err != nil {
			return fmt.Errorf("link %s: %s (%s): %w", l, kind, stream, err)
		}
	}
	return nil
}

// Latency delays every chunk of data by latency ± jitter, both ways.
func (l *Link) Latency(latency, jitter time.Duration) error {
	return l.toxic("latency", toxiproxy.Attributes{"latency": latency.Milliseconds(), "jitter": jitter.Milliseconds()})
}

// Bandwidth limits the link to kbps KB/s each way.
func (l *Link) Bandwidth(kbps int) error {
	return l.toxic("bandwidth", toxiproxy.Attributes{"rate": kbps})
}

// Slice cuts the data into segments of avg ± vary bytes, delay apart
// (HAProxy then reads messages in pieces).
func (l *Link) Slice(avg, vary int, delay time.Duration) error {
	return l.toxic("slicer", toxiproxy.Attributes{"average_size": avg, "size_variation": vary, "delay": delay.Microseconds()})
}

// SlowClose delays the close of each connection by delay.
func (l *Link) SlowClose(delay time.Duration) error {
	return l.toxic("slow_close", toxiproxy.Attributes{"delay": delay.Milliseconds()})
}

// Reset resets each connection (RST) after it has been open for after.
func (l *Link) Reset(after time.Duration) error {
	return l.toxic("reset_peer", toxiproxy.Attributes{"timeout": after.Milliseconds()})
}

// Stall stops the data; with close > 0 the connection is closed after
// that long, else it stays open and silent until the stall is cleared.
func (l *Link) Stall(close time.Duration) error {
	return l.toxic("timeout", toxiproxy.Attributes{"timeout": close.Milliseconds()})
}

// Limit closes each connection once it has carried n bytes each way.
func (l *Link) Limit(n int) error {
	return l.toxic("limit_data", toxiproxy.Attributes{"bytes": n})
}

// HalfClose sends a FIN one way on the link's open connections, the other
// way staying open: toward To (To reads the end of From's data) or, with
// toFrom, toward From. It says how many connections it half-closed.
func (l *Link) HalfClose(ctx context.Context, toFrom bool) (int, error) {
	dir := "upstream"
	if toFrom {
		dir = "downstream"
	}
	var out struct{ Connections int }
	err := l.postInto(ctx, "/halfclose", map[string]string{"name": l.String(), "direction": dir}, &out)
	return out.Connections, err
}

func (l *Link) post(ctx context.Context, path string, body map[string]string) error {
	return l.postInto(ctx, path, body, nil)
}

func (l *Link) postInto(ctx context.Context, path string, body map[string]string, out any) error {
	data, _ := json.Marshal(body)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(cctx, "POST", l.forward+path, bytes.NewReader(data))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("%s: %s: %s", path, resp.Status, strings.TrimSpace(string(msg)))
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}

// Down closes the link's connections and refuses new ones; Up opens it.
func (l *Link) Down() error {
	if err := nemesis.Toxiproxy("disable " + l.String()); err != nil {
		return err
	}
	return l.proxy.Disable()
}

// Up opens the link again after Down.
func (l *Link) Up() error {
	if err := nemesis.Toxiproxy("enable " + l.String()); err != nil {
		return err
	}
	return l.proxy.Enable()
}

// Clear removes every toxic and opens the link.
func (l *Link) Clear() error {
	if err := nemesis.Toxiproxy("clear " + l.String()); err != nil {
		return fmt.Errorf("link %s: %w", l, err)
	}
	ts, err := l.proxy.Toxics()
	if err != nil {
		return fmt.Errorf("link %s: %w", l, err)
	}
	for _, t := range ts {
		if err := l.proxy.RemoveToxic(t.Name); err != nil && !strings.Contains(err.Error(), "not found") {
			return fmt.Errorf("link %s: removing %s: %w", l, t.Name, err)
		}
	}
	return l.Up()
}

// Toxics names the faults on the link now, for records.
func (l *Link) Toxics() ([]string, error) {
	ts, err := l.proxy.Toxics()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%s %v", t.Name, t.Attributes))
	}
	return out, nil
}

// Pause freezes a whole node (docker pause: every process stopped, its
// sockets open); Resume thaws it.
func (c *Cluster) Pause(ctx context.Context, m *Member) error {
	_, err := c.Docker.ContainerPause(ctx, m.Node.ContainerID(), client.ContainerPauseOptions{})
	return err
}

// Resume thaws a node Pause froze.
func (c *Cluster) Resume(ctx context.Context, m *Member) error {
	_, err := c.Docker.ContainerUnpause(ctx, m.Node.ContainerID(), client.ContainerUnpauseOptions{})
	return err
}

// PauseWorker stops the member's current worker (SIGSTOP), its master
// running on; the pid is for ResumeWorker.
func (m *Member) PauseWorker(ctx context.Context) (int, error) {
	pid, err := m.Node.CurrentWorker(ctx)
	if err != nil {
		return 0, err
	}
	return pid, m.Node.KillWorker(ctx, pid, syscall.SIGSTOP)
}

// ResumeWorker continues a worker PauseWorker stopped.
func (m *Member) ResumeWorker(ctx context.Context, pid int) error {
	return m.Node.KillWorker(ctx, pid, syscall.SIGCONT)
}

// KillWorker kills the member's current worker (SIGKILL): the master
// logs the death (and, with exit-on-failure, stops).
func (m *Member) KillWorker(ctx context.Context) (int, error) {
	pid, err := m.Node.CurrentWorker(ctx)
	if err != nil {
		return 0, err
	}
	return pid, m.Node.KillWorker(ctx, pid, syscall.SIGKILL)
}
