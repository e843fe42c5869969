package cliout

// WorkerLayout is how a worker runs a frontend: its version and threads
// (show info), its thread groups (show threads) and the frontend's
// listeners (show stat, with `option socket-stats`).
type WorkerLayout struct {
	Version   string
	Threads   int64 // from show info
	Groups    int   // from show threads
	Listeners int   // the frontend's, from show stat
}
