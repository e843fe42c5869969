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
		in, err := Collect(context.Background(), n, n, fromCapture(filepath.Join("..", "..", "fixtures", "captures", version, "cluster", sit, n)))
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	return Diagnose(ins)
}

func versions(t *testing.T) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "captures", "*", "cluster"))
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
