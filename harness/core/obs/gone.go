package obs

// Gone says whether an exit observation saw the process exit (a value
// with its Process set, as node.MasterExit gives it).
func Gone(e Of[Exit]) bool {
	v, ok := e.Get()
	return ok && v.Process != ""
}
