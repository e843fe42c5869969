package judge

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

// How a trial's window is judged; the facts are those real runs record
// (3.4.7: the replacement closed by HAProxy about 1 s after the first
// socket, show peers no longer established, no_hbt 0 -> 1).
func TestJudge(t *testing.T) {
	after := func(s State) obs.Optional[State] { return obs.Opt(obs.Value(s)) }
	byHAProxy := obs.Opt(obs.Value("EOF"))
	killed := Facts{Replace: true, Window: 1500 * time.Millisecond, Closing: byHAProxy, ClosedAfter: 1043 * time.Millisecond, After: after(State{NoHbt: 1})}
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
		want             verdict.Verdict
	}{
		{"replacement kept through the check: held", Facts{Replace: true, Window: 2 * time.Second, After: after(State{Established: true})}, "", "", verdict.Pass},
		{"the check seen passed before the window's end: held", Facts{Replace: true, Window: 2500 * time.Millisecond, CheckPassed: 1206 * time.Millisecond, After: after(State{Established: true})}, "", "", verdict.Pass},
		{"HAProxy's reconnect check killed the replacement: the issue", killed, "replacement killed by HAProxy's reconnect check (no_hbt +1)", "", verdict.Reproduced},
		{"a control killed the same way is a violation of the control",
			Facts{Window: 5 * time.Second, Closing: byHAProxy, Before: State{NoHbt: 2}, After: after(State{NoHbt: 3})}, "control connection killed by HAProxy's reconnect check (no_hbt +1)", "", verdict.Reproduced},
		{"closed by HAProxy without the heartbeat kill: another cause",
			func() Facts { f := killed; f.After = after(State{}); return f }(), "", "HAProxy closed the replacement without its reconnect check's kill (no_hbt 0 -> 0)", verdict.Inconclusive},
		{"closed for a protocol error",
			func() Facts { f := killed; f.After = after(State{NoHbt: 1, ProtoErr: 1}); return f }(), "", "HAProxy closed the replacement for a protocol error (proto_err 0 -> 1), not at its reconnect check", verdict.Inconclusive},
		{"socket closed while show peers says established",
			Facts{Replace: true, Closing: byHAProxy, After: after(State{Established: true, NoHbt: 1})}, "", "the replacement socket closed but show peers still shows the peer established", verdict.Inconclusive},
		{"socket open while show peers says not established", Facts{Replace: true, After: after(State{})}, "", "the replacement socket is open but show peers shows the peer not established", verdict.Inconclusive},
		{"a check after harp's first heartbeat proves nothing", Facts{Replace: true, CheckAfterHeartbeat: true}, "",
			"HAProxy's next reconnect check of the replacement comes after harp's first heartbeat, which refreshes the alive flag", verdict.Inconclusive},
		{"a superseded attempt of HAProxy's ended in the window: proves nothing", Facts{AttemptEnded: true, Window: 2500 * time.Millisecond, Closing: byHAProxy, Before: State{}, After: after(State{NoHbt: 1})}, "",
			"an attempt of HAProxy's own to connect, superseded and still retrying, ended while the control connection was watched: its release clears the alive flag", verdict.Inconclusive},
		{"no reconnect check to wait for", Facts{Replace: true, NoCheck: true}, "", "show peers showed no reconnect check pending for the replacement: no window to watch", verdict.Inconclusive},
		// Harness faults: unknown, never HAProxy's. Today's code called the
		// first an unmet precondition and the second an ERROR.
		{"harp's client ended it: never HAProxy's fault",
			Facts{Replace: true, Closing: obs.Opt(obs.Failure[string]("harp's client ended the replacement session itself: decoding: unknown message class 9")), After: after(State{})}, "", "", verdict.Inconclusive},
		{"show peers unread after a kill", func() Facts { f := killed; f.After = obs.Opt(obs.Failure[State]("show peers: i/o timeout")); return f }(), "", "", verdict.Inconclusive},
	} {
		v, u := Trial(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
		tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Evidence: &c.f}
		if got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "trials"); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, reason, c.want)
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
		f := Facts{Replace: true, Before: StateOf(before), After: obs.Opt(obs.Value(StateOf(after)))}
		if c.closed {
			f.Closing = obs.Opt(obs.Value("EOF"))
		}
		if v, u := Trial(f); v != c.violation || u != "" {
			t.Errorf("%s: %q, %q", c.dir, v, u)
		}
	}
}

// capturedPeer parses a recorded remote peer block.
func capturedPeer(t *testing.T, dir, file string) cliout.Peer {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "fixtures", "windows", "3519", dir, file))
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
