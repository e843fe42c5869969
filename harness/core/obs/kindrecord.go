package obs

// KindRecord is the facts of one trial of a suite whose trials are kinds
// of one check, taken in turn (suiteenv.RunKinds): the kind's name, which
// leads the check's texts, and the Record of what it saw. A suite's judge
// names it its Facts (type Facts = obs.KindRecord) and decides it with
// Decide(Kind); written once because suites of this shape had the same
// facts, evidence and judge word for word. Reports and test captures
// read its JSON: "kind", then the Record's fields.
type KindRecord struct {
	Kind string `json:"kind"`
	Record
}

// KindEvidence is what one such trial recorded: its kind, and its facts
// under "facts".
type KindEvidence struct {
	Kind  string     `json:"kind"`
	Facts KindRecord `json:"facts"`
}
