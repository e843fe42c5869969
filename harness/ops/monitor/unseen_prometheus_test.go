//go:build selftest

package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

// A real Prometheus (Debian's package) scrapes a monitor of three fake
// nodes and evaluates the repository's rules, every `for:` cut to 2 s:
// a2's link to a3 is cut and alerts; then harp cannot read a2 (its show
// peers times out, then its socket cannot be read): the link alert never
// leaves firing, and HarpCannotSeeNode fires for a2; once a2 answers,
// healed, both resolve (#40). No Docker: the nodes are captures.
func TestUnseenNodeUnderPrometheus(t *testing.T) {
	if _, err := exec.LookPath("prometheus"); err != nil {
		t.Skip("prometheus is not installed (make deps installs Debian's prometheus package)")
	}
	var mu sync.Mutex
	all := func(sit string) map[string]node {
		return map[string]node{"node1": {sit: sit}, "node2": {sit: sit}, "node3": {sit: sit}}
	}
	phase := all("healthy")
	set := func(p map[string]node) { mu.Lock(); phase = p; mu.Unlock() }
	m := New(Options{Names: []string{"a1", "a2", "a3"}, Sockets: []string{"node1", "node2", "node3"}, Interval: time.Second,
		Read: scripted(func() map[string]node { mu.Lock(); defer mu.Unlock(); return phase })})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- m.Serve(ctx, ln) }()
	defer func() { cancel(); <-served }()

	dir := t.TempDir()
	rules, err := os.ReadFile(filepath.Join("..", "..", "..", "fixtures", "prometheus", "harp-peers.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	rules = regexp.MustCompile(`(?m)^(\s+for: )\S+$`).ReplaceAll(rules, []byte("${1}2s"))
	if err := os.WriteFile(filepath.Join(dir, "rules.yml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [%q]\nscrape_configs:\n  - job_name: harp\n    honor_labels: true\n    static_configs:\n      - targets: [%q]\n",
		filepath.Join(dir, "rules.yml"), ln.Addr().String())
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	listen := free.Addr().String()
	free.Close()
	prom := exec.Command("prometheus", "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+listen, "--log.level=warn")
	prom.Stdout, prom.Stderr = os.Stderr, os.Stderr
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { prom.Process.Kill(); prom.Wait() }()

	// alerts are the states of the alerts named name with these labels.
	alerts := func(name string, labels map[string]string) []string {
		resp, err := http.Get("http://" + listen + "/api/v1/alerts")
		if err != nil {
			return []string{"error: " + err.Error()}
		}
		defer resp.Body.Close()
		var env struct {
			Data struct {
				Alerts []struct {
					Labels map[string]string
					State  string
				}
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
			return []string{"error: " + err.Error()}
		}
		var out []string
	next:
		for _, a := range env.Data.Alerts {
			if a.Labels["alertname"] != name {
				continue
			}
			for k, v := range labels {
				if a.Labels[k] != v {
					continue next
				}
			}
			out = append(out, a.State)
		}
		return out
	}
	firing := func(name string, labels map[string]string) bool {
		s := alerts(name, labels)
		return len(s) == 1 && s[0] == "firing"
	}
	eventually := func(what string, within time.Duration, cond func() bool) {
		t.Helper()
		for end := time.Now().Add(within); !cond(); time.Sleep(250 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("not within %s: %s", within, what)
			}
		}
	}
	a2a3 := map[string]string{"instance": "a2", "peer": "a3"}
	a2 := map[string]string{"instance": "a2"}

	set(all("partition"))
	eventually("HarpPeerLinkDown firing for a2->a3", 60*time.Second, func() bool { return firing("HarpPeerLinkDown", a2a3) })
	for _, step := range []struct {
		name string
		n    node
	}{{"a2's show peers times out", node{sit: "partition", fail: "show peers"}}, {"a2's socket cannot be read", node{sit: "partition", fail: "socket"}}} {
		p := all("partition")
		p["node2"] = step.n
		set(p)
		// A resolved alert would come back pending for 2 s: polled every
		// 250 ms, any gap shows.
		for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
			if s := alerts("HarpPeerLinkDown", a2a3); len(s) != 1 || s[0] != "firing" {
				t.Fatalf("%s: HarpPeerLinkDown for a2->a3 is %q, not firing", step.name, s)
			}
			if s := alerts("HarpSocketBelowAdmin", a2); len(s) > 0 {
				t.Fatalf("%s: HarpSocketBelowAdmin %q", step.name, s)
			}
		}
		eventually(step.name+": HarpCannotSeeNode firing for a2", 10*time.Second, func() bool { return firing("HarpCannotSeeNode", a2) })
		if s := alerts("HarpPeerLinkDown", map[string]string{"instance": "a2", "peer": "a1"}); len(s) > 0 {
			t.Errorf("%s: a link up when last read alerts: %q", step.name, s)
		}
	}
	set(all("healthy"))
	eventually("every alert resolved once a2 answers, healed", 30*time.Second, func() bool {
		return len(alerts("HarpPeerLinkDown", nil)) == 0 && len(alerts("HarpCannotSeeNode", nil)) == 0
	})
}
