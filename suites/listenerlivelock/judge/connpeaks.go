package judge

import (
	"fmt"

	"github.com/harp-project/harp/harness/core/cliout"
)

// ConnPeaks are the highest connection counts sampled over a while: a
// frontend's sessions (show stat scur) and the process's connections
// (show info CurrConns), each with its limit as last read (slim, Maxconn).
type ConnPeaks struct {
	Frontend, FrontendLimit, Process, ProcessLimit int64
}

// AddFrontend folds in a sample of the frontend's row.
func (p *ConnPeaks) AddFrontend(fe cliout.StatRow) {
	p.Frontend, p.FrontendLimit = max(p.Frontend, fe.Int("scur")), fe.Int("slim")
}

// AddProcess folds in a sample of show info.
func (p *ConnPeaks) AddProcess(info cliout.Info) {
	p.Process, p.ProcessLimit = max(p.Process, info.Int("CurrConns")), info.Int("Maxconn")
}

// Reached says whether the process's peak (process) or else the
// frontend's hit its limit, and what says it did not.
func (p ConnPeaks) Reached(process bool) (bool, string) {
	if process {
		return p.Process >= p.ProcessLimit && p.ProcessLimit > 0, fmt.Sprintf("the process never reached its maxconn (peak %d of %d)", p.Process, p.ProcessLimit)
	}
	return p.Frontend >= p.FrontendLimit && p.FrontendLimit > 0, fmt.Sprintf("the frontend never reached its maxconn (peak %d of %d)", p.Frontend, p.FrontendLimit)
}
