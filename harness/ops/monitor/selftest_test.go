//go:build selftest

// selftest: together

package monitor_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/ops/selftest"
)

func TestSelf(t *testing.T) { selftest.Run(t, "harp doctor --watch under a real Prometheus") }

// alert is one alert as Prometheus's HTTP API gives it.
type alert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

// prometheus is a real Prometheus server (Debian's package) on loopback.
type prometheus struct{ base string }

func (p prometheus) get(path string, q url.Values, into any) error {
	resp, err := http.Get(p.base + path + "?" + q.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return err
	}
	if env.Status != "success" {
		return fmt.Errorf("%s: %s", path, env.Error)
	}
	return json.Unmarshal(env.Data, into)
}

// alerts are Prometheus's alerts named name in state ("firing",
// "pending"; "" any) whose labels include every one of labels.
func (p prometheus) alerts(name, state string, labels map[string]string) []alert {
	GinkgoHelper()
	var data struct{ Alerts []alert }
	// An answer Prometheus did not give is no empty list of alerts.
	Expect(p.get("/api/v1/alerts", nil, &data)).To(Succeed(), "Prometheus's alerts")
	var out []alert
next:
	for _, a := range data.Alerts {
		if a.Labels["alertname"] != name || state != "" && a.State != state {
			continue
		}
		for k, v := range labels {
			if a.Labels[k] != v {
				continue next
			}
		}
		out = append(out, a)
	}
	return out
}

// query is an instant query's series: labels and value.
func (p prometheus) query(q string) map[string]string {
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  []any             `json:"value"`
		} `json:"result"`
	}
	GinkgoHelper()
	Expect(p.get("/api/v1/query", url.Values{"query": {q}}, &data)).To(Succeed(), "Prometheus's answer to %s", q)
	out := map[string]string{}
	for _, r := range data.Result {
		out[r.Metric["instance"]+"->"+r.Metric["peer"]] = fmt.Sprint(r.Value[1])
	}
	return out
}

// freePort is a loopback port nothing listens on now (Prometheus takes
// its address from a flag and says nothing of a port 0).
func freePort() string {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().String()
}

// recorder stands between harp and one HAProxy's runtime socket and
// records each command harp sends.
type recorder struct {
	addr string
	mu   sync.Mutex
	cmds map[string]bool
	// fail is how the socket fails harp: "" not at all, "show peers" a
	// reset on that command (harp reads the others), "all" no answer to
	// anything until harp gives up (the socket cannot be read).
	fail string
}

func (r *recorder) failing(how string) {
	r.mu.Lock()
	r.fail = how
	r.mu.Unlock()
}

func record(upstream string) *recorder {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(l.Close)
	r := &recorder{addr: l.Addr().String(), cmds: map[string]bool{}}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go r.relay(c, upstream)
		}
	}()
	return r
}

// relay passes one non-interactive exchange on: the command line, then
// the answer until HAProxy closes.
func (r *recorder) relay(c net.Conn, upstream string) {
	defer c.Close()
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		return
	}
	r.mu.Lock()
	r.cmds[strings.TrimSpace(line)] = true
	fail := r.fail
	r.mu.Unlock()
	switch {
	case fail == "all":
		time.Sleep(3 * time.Second) // harp reads every socket within 1 s
		return
	case fail == strings.TrimSpace(line):
		c.(*net.TCPConn).SetLinger(0) // closed with a reset
		return
	}
	up, err := net.DialTimeout("tcp", upstream, 5*time.Second)
	if err != nil {
		return
	}
	defer up.Close()
	io.WriteString(up, line)
	up.(*net.TCPConn).CloseWrite()
	io.Copy(c, up)
}

