package cliout

// AfterFailure is what show proc says after a reload that should have
// failed.
type AfterFailure struct {
	Failed    int  `json:"failed"`
	Counted   bool `json:"counted"` // one more failed reload than before
	OldListed bool `json:"old_listed"`
	NewWorker int  `json:"new_worker,omitempty"` // a current worker other than old
}

// AfterFailure reads show proc after a reload that should have failed,
// given the master's failed count before it and the worker (old) that
// served before it.
func (p Procs) AfterFailure(failedBefore, old int) AfterFailure {
	a := AfterFailure{Failed: p.Master.Failed, Counted: p.Master.Failed > failedBefore}
	_, a.OldListed = p.Find(old)
	if cur, ok := p.Current(); ok && cur.PID != old {
		a.NewWorker = cur.PID
	}
	return a
}
