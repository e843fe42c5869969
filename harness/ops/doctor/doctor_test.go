package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
)

// fromCapture answers the doctor's commands from what a real node said
// (fixtures/captures/<version>/cluster/<situation>/<node>/, recorded by
// `harp capture`).
func fromCapture(dir string) Query {
	return func(_ context.Context, cmd string) (string, error) {
		name := strings.NewReplacer(" ", "_", "/", "_").Replace(cmd) + ".txt"
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", fmt.Errorf("not captured: %s", cmd)
		}
		return string(b), nil
	}
}

func situation(t *testing.T, version, sit string) Diagnosis {
	t.Helper()
	var ins []Instance
	for _, n := range []string{"node1", "node2", "node3"} {
		in, err := Collect(context.Background(), n, n, fromCapture(filepath.Join("..", "..", "..", "fixtures", "captures", version, "cluster", sit, n)))
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	return Diagnose(ins)
}

func versions(t *testing.T) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join("..", "..", "..", "fixtures", "captures", "*", "cluster"))
	var vs []string
	for _, d := range dirs {
		vs = append(vs, filepath.Base(filepath.Dir(d)))
	}
	if len(vs) < 4 {
		t.Fatalf("cluster captures for %d builds, want 2.6 to 3.4 (run make capture)", len(vs))
	}
	return vs
}

// Each situation was made on purpose on a real cluster of each build; the
// doctor must name it, first, as the likely cause.
func TestDiagnosesRealClusters(t *testing.T) {
	for _, v := range versions(t) {
		t.Run(v, func(t *testing.T) {
			d := situation(t, v, "healthy")
			if !d.Healthy || !d.Has("ok") || len(d.Links) != 6 {
				t.Errorf("healthy: cause %q, %d links\n%s", d.Cause, len(d.Links), d.Text())
			}
			for _, tv := range d.Tables {
				if tv.Name == "cluster/tbl" && (tv.Keys != 10 || tv.Diverging != 0 || tv.Used["node3"] != 10) {
					t.Errorf("healthy: table view %+v", tv)
				}
			}

			d = situation(t, v, "identity")
			if !strings.HasPrefix(d.Cause, "node3: tables cluster/tbl exist but show peers lists no section cluster") || !strings.Contains(d.Cause, "local peer") {
				t.Errorf("identity: cause %q\n%s", d.Cause, d.Text())
			}

			d = situation(t, v, "partition")
			if !d.Has("link-down") || !strings.Contains(d.Cause, "node3") || !d.Has("divergence") {
				t.Errorf("partition: cause %q\n%s", d.Cause, d.Text())
			}
			for _, tv := range d.Tables {
				if tv.Name == "cluster/tbl" && (tv.Missing["node3"] != 10 || tv.Percent != 100) {
					t.Errorf("partition: node3 should lack all 10 keys: %+v", tv)
				}
			}

			d = situation(t, v, "tables")
			if !strings.HasPrefix(d.Cause, "table cluster/keytype is defined differently") {
				t.Errorf("tables: cause %q\n%s", d.Cause, d.Text())
			}
			if strings.Contains(d.Text(), "table cluster/tbl is defined differently") {
				t.Errorf("tables: the identical table flagged\n%s", d.Text())
			}

			d = situation(t, v, "user-socket")
			if !strings.HasPrefix(d.Cause, "node3: the socket refused") || !strings.Contains(d.Cause, "admin level") {
				t.Errorf("user socket: cause %q\n%s", d.Cause, d.Text())
			}
			if d.Has("divergence") {
				t.Errorf("user socket: hidden contents counted as divergence\n%s", d.Text())
			}
		})
	}
}

func TestJSONHoldsTheDiagnosis(t *testing.T) {
	d := situation(t, "3.4.7-1", "partition")
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Healthy  bool   `json:"healthy"`
		Cause    string `json:"likely_cause"`
		Findings []struct{ Code string }
		Tables   []struct {
			Name    string         `json:"name"`
			Percent float64        `json:"divergence_pct"`
			Missing map[string]int `json:"missing"`
		}
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Healthy || back.Cause == "" || len(back.Findings) == 0 || back.Tables[0].Missing["node3"] != 10 {
		t.Errorf("json: %s", b)
	}
}

func TestNoPeersSection(t *testing.T) {
	q := func(_ context.Context, cmd string) (string, error) {
		switch cmd {
		case "show info":
			return "Name: HAProxy\nVersion: 3.4.7-1\nnode: lb1\nPid: 8\n", nil
		case "show table", "show table local":
			return "# table: local, type: ip, size:100, used:0\n", nil
		}
		return "", nil
	}
	in, err := Collect(context.Background(), "lb1", "lb1", q)
	if err != nil {
		t.Fatal(err)
	}
	d := Diagnose([]Instance{in})
	if !d.Has("no-peers") || !d.Healthy {
		t.Errorf("%s", d.Text())
	}
}

