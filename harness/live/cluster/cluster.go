// Package cluster runs several HAProxy nodes whose stick tables are
// replicated by one peers section, on a private Docker network where each
// node has its own fixed address and peer line, and can cut one node off
// the network and bring it back.
package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"

	"github.com/harp-project/harp/harness/core/config"
	"github.com/harp-project/harp/harness/live/engine"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/images"
)

// PeerPort is where every node's local peer listens on the network.
const PeerPort = 10000

// UserSocket is the container port of each node's user-level stats socket
// (the admin one is node.StatsPort).
const UserSocket = "9997/tcp"

// Identity says how a node learns its local peer name.
type Identity string

const (
	ByLocalpeer Identity = "localpeer" // global localpeer <name> (the default)
	ByFlag      Identity = "-L"        // haproxy -L <name>
	ByHostname  Identity = "hostname"  // neither: HAProxy takes the host name
)

// Table is a stick table of the peers section.
type Table struct {
	Name  string // e.g. "tbl"
	Type  string // "string len 32", "ip", "integer"
	Store string // "gpc0,http_req_cnt"
	// Expire is the entries' lifetime ("" is 1h).
	Expire string
	// Size is how many entries it holds at most ("" is 10k).
	Size string
}

// MemberDef describes one node of a cluster (its name, identity, tables).
type MemberDef struct {
	Name     string   // its peer line's name
	Identity Identity // how it learns its name (default ByLocalpeer)
	// As is the name it actually takes (localpeer, -L or hostname), when it
	// differs from Name: an identity that matches no peer line.
	As     string
	Tables []Table // nil: the cluster's tables
}

// Options describe a cluster.
type Options struct {
	Image   *images.Image
	RunID   string
	Section string      // peers section name (default "cluster")
	Nodes   []MemberDef // default: three nodes node1..node3
	Tables  []Table
	Threads int
	CPUs    float64 // each node's share of CPU time (0: no limit)
	// HTTPRules are more `http-request` rules of the HTTP frontend, after
	// it tracks the x-key header in sc0 (e.g. "sc-inc-gpc0(0)").
	HTTPRules []string
	// Links routes every directed peer link through a proxy of the link
	// proxy (toxiproxy), so Link faults can degrade it; Builder makes the
	// link proxy's image.
	Links   bool
	Builder *images.Builder
}

// Member is one running node.
type Member struct {
	MemberDef
	IP     netip.Addr
	Node   *node.Node
	Config string
	// HTTP is the loopback address of the node's HTTP frontend, whose
	// requests track their x-key header in the first table.
	HTTP string
	cut  bool
}

// Cluster is a running set of nodes.
type Cluster struct {
	Options
	Docker  *client.Client
	Network *testcontainers.DockerNetwork
	Members []*Member
	mu      sync.Mutex

	linkProxy testcontainers.Container
	linkIP    netip.Addr
	links     map[[2]string]*Link
}

// DefaultTables is one table tracked by HTTP traffic.
var DefaultTables = []Table{{Name: "tbl", Type: "string len 32", Store: "gpc0,http_req_cnt"}}

