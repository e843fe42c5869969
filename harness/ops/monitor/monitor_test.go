package monitor

import (
	"bufio"
	"context"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/harp-project/harp/harness/ops/doctor"
)

func captures(version, situation string) string {
	return filepath.Join("..", "..", "..", "fixtures", "captures", version, "cluster", situation)
}

// sent records every command the fake sockets received.
type sent struct {
	mu   sync.Mutex
	cmds map[string]int
}

func (s *sent) set() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for c := range s.cmds {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// serveCapture answers each connection's command on loopback TCP from
// what a real node answered (fixtures/captures), as HAProxy's CLI does in
// its non-interactive mode: one command, the answer, the end.
func serveCapture(t *testing.T, dir string, rec *sent) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				cmd, _ := bufio.NewReader(c).ReadString('\n')
				cmd = strings.TrimSpace(cmd)
				rec.mu.Lock()
				rec.cmds[cmd]++
				rec.mu.Unlock()
				b, err := os.ReadFile(filepath.Join(dir, strings.NewReplacer(" ", "_", "/", "_").Replace(cmd)+".txt"))
				if err != nil {
					b = []byte("Unknown command, but maybe one of the following ones is a better match:\n")
				}
				c.Write(b)
			}()
		}
	}()
	return l.Addr().String()
}

// watch starts a monitor on the three captured nodes of a situation.
func watch(t *testing.T, dir string, rec *sent) *Monitor {
	t.Helper()
	var names, socks []string
	for _, n := range []string{"node1", "node2", "node3"} {
		names, socks = append(names, n), append(socks, serveCapture(t, filepath.Join(dir, n), rec))
	}
	return New(Options{Names: names, Sockets: socks, Interval: time.Second})
}

func get(t *testing.T, h http.Handler, path string) (int, string, http.Header) {
	t.Helper()
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, httptest.NewRequest("GET", path, nil))
	return rr.Code, rr.Body.String(), rr.Header()
}

// value finds one series in what the registry gathers.
func value(t *testing.T, m *Monitor, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.Metric {
			have := map[string]string{}
			for _, l := range s.Label {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			return metricValue(s), true
		}
	}
	return 0, false
}

func metricValue(s *dto.Metric) float64 {
	switch {
	case s.Gauge != nil:
		return s.Gauge.GetValue()
	case s.Counter != nil:
		return s.Counter.GetValue()
	}
	return -1
}

// The exact set of commands a monitor sends: read-only, whatever it reads.
func TestSendsOnlyReadOnlyCommands(t *testing.T) {
	for _, sit := range []string{"healthy", "tables", "user-socket", "identity", "partition"} {
		rec := &sent{cmds: map[string]int{}}
		m := watch(t, captures("3.4.7-1", sit), rec)
		for range 3 {
			if _, ok := m.ReadOnce(context.Background()); !ok {
				t.Fatal("read dropped")
			}
		}
		want := []string{"show info", "show peers", "show table", "show table cluster/tbl"}
		if sit == "tables" {
			want = []string{"show info", "show peers", "show table", "show table cluster/keytype", "show table cluster/tbl"}
		}
		if got := rec.set(); !slices.Equal(got, want) {
			t.Errorf("%s: commands sent %q, want exactly %q", sit, got, want)
		}
	}
}