func TestUnreachableSocketIsAnError(t *testing.T) {
	_, err := Collect(context.Background(), "x", "127.0.0.1:1", Dial("127.0.0.1:1"))
	if err == nil || !strings.Contains(err.Error(), "cannot reach the runtime socket") {
		t.Errorf("err = %v", err)
	}
}

// Dial speaks to UNIX sockets too (the usual form of a stats socket).
func TestDialUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "admin.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 64)
		n, _ := c.Read(buf)
		fmt.Fprintf(c, "got %q", buf[:n])
		c.Close()
	}()
	for _, addr := range []string{path, "unix@" + path} {
		out, err := Dial(addr)(context.Background(), "show info")
		if err != nil || out != `got "show info\n"` {
			t.Errorf("%s: %q %v", addr, out, err)
		}
		if addr == path {
			go func() {
				c, err := l.Accept()
				if err == nil {
					buf := make([]byte, 64)
					n, _ := c.Read(buf)
					fmt.Fprintf(c, "got %q", buf[:n])
					c.Close()
				}
			}()
		}
	}
}

// Two standalone instances with their own local tables: nothing to
// replicate, so differing contents are not a problem.
func TestStandaloneTablesDoNotDiverge(t *testing.T) {
	inst := func(name, key string) Instance {
		q := func(_ context.Context, cmd string) (string, error) {
			switch cmd {
			case "show info":
				return "Name: HAProxy\nVersion: 3.4.7-1\nnode: " + name + "\n", nil
			case "show table":
				return "# table: local, type: ip, size:100, used:1\n", nil
			case "show table local":
				return "# table: local, type: ip, size:100, used:1\n0x1: key=" + key + " use=0 exp=1000 shard=0 gpc0=1\n", nil
			}
			return "", nil
		}
		in, err := Collect(context.Background(), name, name, q)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	d := Diagnose([]Instance{inst("lb1", "192.0.2.1"), inst("lb2", "192.0.2.2")})
	if !d.Healthy || d.Has("divergence") || !d.Has("no-peers") {
		t.Errorf("%s", d.Text())
	}
}

// The typed fields let callers find a finding without reading its message.
func TestFindingsNameInstanceAndTable(t *testing.T) {
	for _, v := range versions(t) {
		t.Run(v, func(t *testing.T) {
			d := situation(t, v, "identity")
			if f, ok := d.Find(Identity, "node3", ""); !ok || f.Instance != "node3" || f.Table != "cluster/tbl" {
				t.Errorf("identity: %+v %v\n%s", f, ok, d.Text())
			}
			if f, ok := d.Find(Identity, "node1", ""); ok {
				t.Errorf("identity: node1 is fine: %+v", f)
			}

			d = situation(t, v, "tables")
			if f, ok := d.Find(TableDefinition, "", "cluster/keytype"); !ok || f.Table != "cluster/keytype" || f.Instance != "" {
				t.Errorf("tables: %+v %v\n%s", f, ok, d.Text())
			}
			if _, ok := d.Find(TableDefinition, "", "cluster/tbl"); ok {
				t.Errorf("tables: cluster/tbl is defined alike\n%s", d.Text())
			}

			// Which end reports the cut differs between builds; either
			// end finds it.
			d = situation(t, v, "partition")
			f, ok := d.Find(LinkDown, "node3", "")
			if !ok || f.Instance == "" || f.Peer == "" || f.Instance != "node3" && f.Peer != "node3" {
				t.Errorf("partition: %+v %v\n%s", f, ok, d.Text())
			}
			if _, ok := d.Find(Divergence, "", "cluster/tbl"); !ok {
				t.Errorf("partition: no divergence of cluster/tbl\n%s", d.Text())
			}

			d = situation(t, v, "user-socket")
			if f, ok := d.Find(SocketLevel, "node3", ""); !ok || f.Instance != "node3" {
				t.Errorf("user socket: %+v %v", f, ok)
			}
		})
	}
}

func TestJSONCarriesTypedFields(t *testing.T) {
	b, err := json.Marshal(situation(t, "3.4.7-1", "identity"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"level":"problem","code":"identity","instance":"node3","table":"cluster/tbl","message":"node3: tables`, `"code":"link-down","instance":"node1","peer":"node3"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("json lacks %s: %s", want, b)
		}
	}
}

func TestFind(t *testing.T) {
	d := Diagnosis{Findings: []Finding{
		{Code: LinkDown, Instance: "a", Peer: "b", Message: "1"},
		{Code: Divergence, Table: "s/t", Message: "2"},
		{Code: Divergence, Table: "s/u", Message: "3"},
	}}
	for _, c := range []struct {
		code            Code
		instance, table string
		want            string
	}{
		{LinkDown, "", "", "1"}, {LinkDown, "a", "", "1"}, {LinkDown, "b", "", "1"}, {LinkDown, "c", "", ""},
		{Divergence, "", "", "2"}, {Divergence, "", "s/u", "3"}, {Divergence, "a", "s/u", ""}, {Identity, "", "", ""},
	} {
		f, ok := d.Find(c.code, c.instance, c.table)
		if f.Message != c.want || ok != (c.want != "") {
			t.Errorf("Find(%s, %q, %q) = %q %v, want %q", c.code, c.instance, c.table, f.Message, ok, c.want)
		}
	}
}

// Hand-built instances for the checks, one at a time.

func peer(name string, local, up bool) cliout.Peer {
	p := cliout.Peer{Name: name, Local: local, Addr: name + ":10000", LastStatus: "NONE", LastHdshk: "<NEVER>"}
	if up {
		p.LastStatus, p.Session = "ESTA", true
	}
	return p
}

func node(name string, tables []string, peers ...cliout.Peer) Instance {
	in := Instance{Name: name, Node: name, Errors: map[string]string{}}
	if len(peers) > 0 {
		in.Sections = []cliout.PeersSection{{Name: "s", Peers: peers}}
	}
	for _, t := range tables {
		in.Tables = append(in.Tables, cliout.Table{Name: t, Type: "ip", Size: 100})
	}
	return in
}

func TestSocketLevel(t *testing.T) {
	a, b := node("a", nil), node("b", nil)
	b.Errors = map[string]string{"show peers": "Permission denied", "show table s/t": "Permission denied", "show info": "odd"}
	fs := socketLevel([]Instance{a, b})
	if len(fs) != 1 || fs[0].Code != SocketLevel || fs[0].Instance != "b" || len(fs[0].Evidence) != 2 {
		t.Errorf("%+v", fs)
	}
}

func TestNoPeers(t *testing.T) {
	local := []Instance{node("a", []string{"local"})}
	if fs := noPeers(local, peeringOf(local), false); len(fs) != 1 || fs[0].Code != NoPeers || fs[0].Level != Warning {
		t.Errorf("local tables: %+v", fs)
	}
	if fs := noPeers(local, peeringOf(local), true); len(fs) != 0 {
		t.Errorf("blind: %+v", fs)
	}
	dropped := []Instance{node("a", []string{"s/t"})}
	if fs := noPeers(dropped, peeringOf(dropped), false); len(fs) != 0 {
		t.Errorf("a dropped section: %+v", fs)
	}
}

func TestIdentity(t *testing.T) {
	ins := []Instance{
		node("a", nil, peer("x", false, false)), // no local peer
		node("b", []string{"s/t"}),              // section dropped, one table
		node("c", []string{"s/t", "s/u"}),       // section dropped, two tables
		node("d", []string{"s/t"}, peer("d", true, false)),
	}
	refused := node("e", []string{"s/t"})
	refused.Errors["show peers"] = "Permission denied"
	ins = append(ins, refused)
	fs := identity(ins, peeringOf(ins))
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%s %s %q", f.Code, f.Instance, f.Table))
	}
	want := `[identity a "" identity b "s/t" identity c ""]`
	if fmt.Sprint(got) != want || !strings.Contains(fs[1].Message, "(other instances run it)") {
		t.Errorf("got %v, want %s\n%+v", got, want, fs)
	}
}

