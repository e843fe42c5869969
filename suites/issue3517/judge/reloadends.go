package judge

import (
	"fmt"

	"github.com/harp-project/harp/harness/core/cliout"
)

// ReloadEnds is what the master's log says of a reload: whether the old
// worker (oldPID) died on a signal during its soft-stop, and whether a
// current worker died ("" for neither).
func ReloadEnds(exits []cliout.WorkerExit, oldPID int) (oldCrash, died string) {
	d, c := cliout.ReloadExits(exits, oldPID)
	if c != nil {
		oldCrash = fmt.Sprintf("old worker %d %s during soft-stop", c.PID, c.Ended())
	}
	if d != nil {
		died = fmt.Sprintf("current worker %d %s", d.PID, d.Ended())
	}
	return oldCrash, died
}
