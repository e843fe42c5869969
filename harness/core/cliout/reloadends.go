package cliout

import (
	"fmt"
)

// ReloadEnds is what the master's log says of a reload: whether the old
// worker (oldPID) died on a signal during its soft-stop, and whether a
// current worker died ("" for neither).
func ReloadEnds(exits []WorkerExit, oldPID int) (oldCrash, died string) {
	d, c := ReloadExits(exits, oldPID)
	if c != nil {
		oldCrash = fmt.Sprintf("old worker %d %s during soft-stop", c.PID, c.Ended())
	}
	if d != nil {
		died = fmt.Sprintf("current worker %d %s", d.PID, d.Ended())
	}
	return oldCrash, died
}

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