func (r *recorder) sent() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for c := range r.cmds {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

var serving = regexp.MustCompile(`serving (http://[0-9.:]+)/ `)

// watch starts harp doctor --watch on a cluster's admin sockets (first
// replaced by first, when given) and gives its base URL.
func watch(ctx context.Context, c *cluster.Cluster, prefix, first string) (*gexec.Session, string) {
	GinkgoHelper()
	args := []string{"doctor", "--watch", "--listen", "127.0.0.1:0", "--interval", "1s"}
	for i, m := range c.Members {
		addr, err := m.Node.Addr(ctx, node.StatsPort)
		Expect(err).NotTo(HaveOccurred())
		if i == 0 && first != "" {
			addr = first
		}
		args = append(args, "--socket", addr, "--name", fmt.Sprintf("%s%d", prefix, i+1))
	}
	s := selftest.Harp(nil, args...)
	var base string
	Eventually(func() bool {
		m := serving.FindSubmatch(s.Err.Contents())
		if m != nil {
			base = string(m[1])
		}
		return m != nil
	}).WithTimeout(30 * time.Second).Should(BeTrue())
	return s, base
}

// A real Prometheus scrapes two harp monitors, each watching a real
// 3-node 3.4.7 cluster: A starts healthy, then loses a node and gets it
// back; B has a node whose local peer name matches no peer line and a
// table defined differently on another. The alerts are Prometheus's own,
// from the repository's rules with every `for:` cut to 2 s.
var _ = Describe("harp doctor --watch", Label("area:peers-cluster", "doctor", "monitor"), Ordered, func() {
	var a, b *cluster.Cluster
	var prom prometheus
	var harpA *gexec.Session
	var baseA, baseB string
	var rec *recorder
	tbl := cluster.Table{Name: "tbl", Type: "string len 32", Store: "gpc0,http_req_cnt"}

	BeforeAll(func(ctx SpecContext) {
		img := selftest.Image(ctx, "deb:experimental")
		var wg sync.WaitGroup
		var errA, errB error
		wg.Add(2)
		go func() {
			defer wg.Done()
			a, errA = cluster.Start(ctx, selftest.Docker, cluster.Options{Image: img, RunID: selftest.RunID})
		}()
		go func() {
			defer wg.Done()
			b, errB = cluster.Start(ctx, selftest.Docker, cluster.Options{Image: img, RunID: selftest.RunID,
				Tables: []cluster.Table{tbl, {Name: "odd", Type: "string len 32", Store: "gpc0"}},
				Nodes: []cluster.MemberDef{{Name: "node1"},
					{Name: "node2", Tables: []cluster.Table{tbl, {Name: "odd", Type: "integer", Store: "gpc0"}}},
					{Name: "node3", As: "node3-typo"}}})
		}()
		wg.Wait()
		for _, c := range []*cluster.Cluster{a, b} {
			if c != nil {
				DeferCleanup(func() { c.StopWithin(context.Background(), time.Minute) })
			}
		}
		Expect(errA).NotTo(HaveOccurred())
		Expect(errB).NotTo(HaveOccurred())
		Expect(a.WaitSockets(ctx, 15*time.Second)).To(Succeed())
		Expect(b.WaitSockets(ctx, 15*time.Second)).To(Succeed())
		Expect(a.WaitMesh(ctx, cluster.MeshTimeout)).To(BeEmpty())

		first, err := a.Members[0].Node.Addr(ctx, node.StatsPort)
		Expect(err).NotTo(HaveOccurred())
		rec = record(first)
		var harpB *gexec.Session
		harpA, baseA = watch(ctx, a, "a", rec.addr)
		harpB, baseB = watch(ctx, b, "b", "")
		DeferCleanup(func() { harpA.Kill(); harpB.Kill() })

		// The repository's rules, every `for:` cut to 2 s.
		dir := GinkgoT().TempDir()
		rules, err := os.ReadFile(filepath.Join(selftest.Root(), "fixtures", "prometheus", "harp-peers.rules.yml"))
		Expect(err).NotTo(HaveOccurred())
		fors := regexp.MustCompile(`(?m)^(\s+for: )\S+$`)
		Expect(fors.FindAll(rules, -1)).To(HaveLen(8))
		Expect(os.WriteFile(filepath.Join(dir, "rules.yml"), fors.ReplaceAll(rules, []byte("${1}2s")), 0o644)).To(Succeed())
		cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: harp
    honor_labels: true
    static_configs:
      - targets: [%q, %q]
`, filepath.Join(dir, "rules.yml"), strings.TrimPrefix(baseA, "http://"), strings.TrimPrefix(baseB, "http://"))
		Expect(os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644)).To(Succeed())
		listen := freePort()
		cmd := exec.Command("prometheus", "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
			"--web.listen-address="+listen, "--log.level=warn")
		ps, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred(), "Debian's prometheus package (make deps installs it)")
		DeferCleanup(func() { ps.Terminate().Wait(10 * time.Second) })
		prom = prometheus{base: "http://" + listen}
		Eventually(func() []string {
			var data struct {
				ActiveTargets []struct{ Health string } `json:"activeTargets"`
			}
			prom.get("/api/v1/targets", nil, &data)
			var hs []string
			for _, t := range data.ActiveTargets {
				hs = append(hs, t.Health)
			}
			return hs
		}).WithTimeout(30*time.Second).WithPolling(500*time.Millisecond).Should(Equal([]string{"up", "up"}), "Prometheus scrapes both monitors")
	}, NodeTimeout(3*time.Minute))

	It("sees the healthy cluster: every link up from both ends, no alert", func(ctx SpecContext) {
		// A's alerts, in state ("" any).
		alertsOfA := func(state string) []alert {
			var as []alert
			for _, name := range []string{"HarpPeerLinkDown", "HarpPeerIdentityMismatch", "HarpTableDefinitionMismatch", "HarpSocketUnreachable", "HarpSocketBelowAdmin", "HarpCannotSeeNode"} {
				for _, al := range prom.alerts(name, state, nil) {
					if strings.HasPrefix(al.Labels["instance"], "a") || strings.HasPrefix(al.Labels["peer"], "a") {
						as = append(as, al)
					}
				}
			}
			return as
		}
		// The first reads may predate the mesh, and a read slower than
		// the 1 s interval on a loaded machine is a socket harp could not
		// read: either leaves a pending alert for a moment. The healthy
		// state is one where every link is up, the diagnosis is ok and no
		// alert is even pending; from there none may fire.
		Eventually(func(g Gomega) {
			g.Expect(prom.query(`harp_peer_link_established{instance=~"a."}`)).To(Equal(map[string]string{
				"a1->a2": "1", "a1->a3": "1", "a2->a1": "1", "a2->a3": "1", "a3->a1": "1", "a3->a2": "1"}))
			g.Expect(prom.query(`harp_doctor_finding{code="ok"}`)).To(HaveKeyWithValue(strings.TrimPrefix(baseA, "http://")+"->", "1"))
			g.Expect(alertsOfA("")).To(BeEmpty())
		}).WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		Consistently(func() []alert { return alertsOfA("firing") }).WithTimeout(4 * time.Second).WithPolling(500 * time.Millisecond).Should(BeEmpty())
	}, NodeTimeout(time.Minute))

	It("fires the link alert when a node is cut off, keeps it while harp cannot read a node, and resolves it once healed", func(ctx SpecContext) {
		a3 := a.Members[2]
		t0 := time.Now()
		Expect(a.Cut(ctx, a3)).To(Succeed())
		Eventually(func() []alert {
			return prom.alerts("HarpPeerLinkDown", "firing", map[string]string{"instance": "a1", "peer": "a3"})
		}).
			WithTimeout(60 * time.Second).WithPolling(500 * time.Millisecond).ShouldNot(BeEmpty())
		fired := time.Since(t0)
		Expect(prom.alerts("HarpPeerLinkDown", "", map[string]string{"instance": "a1", "peer": "a2"})).To(BeEmpty(), "only the cut node's links")
		Eventually(func() []alert {
			return prom.alerts("HarpPeerLinkDown", "firing", map[string]string{"instance": "a3", "peer": "a1"})
		}).WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).ShouldNot(BeEmpty())

		// harp then loses sight of a1 (#40): its show peers fails, then
		// its socket cannot be read at all. Neither end's alert on the cut
		// link ever leaves firing; a1 is an alert itself, and never a
		// socket below admin level.
		bothFiring := func() bool {
			return len(prom.alerts("HarpPeerLinkDown", "firing", map[string]string{"instance": "a1", "peer": "a3"})) == 1 &&
				len(prom.alerts("HarpPeerLinkDown", "firing", map[string]string{"instance": "a3", "peer": "a1"})) == 1
		}
		for _, how := range []string{"show peers", "all"} {
			rec.failing(how)
			Consistently(bothFiring).WithTimeout(8*time.Second).WithPolling(250*time.Millisecond).Should(BeTrue(), "harp failing on %s", how)
			Eventually(func() []alert { return prom.alerts("HarpCannotSeeNode", "firing", map[string]string{"instance": "a1"}) }).
				WithTimeout(10*time.Second).WithPolling(500*time.Millisecond).ShouldNot(BeEmpty(), "harp failing on %s", how)
			Expect(prom.alerts("HarpSocketBelowAdmin", "", map[string]string{"instance": "a1"})).To(BeEmpty())
			Expect(prom.query(`harp_peer_link_unknown{instance="a1"}`)).To(Equal(map[string]string{"a1->a2": "1", "a1->a3": "1"}))
		}
		Expect(prom.alerts("HarpPeerLinkDown", "", map[string]string{"instance": "a1", "peer": "a2"})).To(BeEmpty(), "a link up when last read is no link alert")
		rec.failing("")
		Eventually(func() []alert { return prom.alerts("HarpCannotSeeNode", "", map[string]string{"instance": "a1"}) }).
			WithTimeout(30*time.Second).WithPolling(500*time.Millisecond).Should(BeEmpty(), "a1 read again")
		Expect(bothFiring()).To(BeTrue())
		t1 := time.Now()
		Expect(a.Heal(ctx, a3)).To(Succeed())
		Eventually(func() []alert {
			var as []alert
			for _, al := range prom.alerts("HarpPeerLinkDown", "", nil) {
				if strings.HasPrefix(al.Labels["instance"], "a") {
					as = append(as, al)
				}
			}
			return as
		}).WithTimeout(90 * time.Second).WithPolling(500 * time.Millisecond).Should(BeEmpty())
		AddReportEntry(fmt.Sprintf("HarpPeerLinkDown firing %.1f s after the cut (for: 2s); resolved %.1f s after the heal", fired.Seconds(), time.Since(t1).Seconds()))
	}, NodeTimeout(5*time.Minute))

	It("fires the identity alert for a misnamed local peer, and the definition alert for a table defined differently", func(ctx SpecContext) {
		Eventually(func() []alert {
			return prom.alerts("HarpPeerIdentityMismatch", "firing", map[string]string{"instance": "b3", "code": "identity"})
		}).
			WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).ShouldNot(BeEmpty())
		Eventually(func() []alert {
			return prom.alerts("HarpTableDefinitionMismatch", "firing", map[string]string{"table": "cluster/odd", "code": "table-definition"})
		}).WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).ShouldNot(BeEmpty())
		Expect(prom.alerts("HarpTableDefinitionMismatch", "", map[string]string{"table": "cluster/tbl"})).To(BeEmpty())
		Expect(prom.alerts("HarpPeerIdentityMismatch", "", map[string]string{"instance": "b1"})).To(BeEmpty())
	}, NodeTimeout(time.Minute))

	It("renders the findings on its page in a real browser, without a script error", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		shot := filepath.Join(dir, "page.png")
		chromium := func(args ...string) (string, string) {
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			cmd := exec.CommandContext(cctx, "chromium", append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
				"--user-data-dir=" + filepath.Join(dir, "profile"), "--enable-logging=stderr", "--v=0"}, args...)...)
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			Expect(cmd.Run()).To(Succeed(), "Debian's chromium (make deps installs it): %s", errb.String())
			return out.String(), errb.String()
		}
		dom, logs := chromium("--dump-dom", baseB+"/")
		Expect(dom).To(MatchRegexp(`<body [^>]*data-ready="1"`), "the page's script ran to its end")
		Expect(dom).NotTo(MatchRegexp(`<body [^>]*data-script-error=`), "a script error on the page")
		Expect(logs).NotTo(ContainSubstring("Uncaught"))
		Expect(dom).To(ContainSubstring("<strong>Problem.</strong> Likely cause: b3: tables"))
		Expect(dom).To(ContainSubstring("[identity]</code> b3: tables"))
		Expect(dom).To(ContainSubstring("show peers lists no section cluster"))
		Expect(dom).To(ContainSubstring("[table-definition]</code> table cluster/odd is defined differently across instances"))
		Expect(dom).To(MatchRegexp(`<td>b2</td><td>type integer size \d+</td>`))
		_, logs = chromium("--screenshot="+shot, "--window-size=1280,1800", "--hide-scrollbars", baseB+"/")
		Expect(logs).NotTo(ContainSubstring("Uncaught"))
		st, err := os.Stat(shot)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Size()).To(BeNumerically(">", 20<<10), "a screenshot with something on it")
		if keep := os.Getenv("HARP_MONITOR_SCREENSHOT"); keep != "" {
			b, _ := os.ReadFile(shot)
			os.WriteFile(keep, b, 0o644)
		}
		resp, err := http.Get(baseA + "/healthz")
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(200))
	}, NodeTimeout(2*time.Minute))

	It("sent a real HAProxy only read-only commands, and stops cleanly on SIGINT", func(ctx SpecContext) {
		Expect(rec.sent()).To(Equal([]string{"show info", "show peers", "show table", "show table cluster/tbl"}))
		harpA.Interrupt()
		Eventually(harpA).WithTimeout(15 * time.Second).Should(gexec.Exit(0))
		Expect(string(harpA.Err.Contents())).To(MatchRegexp(`stopped after \d+ read\(s\)`))
		_, err := http.Get(baseA + "/healthz")
		Expect(err).To(HaveOccurred(), "no longer serving")
	}, NodeTimeout(time.Minute))
})
