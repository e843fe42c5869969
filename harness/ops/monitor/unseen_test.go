package monitor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/live/cli"
	"github.com/harp-project/harp/harness/ops/doctor"
)

// node is how one fake node answers in a phase: from a capture, with
// show peers timing out, or not at all.
type node struct{ sit, fail string }

// scripted reads the three captured nodes as named a1, a2, a3 (their
// local peer names are node1..node3, as in a real deployment where
// --name is not the peer name), each as the current phase says.
func scripted(phase func() map[string]node) func(context.Context) []doctor.Instance {
	names, socks := []string{"a1", "a2", "a3"}, []string{"node1", "node2", "node3"}
	return func(ctx context.Context) []doctor.Instance {
		return doctor.CollectAll(ctx, time.Second, names, socks, func(sock string) doctor.Query {
			n := phase()[sock]
			return func(_ context.Context, cmd string) (string, error) {
				switch {
				case n.fail == "socket":
					return "", fmt.Errorf("%w: dial unix /run/haproxy/%s.sock: connect: connection refused", cli.ErrNotSent, sock)
				case n.fail == cmd:
					return "", fmt.Errorf("read unix @->/run/haproxy/%s.sock: %w", sock, os.ErrDeadlineExceeded)
				}
				b, err := os.ReadFile(filepath.Join(captures("3.4.7-1", n.sit), sock, strings.NewReplacer(" ", "_", "/", "_").Replace(cmd)+".txt"))
				return string(b), err
			}
		})
	}
}

// alerting is what HarpPeerLinkDown fires on (fixtures/prometheus), read
// from the exposition: the links not established, as far as harp knows.
func alerting(t *testing.T, m *Monitor) []string {
	t.Helper()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fams {
		if f.GetName() != "harp_peer_link_established" && f.GetName() != "harp_peer_link_last_established" {
			continue
		}
		for _, s := range f.Metric {
			l := map[string]string{}
			for _, p := range s.Label {
				l[p.GetName()] = p.GetValue()
			}
			if metricValue(s) == 0 {
				out = append(out, l["instance"]+"->"+l["peer"])
			}
		}
	}
	sort.Strings(out)
	return out
}

// A node harp can no longer read keeps the links it last reported on in
// the exposition, a link that was down still down, with the node marked
// unseen; a timed-out show peers is never a socket below admin level;
// the node's links read again once it answers (#40).
func TestUnseenNodeKeepsItsLinks(t *testing.T) {
	healthy := map[string]node{"node1": {sit: "healthy"}, "node2": {sit: "healthy"}, "node3": {sit: "healthy"}}
	phase := healthy
	m := New(Options{Names: []string{"a1", "a2", "a3"}, Sockets: []string{"node1", "node2", "node3"}, Interval: time.Second, Read: scripted(func() map[string]node { return phase })})
	type want struct {
		name   string
		labels map[string]string
		v      float64 // -1: absent
	}
	link := func(from, to string) map[string]string {
		return map[string]string{"instance": from, "section": "cluster", "peer": to}
	}
	check := func(step string, alert []string, ws ...want) {
		t.Helper()
		if _, ok := m.ReadOnce(context.Background()); !ok {
			t.Fatalf("%s: read dropped", step)
		}
		if got := alerting(t, m); strings.Join(got, " ") != strings.Join(alert, " ") {
			t.Errorf("%s: links down as harp knows them %q, want %q", step, got, alert)
		}
		for _, w := range ws {
			got, ok := value(t, m, w.name, w.labels)
			if w.v == -1 && ok || w.v != -1 && (!ok || got != w.v) {
				t.Errorf("%s: %s%v = %v (present %v), want %v", step, w.name, w.labels, got, ok, w.v)
			}
		}
		if _, ok := value(t, m, "harp_doctor_findings", map[string]string{"code": "socket-level"}); ok {
			_, body, _ := get(t, m.Handler(), "/metrics")
			t.Errorf("%s: a socket below admin level, which none is:\n%s", step, regexp.MustCompile(`(?m)^harp_doctor_findings\{.*$`).FindAllString(body, -1))
		}
	}

	check("healthy", nil,
		want{"harp_peer_link_established", link("a2", "a3"), 1},
		want{"harp_peer_link_unknown", link("a2", "a3"), 0},
		want{"harp_peers_visible", map[string]string{"instance": "a2"}, 1})

	phase = map[string]node{"node1": {sit: "partition"}, "node2": {sit: "partition"}, "node3": {sit: "partition"}}
	check("a2's link to a3 cut", []string{"a2->a3"},
		want{"harp_peer_link_established", link("a2", "a3"), 0},
		want{"harp_peer_link_last_established", link("a2", "a3"), -1})

	// a2's show peers times out: its links are unknown, the one that was
	// down is still served down, the node is unseen.
	phase = map[string]node{"node1": {sit: "partition"}, "node2": {sit: "partition", fail: "show peers"}, "node3": {sit: "partition"}}
	unseen := []want{
		{"harp_peer_link_established", link("a2", "a3"), -1},
		{"harp_peer_link_last_established", link("a2", "a3"), 0},
		{"harp_peer_link_last_established", link("a2", "a1"), 1},
		{"harp_peer_link_unknown", link("a2", "a3"), 1},
		{"harp_peer_link_unknown", link("a2", "a1"), 1},
		{"harp_peer_link_unknown", link("a1", "a2"), 0},
		{"harp_peers_visible", map[string]string{"instance": "a2"}, 0},
		{"harp_peers_visible", map[string]string{"instance": "a1"}, 1},
		{"harp_doctor_finding", map[string]string{"code": "socket-level"}, 0},
		{"harp_doctor_findings", map[string]string{"code": "unreachable", "instance": "a2"}, 1},
	}
	check("a2's show peers timed out", []string{"a2->a3"}, append(unseen, want{"harp_socket_up", map[string]string{"instance": "a2"}, 1})...)
	check("a2's show peers timed out again", []string{"a2->a3"}, unseen...)
	if _, body, _ := get(t, m.Handler(), "/"); !strings.Contains(body, "<td>a2</td><td>a3</td><td class=\"bad\">UNKNOWN: a2 not read; DOWN at the last read") ||
		!strings.Contains(body, "harp could not read the socket&#39;s answer to show peers: the read timed out") || strings.Contains(body, "admin level") {
		t.Errorf("the page does not say a2 is unseen, its link to a3 down when last read:\n%s", body)
	}

	// Its socket cannot be read at all: the same.
	phase["node2"] = node{sit: "partition", fail: "socket"}
	check("a2's socket unreadable", []string{"a2->a3"}, append(unseen, want{"harp_socket_up", map[string]string{"instance": "a2"}, 0})...)

	// a3 unreadable too: a1's and a2's views of a3 keep a3's name.
	phase["node3"] = node{sit: "partition", fail: "socket"}
	check("a3 unreadable too", []string{"a2->a3"},
		want{"harp_peer_link_established", link("a1", "a3"), 1},
		want{"harp_peer_link_last_established", link("a2", "a3"), 0},
		want{"harp_peer_link_last_established", link("a3", "a2"), 1},
		want{"harp_peers_visible", map[string]string{"instance": "a3"}, 0})

	// Both answer again, healed: nothing unknown, nothing down.
	phase = healthy
	check("healed and read again", nil,
		want{"harp_peer_link_established", link("a2", "a3"), 1},
		want{"harp_peer_link_last_established", link("a2", "a3"), -1},
		want{"harp_peer_link_unknown", link("a2", "a3"), 0},
		want{"harp_peers_visible", map[string]string{"instance": "a2"}, 1})
}
