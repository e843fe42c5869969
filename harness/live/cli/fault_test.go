package cli_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/live/cli"
)

func withFault(t *testing.T, path string, inj cli.Injected) {
	t.Helper()
	cli.Fault = func(_ context.Context, p, _ string) cli.Injected {
		if p == path {
			return inj
		}
		return cli.Injected{}
	}
	t.Cleanup(func() { cli.Fault = nil })
}

var errInjected = errors.New("injected")

// Every harness fault on an exchange ends as harp's failure, never as an
// answer; a late read still reads what HAProxy said in time.
func TestFaultsAreHarps(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	answer := func(c *net.TCPConn) { c.Write([]byte("Pid: 7\n")); <-hold }
	control := func(context.Context) error { return nil }

	withFault(t, "raw", cli.Injected{Err: errInjected})
	if r, err := cli.Raw(context.Background(), serve(t, answer), "show info\n", cli.RawOptions{Wait: time.Second}); !errors.Is(err, errInjected) || r.Closed || r.Quiet {
		t.Errorf("harp's early close: %+v %v", r, err)
	}
	withFault(t, "raw", cli.Injected{Cut: true})
	if r, err := cli.Raw(context.Background(), serve(t, answer), "show info\n", cli.RawOptions{Wait: time.Second, Control: control}); !errors.Is(err, cli.ErrCut) {
		t.Errorf("harp's cut: %+v %v", r, err)
	}
	// Read 300 ms late, past the control's 100 ms of quiet: the answer
	// that came in time is read, never taken for silence.
	withFault(t, "raw", cli.Injected{Late: 300 * time.Millisecond})
	r, err := cli.Raw(context.Background(), serve(t, answer), "show info\n", cli.RawOptions{Wait: 2 * time.Second, Grace: 100 * time.Millisecond, Control: control})
	if err != nil || r.Text != "Pid: 7\n" || !r.Quiet {
		t.Errorf("a late read: %+v %v", r, err)
	}
	withFault(t, "dial", cli.Injected{Err: errInjected})
	if _, err := cli.Raw(context.Background(), serve(t, answer), "show info\n", cli.RawOptions{}); !errors.Is(err, errInjected) {
		t.Errorf("a failed dial: %v", err)
	}
	withFault(t, "read-to-close", cli.Injected{Err: errInjected})
	conn, err := cli.Dial(context.Background(), serve(t, func(c *net.TCPConn) {}), "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := cli.ReadToClose(conn, time.Second); cli.FateOf(err) != cli.Reset {
		t.Errorf("harp's own end of a read to the close: %v (%s)", err, cli.FateOf(err))
	}
}
