package cliout

// ExitOf is the last of exits (the master's log) that is worker pid's.
func ExitOf(exits []WorkerExit, pid int) (WorkerExit, bool) {
	var last WorkerExit
	found := false
	for _, e := range exits {
		if e.PID == pid {
			last, found = e, true
		}
	}
	return last, found
}
