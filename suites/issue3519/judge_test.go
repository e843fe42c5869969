package issue3519

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/cliout"
)

// How a trial's window is judged; the facts are those real runs record
// (3.4.7: the replacement closed by HAProxy about 1 s after the first
// socket, show peers no longer established, no_hbt 0 -> 1).
func TestJudge(t *testing.T) {
	killed := Facts{Replace: true, Window: 1500 * time.Millisecond, Closed: true, ClosedByPeer: true, ClosedAfter: 1043 * time.Millisecond, Why: "EOF", NoHbt: [2]int64{0, 1}}
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
	}{
		{"replacement kept through the check: held", Facts{Replace: true, Window: 2 * time.Second, EstablishedAfter: true}, "", ""},
		{"HAProxy's reconnect check killed the replacement: the issue", killed, "replacement killed by HAProxy's reconnect check (no_hbt +1)", ""},
		{"a control killed the same way is a violation of the control",
			Facts{Window: 5 * time.Second, Closed: true, ClosedByPeer: true, Why: "EOF", NoHbt: [2]int64{2, 3}}, "control connection killed by HAProxy's reconnect check (no_hbt +1)", ""},
		{"closed by HAProxy without the heartbeat kill: another cause",
			func() Facts { f := killed; f.NoHbt = [2]int64{0, 0}; return f }(), "", "HAProxy closed the replacement without its reconnect check's kill (no_hbt 0 -> 0)"},
		{"closed for a protocol error",
			func() Facts { f := killed; f.ProtoErr = [2]int64{0, 1}; return f }(), "", "HAProxy closed the replacement for a protocol error (proto_err 0 -> 1), not at its reconnect check"},
		{"harp's client ended it: never HAProxy's fault",
			Facts{Replace: true, Closed: true, Why: "decoding: unknown message class 9"}, "", "harp's client ended the replacement session itself: decoding: unknown message class 9"},
		{"socket closed while show peers says established",
			Facts{Replace: true, Closed: true, ClosedByPeer: true, EstablishedAfter: true, NoHbt: [2]int64{0, 1}}, "", "the replacement socket closed but show peers still shows the peer established"},
		{"socket open while show peers says not established", Facts{Replace: true}, "", "the replacement socket is open but show peers shows the peer not established"},
		{"a check after harp's first heartbeat proves nothing", Facts{Replace: true, CheckAfterHeartbeat: true}, "",
			"HAProxy's next reconnect check of the replacement comes after harp's first heartbeat, which refreshes the alive flag"},
		{"no reconnect check to wait for", Facts{Replace: true, NoCheck: true}, "", "show peers showed no reconnect check pending for the replacement: no window to watch"},
	} {
		v, u := Judge(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
}

// The judge on windows recorded from real trials: the remote peer's show
// peers block before and after (fixtures/windows/3519/<build>/). On 3.4.7
// the replacement was closed by HAProxy; on 3.0.11 with harp's fix it stayed.
func TestJudgeOnCapturedWindows(t *testing.T) {
	for _, c := range []struct {
		dir       string
		closed    bool
		violation string
	}{
		{"3.4.7-1", true, "replacement killed by HAProxy's reconnect check (no_hbt +1)"},
		{"3.0.11-with-fix", false, ""},
	} {
		before, after := capturedPeer(t, c.dir, "remote-before.txt"), capturedPeer(t, c.dir, "remote-after.txt")
		f := Facts{Replace: true, Closed: c.closed, ClosedByPeer: c.closed, Why: "EOF", EstablishedAfter: after.Established(),
			NoHbt: [2]int64{before.Int("no_hbt"), after.Int("no_hbt")}, ProtoErr: [2]int64{before.Int("proto_err"), after.Int("proto_err")}}
		if v, u := Judge(f); v != c.violation || u != "" {
			t.Errorf("%s: %q, %q", c.dir, v, u)
		}
	}
}

// capturedPeer parses a recorded remote peer block.
func capturedPeer(t *testing.T, dir, file string) cliout.Peer {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "windows", "3519", dir, file))
	if err != nil {
		t.Fatal(err)
	}
	secs, err := cliout.ParsePeers("0x1: [30/Nov/2026:07:27:24] id=sync disabled=0 flags=0x3 resync_timeout=<PAST> task_calls=1\n" + string(raw))
	if err != nil || len(secs) != 1 {
		t.Fatalf("%s/%s: %v", dir, file, err)
	}
	p, ok := secs[0].Peer("remote")
	if !ok {
		t.Fatalf("%s/%s: no remote peer", dir, file)
	}
	return p
}

// Attempts that are not the scenario under test are run again; others are not.
func TestRerun(t *testing.T) {
	late, _ := Judge(Facts{Replace: true, CheckAfterHeartbeat: true})
	_, lateUnmet := Judge(Facts{Replace: true, CheckAfterHeartbeat: true})
	if late != "" || !rerun(lateUnmet) || !rerun(collided+": coll went from 0 to 2, want 1") || rerun("show peers never showed the first session established") {
		t.Errorf("rerun: %q", lateUnmet)
	}
}