func TestDuplicateIdentity(t *testing.T) {
	ins := []Instance{node("b", nil, peer("x", true, false)), node("a", nil, peer("x", true, false)), node("c", nil, peer("y", true, false))}
	fs := duplicateIdentity(peeringOf(ins))
	if len(fs) != 1 || fs[0].Code != IdentityDuplicate || fs[0].Instance != "" || fs[0].Message != "section s: a, b all call themselves x: each instance needs its own peer name" {
		t.Errorf("%+v", fs)
	}
}

func TestLinksDown(t *testing.T) {
	for _, c := range []struct {
		name string
		ins  []Instance
		want string
		peer string
		ev   int
	}{
		{"partition", []Instance{node("a", nil, peer("a", true, false), peer("b", false, false)), node("b", nil, peer("b", true, false), peer("a", false, false))},
			"no session between a and b from either end", "b", 2},
		{"half open", []Instance{node("a", nil, peer("a", true, false), peer("b", false, false)), node("b", nil, peer("b", true, false), peer("a", false, true))},
			"although b's end looks up", "b", 2},
		{"peer lines differ", []Instance{node("a", nil, peer("a", true, false), peer("b", false, false)), node("b", nil, peer("b", true, false), peer("c", false, true))},
			"b does not list a as a peer", "b", 1},
		{"not examined", []Instance{node("a", nil, peer("a", true, false), peer("z", false, false))},
			"no examined instance is z", "z", 1},
	} {
		p := peeringOf(c.ins)
		fs := linksDown(links(c.ins, p), p)
		if len(fs) != 1 || fs[0].Code != LinkDown || fs[0].Instance != "a" || fs[0].Peer != c.peer || len(fs[0].Evidence) != c.ev || !strings.Contains(fs[0].Message, c.want) {
			t.Errorf("%s: %+v", c.name, fs)
		}
	}
}