// A healthy cluster's links, tables and findings as metrics, text and page.
func TestHealthyClusterMetrics(t *testing.T) {
	m := watch(t, captures("3.4.7-1", "healthy"), &sent{cmds: map[string]int{}})
	h := m.Handler()
	if code, body, _ := get(t, h, "/healthz"); code != 503 || !strings.Contains(body, "no read") {
		t.Errorf("healthz before the first read: %d %q", code, body)
	}
	m.ReadOnce(context.Background())
	if code, body, _ := get(t, h, "/healthz"); code != 200 || !strings.HasPrefix(body, "ok: read 1") {
		t.Errorf("healthz: %d %q", code, body)
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"harp_doctor_healthy", nil, 1},
		{"harp_doctor_reads_total", nil, 1},
		{"harp_socket_up", map[string]string{"instance": "node2"}, 1},
		{"harp_socket_read_errors_total", map[string]string{"instance": "node2"}, 0},
		{"harp_peer_link_established", map[string]string{"instance": "node1", "section": "cluster", "peer": "node3"}, 1},
		{"harp_peer_session_age_seconds", map[string]string{"instance": "node1", "peer": "node3"}, 6},
		{"harp_peer_connections_total", map[string]string{"instance": "node1", "peer": "node2"}, 2},
		{"harp_peers_resync_finished", map[string]string{"instance": "node1", "section": "cluster"}, 1},
		{"harp_peers_section_info", map[string]string{"instance": "node2", "section": "cluster", "local_peer": "node2"}, 1},
		{"harp_table_size", map[string]string{"instance": "node1", "table": "cluster/tbl"}, 10240},
		{"harp_table_used", map[string]string{"instance": "node1", "table": "cluster/tbl"}, 10},
		{"harp_table_keys", map[string]string{"table": "cluster/tbl"}, 10},
		{"harp_table_missing_keys", map[string]string{"instance": "node3", "table": "cluster/tbl"}, 0},
		{"harp_table_divergence_ratio", map[string]string{"table": "cluster/tbl"}, 0},
		{"harp_table_differing_entries", map[string]string{"table": "cluster/tbl"}, 0},
		{"harp_peer_table_updates_pushed", map[string]string{"instance": "node1", "peer": "node3", "table": "cluster/tbl"}, 10},
		{"harp_peer_table_updates_acked", map[string]string{"instance": "node1", "peer": "node3", "table": "cluster/tbl"}, 10},
		{"harp_peer_table_update_lag", map[string]string{"instance": "node1", "peer": "node3", "table": "cluster/tbl"}, 0},
		{"harp_doctor_finding", map[string]string{"code": "ok"}, 1},
		{"harp_doctor_finding", map[string]string{"code": "link-down"}, 0},
		{"harp_doctor_finding", map[string]string{"code": "unreachable"}, 0},
	} {
		if got, ok := value(t, m, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	code, body, hdr := get(t, h, "/metrics")
	if code != 200 || !strings.Contains(body, `harp_peer_link_established{instance="node1",peer="node2",section="cluster"} 1`) {
		t.Errorf("/metrics: %d\n%s", code, body)
	}
	if !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Errorf("/metrics content type %q", hdr.Get("Content-Type"))
	}
	if code, _, _ := get(t, h, "/nope"); code != 404 {
		t.Errorf("/nope: %d", code)
	}
}

// Keys (client addresses, session ids) never leave: not in a label, not
// on the page. The captures' keys are cap-000 to cap-009.
func TestNoKeyLeaves(t *testing.T) {
	for _, sit := range []string{"healthy", "tables", "partition", "identity", "user-socket"} {
		m := watch(t, captures("3.4.7-1", sit), &sent{cmds: map[string]int{}})
		m.ReadOnce(context.Background())
		for _, path := range []string{"/metrics", "/", "/healthz"} {
			_, body, _ := get(t, m.Handler(), path)
			if strings.Contains(body, "cap-0") {
				t.Errorf("%s: %s holds a table key", sit, path)
			}
		}
	}
}

// The page says what the doctor found, in its words, with every table.
func TestPageHoldsTheDiagnosis(t *testing.T) {
	m := watch(t, captures("3.4.7-1", "identity"), &sent{cmds: map[string]int{}})
	h := m.Handler()
	if code, body, _ := get(t, h, "/"); code != 200 || !strings.Contains(body, "No read has finished yet") {
		t.Errorf("page before the first read: %d", code)
	}
	s, _ := m.ReadOnce(context.Background())
	code, body, hdr := get(t, h, "/")
	if code != 200 || !strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("page: %d %v", code, hdr)
	}
	if s.D.Healthy || len(s.D.Findings) == 0 {
		t.Fatalf("identity capture diagnosed healthy: %+v", s.D.Findings)
	}
	for _, f := range s.D.Findings {
		if !strings.Contains(body, html.EscapeString(f.Message)) {
			t.Errorf("page lacks the finding %q", f.Message)
		}
	}
	if !strings.Contains(body, "Likely cause: "+html.EscapeString(s.D.Cause)) || !strings.Contains(body, "cluster/tbl") {
		t.Errorf("page lacks the cause or the table:\n%s", body)
	}
	// The CSP allows the page's own scripts and style, by hash.
	for _, part := range []string{errScript, mainScript} {
		if !strings.Contains(body, "<script>"+part+"</script>") || !strings.Contains(csp, hash(part)) {
			t.Errorf("script not served verbatim or not in the CSP: %.40q", part)
		}
	}
	if strings.Contains(body, "http://") || strings.Contains(body, "https://") || regexp.MustCompile(`src=`).MatchString(body) {
		t.Error("the page loads something from elsewhere")
	}
}

