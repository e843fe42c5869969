package reloads

import (
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/live/cluster"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/load"
)

func TestNoteLoad(t *testing.T) {
	members := []*cluster.Member{{MemberDef: cluster.MemberDef{Name: "node1"}}, {MemberDef: cluster.MemberDef{Name: "node2"}}, {MemberDef: cluster.MemberDef{Name: "node3"}}}
	results := []load.Result{{Requests: 10, Success: 1}, {Requests: 0}, {Requests: 5, Success: 0}}
	var tr verdict.Trial
	problems := noteLoad(&tr, members, results)
	if len(tr.Notes) != 3 || !strings.HasPrefix(tr.Notes[0], "write load on node1: ") {
		t.Fatalf("notes = %q, want one per member in order", tr.Notes)
	}
	if len(problems) != 2 || !strings.HasPrefix(problems[0], "no write load reached node2 (") || !strings.HasPrefix(problems[1], "no write load reached node3 (") {
		t.Fatalf("problems = %q, want node2 and node3", problems)
	}
}
