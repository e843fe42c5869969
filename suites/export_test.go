package suites

// Exported for the tests of how a #3517 round is judged.
var Judge3517 = judge

type (
	RoundFacts3517 = roundFacts
	Marker3517     = marker
)
