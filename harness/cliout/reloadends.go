package cliout

import "fmt"

// ReloadEnds is what the master's log says of a reload: whether the old
// worker (oldPID) died on a signal during its soft-stop, and whether a
// current worker died ("" for neither).
func ReloadEnds(exits []WorkerExit, oldPID int) (oldCrash, died string) {
	for _, e := range exits {
		switch {
		case e.Current:
			died = fmt.Sprintf("current worker %d %s", e.PID, e.Ended())
		case e.PID == oldPID && e.Code >= 128:
			oldCrash = fmt.Sprintf("old worker %d %s during soft-stop", e.PID, e.Ended())
		}
	}
	return oldCrash, died
}