func TestTableChecks(t *testing.T) {
	ins := []Instance{node("a", nil), node("b", nil), node("c", nil)}
	v := TableView{Name: "s/t", Definitions: map[string]string{"a": "type ip size 100", "b": "type string size 100"},
		Used: map[string]int{"a": 2, "b": 1}, Missing: map[string]int{"b": 1}, Keys: 2, Diverging: 1, Percent: 50}
	if fs := tableDefinition(v, nil, peering{}); len(fs) != 1 || fs[0].Code != TableDefinition || fs[0].Table != "s/t" || len(fs[0].Evidence) != 2 {
		t.Errorf("definition: %+v", fs)
	}
	if fs := tableMissing(v, ins); len(fs) != 1 || fs[0].Code != TableMissing || fs[0].Instance != "c" || fs[0].Table != "s/t" {
		t.Errorf("missing: %+v", fs)
	}
	ins[2].Errors["show table"] = "Permission denied" // unknown, not absent
	if fs := tableMissing(v, ins); len(fs) != 0 {
		t.Errorf("missing on a refusing socket: %+v", fs)
	}
	if fs := divergence(v); len(fs) != 1 || fs[0].Code != Divergence || fs[0].Table != "s/t" || !strings.Contains(fs[0].Message, "1 of 2 keys (50%)") {
		t.Errorf("divergence: %+v", fs)
	}
	v.Definitions["b"], v.Diverging = "type ip size 100", 0
	if fs := append(tableDefinition(v, nil, peering{}), divergence(v)...); len(fs) != 0 {
		t.Errorf("agreeing table: %+v", fs)
	}
	p := peering{sections: map[string]bool{"s": true}}
	for name, want := range map[string]bool{"s/t": true, "local": false, "other/t": false} {
		if replicated(TableView{Name: name}, p, false) != want {
			t.Errorf("replicated(%s) != %v", name, want)
		}
	}
	if !replicated(TableView{Name: "other/t"}, p, true) {
		t.Errorf("a dropped section's table is replicated")
	}
}

func TestLikelyCauseAndHealthy(t *testing.T) {
	div := Finding{Level: Problem, Code: Divergence, Message: "diverges"}
	down := Finding{Level: Problem, Code: LinkDown, Message: "down"}
	if c := likelyCause([]Finding{div, down}); c != "down" {
		t.Errorf("link before divergence: %q", c)
	}
	if c := likelyCause([]Finding{div}); !strings.HasPrefix(c, "diverges; every link is up") {
		t.Errorf("divergence alone: %q", c)
	}
	warn := Finding{Level: Warning, Code: NoPeers}
	if c := likelyCause([]Finding{warn}); c != "" {
		t.Errorf("a warning is no cause: %q", c)
	}
	if fs := healthy(2, nil); len(fs) != 1 || fs[0].Code != Healthy || fs[0].Level != OK || !strings.HasPrefix(fs[0].Message, "2 instance(s)") {
		t.Errorf("healthy: %+v", fs)
	}
	if fs := healthy(1, []Finding{warn}); len(fs) != 0 {
		t.Errorf("no peers, nothing checked: %+v", fs)
	}
}