// A socket that cannot be read is a metric and a finding, never a gap.
func TestUnreachableIsAMetric(t *testing.T) {
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := dead.Addr().String()
	dead.Close()
	rec := &sent{cmds: map[string]int{}}
	ok := serveCapture(t, filepath.Join(captures("3.4.7-1", "healthy"), "node1"), rec)
	m := New(Options{Names: []string{"node1", "node2"}, Sockets: []string{ok, addr}, Interval: time.Second})
	m.ReadOnce(context.Background())
	m.ReadOnce(context.Background())
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"harp_socket_up", map[string]string{"instance": "node2"}, 0},
		{"harp_socket_up", map[string]string{"instance": "node1"}, 1},
		{"harp_socket_read_errors_total", map[string]string{"instance": "node2"}, 2},
		{"harp_doctor_finding", map[string]string{"code": "unreachable"}, 1},
		{"harp_doctor_findings", map[string]string{"code": "unreachable", "instance": "node2"}, 1},
		{"harp_doctor_healthy", nil, 0},
	} {
		if got, ok := value(t, m, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
}

// Serve reads each interval and stops when its context ends, closing the
// port.
func TestServeStopsWhenCancelled(t *testing.T) {
	rec := &sent{cmds: map[string]int{}}
	m := New(Options{Names: []string{"node1"}, Sockets: []string{serveCapture(t, filepath.Join(captures("3.4.7-1", "healthy"), "node1"), rec)}, Interval: time.Second})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx, ln) }()
	deadline := time.Now().Add(10 * time.Second)
	for (m.Last() == nil || m.Last().N < 2) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if m.Last() == nil || m.Last().N < 2 {
		t.Fatal("no second read within 10 s at a 1 s interval")
	}
	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz: %d %s", resp.StatusCode, b)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve still running 10 s after its context ended")
	}
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Error("still listening after Serve returned")
	}
}

// Every metric the alert rules name is one the monitor serves.
func TestRulesNameServedMetrics(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "fixtures", "prometheus", "harp-peers.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{"harp_doctor_reads_total": true, "harp_socket_read_errors_total": true}
	for _, d := range allDescs {
		name := regexp.MustCompile(`fqName: "([^"]+)"`).FindStringSubmatch(d.String())[1]
		served[name] = true
	}
	exprs := regexp.MustCompile(`(?m)^\s+expr: (.*)$`).FindAllStringSubmatch(string(b), -1)
	if len(exprs) < 5 {
		t.Fatalf("%d rules", len(exprs))
	}
	for _, e := range exprs {
		for _, name := range regexp.MustCompile(`harp_[a-z_]+`).FindAllString(e[1], -1) {
			if !served[name] {
				t.Errorf("a rule names %s, which harp does not serve: %s", name, e[1])
			}
		}
	}
	for _, code := range regexp.MustCompile(`code=~?"([^"]+)"`).FindAllStringSubmatch(string(b), -1) {
		for _, c := range strings.Split(code[1], "|") {
			if !slices.Contains(doctor.Codes, doctor.Code(c)) {
				t.Errorf("a rule names the finding code %q, which the doctor never gives", c)
			}
		}
	}
}

// The rules file is valid and its alerts fire as its tests say
// (promtool, from Debian's prometheus package: make deps installs it).
func TestPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (make deps installs Debian's prometheus package)")
	}
	dir := filepath.Join("..", "..", "..", "fixtures", "prometheus")
	for _, args := range [][]string{{"check", "rules", "harp-peers.rules.yml"}, {"test", "rules", "harp-peers.rules.test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
