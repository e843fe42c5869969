package judge

import (
	"fmt"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
)

// ReloadDeaths is what cliout.ReloadExits finds, as a judge's facts hold it: the
// new worker's death as its exit ("the new worker 9", its code and
// reason; never made when it lives), which explains the reads that fail
// after it, and the old worker's crash during its soft-stop ("exited
// with code 139 (Segmentation fault) during soft-stop"; "" for none).
func ReloadDeaths(exits []cliout.WorkerExit, oldPID int) (died obs.Optional[obs.Exit], oldCrash string) {
	d, c := cliout.ReloadExits(exits, oldPID)
	if d != nil {
		died = obs.Opt(obs.Value(obs.Exit{Process: fmt.Sprintf("the new worker %d", d.PID), Code: d.Code, Signal: d.Reason}))
	}
	if c != nil {
		oldCrash = c.Ended() + " during soft-stop"
	}
	return died, oldCrash
}