// A definition that differs only in key length or stored data types is not
// in show table's header; the senders' counters show it: on every build,
// node1 pushed cluster/keytype updates that node3 never acknowledged while
// it acknowledged cluster/tbl on the same links.
func TestRefusedDefinitionFromCounters(t *testing.T) {
	for _, v := range versions(t) {
		var ins []Instance
		for _, n := range []string{"node1", "node2", "node3"} {
			in, err := Collect(context.Background(), n, n, fromCapture(filepath.Join("..", "..", "..", "fixtures", "captures", v, "cluster", "tables", n)))
			if err != nil {
				t.Fatal(err)
			}
			ins = append(ins, in)
		}
		d := Diagnose(ins)
		for _, tv := range d.Tables {
			fs := refusedDefinition(tv, d.Tables, peeringOf(ins))
			switch tv.Name {
			case "cluster/keytype":
				if len(fs) != 1 || fs[0].Code != TableDefinition || fs[0].Instance != "node3" || !strings.Contains(fs[0].Evidence[0], "acknowledged 0") {
					t.Errorf("%s: keytype: %+v", v, fs)
				}
			default:
				if len(fs) != 0 {
					t.Errorf("%s: %s: %+v", v, tv.Name, fs)
				}
			}
		}
	}
}

// Stored data types come from the entries: a table storing fewer types on
// one instance is a definition problem, not a replication bug.
func TestStoredTypesDiffer(t *testing.T) {
	v := TableView{Name: "s/t", Definitions: map[string]string{"a": "type string size 100", "b": "type string size 100"},
		Stores: map[string]string{"a": "gpc0,http_req_cnt", "b": "gpc0"}, ValueDiffs: 3}
	fs := tableDefinition(v, nil, peering{})
	if len(fs) != 1 || fs[0].Code != TableDefinition || !strings.Contains(fs[0].Message, "stores other data types") || fs[0].Evidence[0] != "b: gpc0" {
		t.Errorf("stores: %+v", fs)
	}
	d := Diagnosis{Findings: append(fs, divergence(v)...)}
	if c := likelyCause(d.Findings); strings.Contains(c, "replication bug") || !strings.Contains(c, "stores other data types") {
		t.Errorf("likely cause: %q", c)
	}
}

// Sockets that are not healthy HAProxy: named as what they are, never as a
// permission problem.
func TestNotAnHAProxySocket(t *testing.T) {
	answer := func(out string, err error) Query {
		return func(context.Context, string) (string, error) { return out, err }
	}
	for _, c := range []struct {
		name string
		q    Query
		want string
	}{
		{"an HTTP server", answer("HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\n\r\n<html>", nil), "not an HAProxy runtime socket"},
		{"garbage", answer("\x00\x01binary", nil), "not an HAProxy runtime socket"},
		{"silence", answer("", nil), "not an HAProxy runtime socket"},
		{"a timeout", answer("", fmt.Errorf("read: %w", os.ErrDeadlineExceeded)), "timed out"},
	} {
		_, err := Collect(context.Background(), "x", "x", c.q)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "admin") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// An admin socket on an instance with no stick tables and no peers answers
// nothing to both: that is not a socket below admin level.
func TestNoTablesIsNotALevelProblem(t *testing.T) {
	q := func(_ context.Context, cmd string) (string, error) {
		if cmd == "show info" {
			return "Name: HAProxy\nVersion: 3.4.7-1\nPid: 8\n", nil
		}
		return "\n", nil
	}
	in, err := Collect(context.Background(), "lb1", "lb1", q)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diagnose([]Instance{in}); d.Has(SocketLevel) || len(in.Errors) > 0 {
		t.Errorf("errors %v\n%s", in.Errors, d.Text())
	}
}

// One socket that cannot be read is reported; the others are still
// diagnosed; a socket that never answers does not hold up the rest past
// the overall deadline.
func TestCollectAllPartial(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accepts, never answers
		}
	}()
	healthy := fromCapture(filepath.Join("..", "..", "..", "fixtures", "captures", "3.4.7-1", "cluster", "healthy", "node1"))
	dial := func(s string) Query {
		if s == "node1" {
			return healthy
		}
		return Dial(s)
	}
	t0 := time.Now()
	ins := CollectAll(context.Background(), 500*time.Millisecond, []string{"node1", "gone", "mute"}, []string{"node1", "127.0.0.1:1", silent.Addr().String()}, dial)
	if time.Since(t0) > 5*time.Second {
		t.Errorf("a silent socket held the doctor %s", time.Since(t0))
	}
	d := Diagnose(ins)
	for _, name := range []string{"gone", "mute"} {
		if _, ok := d.Find(Unreachable, name, ""); !ok {
			t.Errorf("%s not reported unreachable:\n%s", name, d.Text())
		}
	}
	if ins[0].Unreachable != "" || len(ins[0].Sections) == 0 || !strings.Contains(d.Text(), "NOT READ") {
		t.Errorf("the readable instance was not diagnosed:\n%s", d.Text())
	}
	js, _ := json.Marshal(d)
	if !strings.Contains(string(js), `"unreachable"`) {
		t.Errorf("JSON lacks the unreachable instance: %s", js)
	}
}
