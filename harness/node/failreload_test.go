package node

import (
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/obs"
)

func TestAfterFailedReload(t *testing.T) {
	running := obs.Value(obs.Exit{})
	kept := afterFailedReload(obs.Value(cliout.Procs{Master: cliout.Proc{Failed: 2}, Workers: []cliout.Proc{{PID: 9}}}), running, 1, 9)
	if a, ok := kept.Procs.Get(); !ok || !a.Counted || !a.OldListed || kept.Demoted || kept.OldGone.State != "" || kept.FailedBefore != 1 || kept.Notes() != nil {
		t.Errorf("kept: %+v", kept)
	}
	// 3.1 and later list the worker that keeps serving among the old ones.
	demoted := afterFailedReload(obs.Value(cliout.Procs{Master: cliout.Proc{Failed: 2}, OldWorkers: []cliout.Proc{{PID: 9}}}), running, 1, 9)
	if !demoted.Demoted || demoted.OldGone.State != "" || len(demoted.Notes()) != 1 || !strings.Contains(demoted.Notes()[0], "keeps serving, 9, among the old workers") {
		t.Errorf("demoted: %+v, notes %q", demoted, demoted.Notes())
	}
	replaced := afterFailedReload(obs.Value(cliout.Procs{Master: cliout.Proc{Failed: 1}, Workers: []cliout.Proc{{PID: 18}}}), running, 1, 9)
	if e, ok := replaced.OldGone.Get(); !ok || e.Process != "old worker 9" || replaced.Demoted {
		t.Errorf("replaced: %+v", replaced)
	}
	// show proc unread: unknown, never "not counted" or "old worker gone".
	unread := afterFailedReload(obs.Failure[cliout.Procs]("show proc at the end of 20s: EOF"), running, 1, 9)
	if unread.Procs.State != obs.Failed || unread.Procs.Why != "show proc at the end of 20s: EOF" || unread.OldGone.State != "" {
		t.Errorf("unread: %+v", unread)
	}
}
