package cliout

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The captures are real output from each supported build, recorded by
// `make capture` (harp capture) into fixtures/captures/<version>/.
const capturesDir = "../../../fixtures/captures"

// Every supported branch must have a capture.
var supported = []string{"2.6.", "3.0.", "3.2.", "3.4."}

func captures(t *testing.T) map[string]string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(capturesDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range dirs {
		out[filepath.Base(d)] = d
	}
	for _, branch := range supported {
		found := false
		for v := range out {
			found = found || strings.HasPrefix(v, branch)
		}
		if !found {
			t.Errorf("no capture for HAProxy %sx in %s", branch, capturesDir)
		}
	}
	return out
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCapturedShowProc(t *testing.T) {
	for version, dir := range captures(t) {
		t.Run(version, func(t *testing.T) {
			p, err := ParseProcs(read(t, dir, "show-proc.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if p.Master.PID != 1 || p.Master.Type != "master" || p.Master.Version != version {
				t.Errorf("master = %+v", p.Master)
			}
			if len(p.Workers) != 1 || len(p.OldWorkers) != 0 || p.Workers[0].Version != version {
				t.Errorf("workers = %+v old = %+v", p.Workers, p.OldWorkers)
			}

			p, err = ParseProcs(read(t, dir, "show-proc-old-worker.txt"))
			if err != nil {
				t.Fatal(err)
			}
			cur, ok := p.Current()
			if !ok || len(p.OldWorkers) != 1 {
				t.Fatalf("after reload: workers = %+v old = %+v", p.Workers, p.OldWorkers)
			}
			old := p.OldWorkers[0]
			if p.Master.Reloads != 1 || old.Reloads != 1 || cur.Reloads != 0 || cur.PID == old.PID {
				t.Errorf("after reload: master %+v current %+v old %+v", p.Master, cur, old)
			}
			if _, ok := p.Find(old.PID); !ok {
				t.Errorf("Find(%d) missed the old worker", old.PID)
			}
		})
	}
}

func TestCapturedShowPeers(t *testing.T) {
	for version, dir := range captures(t) {
		t.Run(version, func(t *testing.T) {
			secs, err := ParsePeers(read(t, dir, "show-peers.txt"))
			if err != nil {
				t.Fatal(err)
			}
			s, ok := FindSection(secs, "cluster")
			if !ok || len(secs) != 1 || s.Disabled {
				t.Fatalf("sections = %+v", secs)
			}
			// The local resync is done at once (no old process); the remote
			// one waits for the unreachable remote peer: not finished.
			if s.Flags&PeersResyncLocalFinished == 0 || s.ResyncFinished() {
				t.Errorf("flags = 0x%x: want local resync finished, remote pending", s.Flags)
			}
			local, ok := s.Local()
			if !ok || local.Name != "harp" || local.Addr != "127.0.0.1:10000" || local.LastStatus != "NONE" || local.LastHdshk != "<NEVER>" || local.Session {
				t.Errorf("local peer = %+v", local)
			}
			remote, ok := s.Peer("remote")
			// HAProxy is connecting to the unreachable remote: a session, not established.
			if !ok || remote.Local || remote.Inactive || remote.Addr != "127.0.0.1:10999" || remote.Int("new_conn") < 1 || !remote.Session || remote.Established() {
				t.Errorf("remote peer = %+v", remote)
			}
			// Three entries were set; HAProxy pushed none to the unreachable remote.
			if len(remote.Tables) != 1 || remote.Tables[0].Name != "cluster/counters" || remote.Tables[0].LocalUpdate != 3 || remote.Tables[0].LastPushed != 0 {
				t.Errorf("remote tables = %+v", remote.Tables)
			}
			// Fields of the table lines must not leak into the peer's own.
			if remote.Fields["refcnt"] != "" || remote.Fields["local_id"] != "" || remote.Fields["last_acked"] != "" {
				t.Errorf("table fields leaked into peer fields: %v", remote.Fields)
			}

			after, err := ParsePeers(read(t, dir, "show-peers-after-reload.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if s, ok := FindSection(after, "cluster"); !ok || len(s.Peers) != 2 || s.ResyncFinished() {
				t.Errorf("after reload (new worker still learning): %+v", after)
			}
		})
	}
}

func TestCapturedShowTable(t *testing.T) {
	for version, dir := range captures(t) {
		t.Run(version, func(t *testing.T) {
			tb, err := ParseTable(read(t, dir, "show-table.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if tb.Name != "cluster/counters" || tb.Type != "ip" || tb.Size != 1024 || tb.Used != 3 || len(tb.Entries) != 3 {
				t.Fatalf("table = %+v", tb)
			}
			for _, k := range []string{"192.0.2.1", "192.0.2.2"} {
				e, ok := tb.Lookup(k)
				if !ok || e.Data["gpc0"] != "7" || e.Data["conn_cnt"] != "0" || e.Data["http_req_rate(10000)"] != "0" {
					t.Errorf("entry %s = %+v", k, e)
				}
			}
			// The held connection was tracked: one entry with conn_cnt=1, in use.
			tracked := 0
			for _, e := range tb.Entries {
				if e.Data["conn_cnt"] == "1" && e.Use == 1 {
					tracked++
				}
			}
			if tracked != 1 {
				t.Errorf("tracked entries = %d in %+v", tracked, tb.Entries)
			}

			list, err := ParseTables(read(t, dir, "show-table-list.txt"))
			if err != nil || len(list) != 1 || list[0].Name != "cluster/counters" || len(list[0].Entries) != 0 {
				t.Errorf("table list = %+v, %v", list, err)
			}
		})
	}
}

func TestCapturedShowInfo(t *testing.T) {
	for version, dir := range captures(t) {
		t.Run(version, func(t *testing.T) {
			info, err := ParseInfo(read(t, dir, "show-info.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if info["Version"] != version || info.Int("Nbthread") != 1 || info.Int("Pid") == 0 {
				t.Errorf("info: Version=%q Nbthread=%q Pid=%q", info["Version"], info["Nbthread"], info["Pid"])
			}
		})
	}
}

func TestCapturedWorkerExits(t *testing.T) {
	for version, dir := range captures(t) {
		t.Run(version, func(t *testing.T) {
			exits := ParseWorkerExits(read(t, dir, "master-log.txt"))
			var former, crashed int
			for _, e := range exits {
				switch {
				case !e.Current && e.Code == 0 && e.Reason == "Exit":
					former++
				case e.Current && e.Code == 134 && e.Reason == "Aborted":
					crashed++
				}
			}
			// One reload (the old worker leaves cleanly), one `debug dev panic`.
			if len(exits) != 2 || former != 1 || crashed != 1 {
				t.Errorf("exits = %+v", exits)
			}
		})
	}
}

// #3517's two sections in the new worker after a reload, once both report
// their resync finished: 2.6 was taught in both sections; the 3.x builds
// only in `second` (first timed out, its local peer never connected).
func TestCapturedShowPeers3517(t *testing.T) {
	for version, dir := range captures(t) {
		t.Run(version, func(t *testing.T) {
			secs, err := ParsePeers(read(t, dir, "show-peers-3517-after-reload.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if len(secs) != 2 {
				t.Fatalf("sections = %+v", secs)
			}
			status := map[string]string{}
			for _, s := range secs {
				if !s.ResyncFinished() {
					t.Errorf("%s: flags 0x%x, resync not finished", s.Name, s.Flags)
				}
				local, ok := s.Local()
				if !ok || local.Addr == "" || len(local.Tables) != 1 || local.Tables[0].Name != s.Name+"/marker" {
					t.Errorf("%s: local peer %+v", s.Name, local)
				}
				status[s.Name] = local.LastStatus
			}
			want := map[string]string{"first": "NONE", "second": "ESTA"}
			if strings.HasPrefix(version, "2.6.") {
				want["first"] = "ESTA"
			}
			if status["first"] != want["first"] || status["second"] != want["second"] {
				t.Errorf("local peer last_status = %v, want %v", status, want)
			}
		})
	}
}

func TestPeerDelay(t *testing.T) {
	p := Peer{Fields: map[string]string{"a": "4s", "b": "<NEVER>", "c": "<PAST>", "d": "1m2s", "e": "2d3h", "f": "junk"}}
	for key, want := range map[string]time.Duration{"a": 4 * time.Second, "c": 0, "d": 62 * time.Second, "e": 51 * time.Hour} {
		if d, never, ok := p.Delay(key); !ok || never || d != want {
			t.Errorf("Delay(%s) = %v %v %v, want %v", key, d, never, ok, want)
		}
	}
	if _, never, ok := p.Delay("b"); !ok || !never {
		t.Error("<NEVER> not read")
	}
	for _, key := range []string{"f", "missing"} {
		if _, _, ok := p.Delay(key); ok {
			t.Errorf("Delay(%s) accepted", key)
		}
	}
	// Real: the captures' remote peer has a reconnect timer.
	for version, dir := range captures(t) {
		secs, _ := ParsePeers(read(t, dir, "show-peers.txt"))
		r, _ := secs[0].Peer("remote")
		if _, _, ok := r.Delay("reconnect"); !ok {
			t.Errorf("%s: reconnect=%q unreadable", version, r.Fields["reconnect"])
		}
	}
}

// The watchdog and crash lines the listener suite detects, from every
// build: `debug dev loop 300` stalls a thread (3.1 and later warn, older
// builds do not), `debug dev panic` kills the worker and the master.
func TestCapturedStallsAndPanics(t *testing.T) {
	for version, dir := range captures(t) {
		t.Run(version, func(t *testing.T) {
			logs := read(t, dir, "master-log.txt")
			stalls := ParseStalls(logs)
			warns := !strings.HasPrefix(version, "2.") && !strings.HasPrefix(version, "3.0.")
			if warns && (len(stalls) == 0 || MaxStall(stalls) < 100 || stalls[0].Thread != 1) {
				t.Errorf("stalls = %+v, want a warning of 100 ms or more on thread 1", stalls)
			}
			if !warns && len(stalls) != 0 {
				t.Errorf("stalls = %+v on a build without the warning", stalls)
			}
			if code, exited := MasterExit(logs); !exited || code != 134 {
				t.Errorf("master exit = %d %v, want 134", code, exited)
			}
			if strings.HasPrefix(version, "3.4.") {
				if p := ParsePanics(logs); len(p) != 1 || p[0].Thread != 1 || p[0].PID == 0 {
					t.Errorf("panics = %+v", p)
				}
			}
		})
	}
}

func TestDetectorsOnSyntheticText(t *testing.T) {
	if len(ParseStalls("no warning here")) != 0 || len(ParsePanics("")) != 0 {
		t.Error("detectors fired on nothing")
	}
	if _, exited := MasterExit("[NOTICE] (1) : Loading success."); exited {
		t.Error("master exit on a healthy log")
	}
}

func TestCapturedShowStat(t *testing.T) {
	for version, dir := range captures(t) {
		t.Run(version, func(t *testing.T) {
			rows, err := ParseStat(read(t, dir, "show-stat.txt"))
			if err != nil {
				t.Fatal(err)
			}
			fe, ok := FindStat(rows, "hold", "FRONTEND")
			// One connection is held open through the frontend.
			if !ok || fe.Type() != 0 || fe.Int("slim") != 500 || fe.Int("scur") != 1 || fe.Int("stot") < 1 {
				t.Errorf("frontend = %+v", fe.Fields)
			}
			if n := Listeners(rows, "hold"); n != 1 {
				t.Errorf("listeners = %d, want 1", n)
			}
			if be, ok := FindStat(rows, "to_stats", "BACKEND"); !ok || be.Type() != 1 {
				t.Errorf("backend = %+v", be.Fields)
			}
		})
	}
}

func TestCapturedShowThreads(t *testing.T) {
	for version, dir := range captures(t) {
		if g := ThreadGroups(read(t, dir, "show-threads.txt")); g != 1 {
			t.Errorf("%s: %d thread groups, want 1", version, g)
		}
	}
	two := "* Thread 1 : id=0x1 act=1\n      1/1    stuck=0\n  Thread 2 : id=0x2 act=0\n      2/1    stuck=0\n"
	if g := ThreadGroups(two); g != 2 {
		t.Errorf("two groups read as %d", g)
	}
}

// The stalls captured from 3.2.26 and 3.4.7 were made by `debug dev loop`
// on the CLI: their lock history and trace are read, and they do not
// point at the listener path. The same block with a listener function in
// its trace does.
func TestStallEvidence(t *testing.T) {
	for _, v := range []string{"3.2.26-1", "3.4.7-1"} {
		logs, err := os.ReadFile(filepath.Join("..", "..", "..", "fixtures", "captures", v, "master-log.txt"))
		if err != nil {
			t.Fatal(err)
		}
		stalls := ParseStalls(string(logs))
		if len(stalls) == 0 {
			t.Fatalf("%s: no stall", v)
		}
		s := stalls[0]
		on, known := s.Where()
		if !known || on || !slices.Contains(s.Trace, "debug_parse_cli_loop") || !strings.Contains(s.LockHist, "LISTENER") {
			t.Errorf("%s: %+v on=%v known=%v", v, s, on, known)
		}
		listener := strings.Replace(string(logs), "debug_parse_cli_loop", "dequeue_proxy_listeners", 1)
		if on, known := ParseStalls(listener)[0].Where(); !on || !known {
			t.Errorf("%s: a trace through dequeue_proxy_listeners is not on the listener path", v)
		}
	}
	old := ParseStalls("WARNING! thread 2 has stopped processing traffic for 150 milliseconds\n")
	if _, known := old[0].Where(); known || old[0].Ms != 150 || old[0].Thread != 2 {
		t.Errorf("a warning without lock history: %+v", old[0])
	}
}

// A build whose master uptime is computed from two clocks (2.8-dev3 before
// upstream 2776e775eccc) prints negative parts: they are read as they are,
// a negative uptime a check can judge, not a parse error.
func TestShowProcNegativeUptime(t *testing.T) {
	out := "#<PID>          <type>          <reloads>       <uptime>        <version>      \n" +
		"1               master          0    -9d-21h-59m-26s 2.8-dev3-a9de25a55\n# workers\n" +
		"8               worker          0               0d00h00m02s     2.8-dev3-a9de25a55\n"
	p, err := ParseProcs(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := -(((9*24+21)*60+59)*60 + 26) * time.Second; p.Master.Uptime != want || p.Workers[0].Uptime != 2*time.Second {
		t.Errorf("master uptime %v (want %v), worker %v", p.Master.Uptime, want, p.Workers[0].Uptime)
	}
}

func TestCapturedShowPoolsAndActivity(t *testing.T) {
	for version, dir := range captures(t) {
		t.Run(version, func(t *testing.T) {
			ps, err := ParsePools(read(t, dir, "show-pools.txt"))
			if err != nil {
				t.Fatal(err)
			}
			// The trash pool exists on every build (the CLI's command
			// buffers); it holds at least one buffer's worth.
			if p, ok := FindPool(ps, "trash"); !ok || p.Size < 16384 || p.Allocated < p.Used || p.Used < 1 {
				t.Errorf("trash pool = %+v (found %v) in %d pools", p, ok, len(ps))
			}
			if l, err := Loops(read(t, dir, "show-activity.txt")); err != nil || l <= 0 {
				t.Errorf("loops = %d, %v", l, err)
			}
			// Every build counts the events of fds it no longer knows (an
			// idle worker: none yet).
			if d, err := Activity(read(t, dir, "show-activity.txt"), "poll_drop_fd"); err != nil || d != 0 {
				t.Errorf("poll_drop_fd = %d, %v", d, err)
			}
		})
	}
	for out, want := range map[string]int64{"loops: 12\nwake_tasks: 0\n": 12, "loops: 30 [ 10 20 ]\n": 30, "thread_id: 1\nloops: [ 10 20 ]\n": 30} {
		if l, err := Loops(out); err != nil || l != want {
			t.Errorf("Loops(%q) = %d, %v; want %d", out, l, err, want)
		}
	}
	if d, err := Activity("loops: 9\npoll_drop_fd: 12 [ 5 7 ]\n", "poll_drop_fd"); err != nil || d != 12 {
		t.Errorf("poll_drop_fd = %d, %v", d, err)
	}
	if _, err := Activity("loops: 9\npoll_drop: 3\n", "poll_drop_fd"); err == nil {
		t.Error("a missing counter read")
	}
	if _, err := ParsePools("Unknown command\n"); err == nil {
		t.Error("an answer without pools parsed")
	}
}
