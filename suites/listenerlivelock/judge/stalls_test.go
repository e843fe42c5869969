package judge

import (
	"slices"
	"testing"

	"github.com/harp-project/harp/harness/core/cliout"
)

func TestListenerStalls(t *testing.T) {
	onPath := cliout.Stall{Ms: 200, LockHist: "S:PROXY", Trace: []string{"dequeue_proxy_listeners"}}
	elsewhere := cliout.Stall{Ms: 200, LockHist: "S:PEER", Trace: []string{"debug_parse_cli_loop"}}
	unknown := cliout.Stall{Ms: 200}
	short := cliout.Stall{Ms: 100, LockHist: "S:PROXY", Trace: []string{"dequeue_proxy_listeners"}}
	counted, on := ListenerStalls([]cliout.Stall{onPath, elsewhere, unknown, short}, 100)
	if on != 1 || len(counted) != 2 || !slices.EqualFunc(counted, []cliout.Stall{onPath, unknown}, func(a, b cliout.Stall) bool { return a.LockHist == b.LockHist }) {
		t.Errorf("counted %+v, on %d", counted, on)
	}
}
