package node

import (
	"context"

	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/core/verdict"
)

// ShowLogs shows the last lines of the node's output (the master's log
// and its workers') in the trial's report under title; nothing when harp
// could not read it: the report loses an excerpt, the verdict nothing.
func (n *Node) ShowLogs(ctx context.Context, t *verdict.Trial, title string, lines int) {
	if logs, err := n.Logs(ctx); err == nil {
		t.Show(title, text.LastLines(logs, lines))
	}
}
