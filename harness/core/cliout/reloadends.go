package cliout

// ReloadExits are the exits in the master's log (exits) that tell how a
// reload ended, whole, as ReloadEnds words them, for facts that keep
// the code and the signal: the last exit of a current worker (died: the
// new worker died) and the last of the old worker oldPID on a signal
// (oldCrash: it crashed during its soft-stop); nil for none.
func ReloadExits(exits []WorkerExit, oldPID int) (died, oldCrash *WorkerExit) {
	for _, e := range exits {
		switch {
		case e.Current:
			died = &e
		case e.PID == oldPID && e.Code >= 128:
			oldCrash = &e
		}
	}
	return died, oldCrash
}