// Start creates the network and starts every node; on failure nothing is
// left running.
func Start(ctx context.Context, docker *client.Client, o Options) (_ *Cluster, err error) {
	if o.Section == "" {
		o.Section = "cluster"
	}
	if len(o.Nodes) == 0 {
		o.Nodes = Nodes(3)
	}
	if len(o.Tables) == 0 {
		o.Tables = DefaultTables
	}
	if o.Threads == 0 {
		o.Threads = 1
	}
	c := &Cluster{Options: o, Docker: docker}
	defer func() {
		if err != nil {
			c.Stop(context.WithoutCancel(ctx))
		}
	}()
	subnet, err := c.newNetwork(ctx)
	if err != nil {
		return nil, err
	}
	base := subnet.Addr()
	for i, s := range o.Nodes {
		ip := base
		for range 10 + i {
			ip = ip.Next()
		}
		c.Members = append(c.Members, &Member{MemberDef: s, IP: ip})
	}
	if o.Links {
		if o.Builder == nil {
			return nil, fmt.Errorf("a cluster with links needs an image builder (for the link proxy)")
		}
		if err := c.startLinks(ctx, o.Builder, subnet); err != nil {
			return nil, err
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(c.Members))
	for i, m := range c.Members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.start(ctx, m)
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	return c, nil
}

// Nodes names n default nodes node1..noden.
func Nodes(n int) []MemberDef {
	var s []MemberDef
	for i := 1; i <= n; i++ {
		s = append(s, MemberDef{Name: fmt.Sprintf("node%d", i)})
	}
	return s
}

// newNetwork makes a bridge network with a subnet of its own (fixed
// addresses need one), trying private /24s until one is free.
func (c *Cluster) newNetwork(ctx context.Context) (netip.Prefix, error) {
	var last error
	for range 20 {
		p := netip.MustParsePrefix(fmt.Sprintf("10.%d.%d.0/24", 200+rand.IntN(50), rand.IntN(256)))
		nw, err := tcnetwork.New(ctx, tcnetwork.WithLabels(engine.Labels(c.RunID)), tcnetwork.WithInternal(),
			tcnetwork.WithIPAM(&network.IPAM{Driver: "default", Config: []network.IPAMConfig{{Subnet: p}}}))
		if err == nil {
			c.Network = nw
			return p, nil
		}
		last = err
		if !strings.Contains(err.Error(), "overlap") {
			break
		}
	}
	return netip.Prefix{}, fmt.Errorf("creating the cluster network: %w", last)
}

// config renders a member's configuration.
func (c *Cluster) config(m *Member) (string, error) {
	type peer struct {
		Name string
		Addr netip.Addr
		Port int
	}
	var peers []peer
	for _, x := range c.Members {
		p := peer{x.Name, x.IP, PeerPort}
		if l := c.Link(m, x); l != nil { // m reaches x through the link proxy
			p.Addr, p.Port = c.linkIP, l.Port
		}
		peers = append(peers, p)
	}
	tables := m.Tables
	if tables == nil {
		tables = c.Tables
	}
	local := ""
	if m.Identity == "" || m.Identity == ByLocalpeer {
		local = m.name()
	}
	return config.Render("cluster.cfg.tmpl", map[string]any{
		"Threads": c.Threads, "LocalPeer": local, "Section": c.Section, "Peers": peers, "PeerPort": PeerPort, "Tables": tables,
		"HTTPRules": c.HTTPRules,
	})
}

// name is the local peer name the node takes.
func (m *Member) name() string {
	if m.As != "" {
		return m.As
	}
	return m.Name
}

func (c *Cluster) start(ctx context.Context, m *Member) error {
	cfg, err := c.config(m)
	m.Config = cfg
	if err != nil {
		return err
	}
	o := node.Options{Image: c.Image, Config: cfg, RunID: c.RunID, Name: m.Name, Network: c.Network, Aliases: []string{m.Name},
		IP: m.IP, Ports: []string{"8080/tcp", UserSocket}, Hostname: m.Name, CPUs: c.CPUs}
	switch m.Identity {
	case ByFlag:
		o.Args = []string{"-L", m.name()}
	case ByHostname:
		o.Hostname = m.name()
	}
	n, err := node.Start(ctx, c.Docker, o)
	if err != nil {
		return err
	}
	m.Node = n
	m.HTTP, err = n.Addr(ctx, "8080/tcp")
	return err
}

// Stop stops every node and removes the network.
func (c *Cluster) Stop(ctx context.Context) {
	for _, m := range c.Members {
		if m.Node != nil {
			m.Node.Stop(ctx)
		}
	}
	if c.linkProxy != nil {
		c.linkProxy.Terminate(ctx)
	}
	if c.Network != nil {
		c.Network.Remove(ctx)
	}
}

// StopWithin stops the cluster even after ctx ended, within d: a hung
// Docker must not hang the run.
func (c *Cluster) StopWithin(ctx context.Context, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	defer cancel()
	c.Stop(ctx)
}

// Cut disconnects a member from the cluster network: it keeps running and
// harp still reaches its CLI (published on loopback), but no peer does.
func (c *Cluster) Cut(ctx context.Context, m *Member) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.Docker.NetworkDisconnect(ctx, c.Network.ID, client.NetworkDisconnectOptions{Container: m.Node.ContainerID(), Force: true})
	if err != nil {
		return fmt.Errorf("cutting %s off the network: %w", m.Name, err)
	}
	m.cut = true
	return nil
}

// Heal reconnects a member at its own address.
func (c *Cluster) Heal(ctx context.Context, m *Member) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.Docker.NetworkConnect(ctx, c.Network.ID, client.NetworkConnectOptions{Container: m.Node.ContainerID(),
		EndpointConfig: &network.EndpointSettings{Aliases: []string{m.Name}, IPAMConfig: &network.EndpointIPAMConfig{IPv4Address: m.IP}}})
	if err != nil {
		return fmt.Errorf("reconnecting %s: %w", m.Name, err)
	}
	m.cut = false
	return nil
}

// Attached probes the path a Heal restores, as Docker sees it: whether the
// member is on the cluster network at its own address ("" when it is,
// else what Docker shows instead).
func (c *Cluster) Attached(ctx context.Context, m *Member) (string, error) {
	res, err := c.Docker.ContainerInspect(ctx, m.Node.ContainerID(), client.ContainerInspectOptions{})
	if err != nil {
		return "", err
	}
	ns := res.Container.NetworkSettings
	if ns == nil {
		return "Docker shows no network settings", nil
	}
	for name, ep := range ns.Networks {
		if ep != nil && (ep.NetworkID == c.Network.ID || name == c.Network.Name) {
			if ep.IPAddress != m.IP {
				return fmt.Sprintf("Docker shows %s on the cluster network at %s, not %s", m.Name, ep.IPAddress, m.IP), nil
			}
			return "", nil
		}
	}
	return fmt.Sprintf("Docker shows %s off the cluster network", m.Name), nil
}

// Restart stops a member's node and starts it again with the same config
// and address (a new process that must learn everything from its peers),
// then reads its published HTTP address anew.
func (c *Cluster) Restart(ctx context.Context, m *Member, timeout time.Duration) error {
	if err := m.Node.Restart(ctx, timeout); err != nil {
		return err
	}
	var err error
	m.HTTP, err = m.Node.Addr(ctx, "8080/tcp")
	return err
}

// LoadKeys are the first n keys a member's write load tracks (the reloads suite's writeLoad).
func LoadKeys(m *Member, n int) []string { return Keys("load-"+m.Name+"-", n) }
