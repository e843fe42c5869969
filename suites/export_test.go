package suites

// Exported for the tests of how a #3517 round is judged.
var Judge3517 = judge

type (
	RoundFacts3517 = roundFacts
	Marker3517     = marker
)

var (
	CPUsFor       = cpusFor
	WarnsOnStalls = warnsOnStalls
)

// LivelockConfig renders the livelock config from the environment's knobs.
func LivelockConfig() (string, error) { return LivelockParams().config() }

// WaitMesh waits until a cluster has meshed and synced ("" when it has).
var WaitMesh = waitMesh
