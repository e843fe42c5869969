// Package judge decides a conf-crafted-updates-obey-receiver check from
// what it observed: pure functions of recorded facts, with nothing of
// Docker's in their imports, so that `make unit` tests them alone.
package judge

import (
	"fmt"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/obs"
)

// SuiteID is the suite's id, the first part of its findings' signatures.
const SuiteID = "conf-crafted-updates-obey-receiver"

// Evidence is what one check recorded.
type Evidence struct {
	Kind  string `json:"kind"`
	Facts Facts  `json:"facts"`
}

// Facts are what one check observed: its unmet precondition, violations,
// what held, and the first reading harp could not make (which makes it
// decide nothing, obs.Unknowns).
type Facts struct {
	Kind string `json:"kind"`
	obs.Record
}

// Check decides one check: an unmet precondition makes it say nothing,
// whatever it saw; otherwise every violation it saw counts.
func Check(f Facts) (violation, unmet string) { return f.Decide(f.Kind) }

// HeartbeatDrop is why a session the node dropped after it had applied
// the update harp sent after the crafted messages says nothing of them
// ("" when it does): HAProxy's reconnect check dropped it (no_hbt up,
// proto_err not), as it drops a peer it heard nothing from for a period,
// or one whose alive flag the release of a superseded connection cleared
// (#3519, in 3.0.11 and later until fixed). The messages had been read
// past: the session did not choke on them. before and after are HAProxy's
// counters for harp's peer at the check's start and once it ended.
func HeartbeatDrop(before, after cliout.Peer) string {
	nb, na := before.Int("no_hbt"), after.Int("no_hbt")
	if na <= nb || after.Int("proto_err") != before.Int("proto_err") {
		return ""
	}
	return fmt.Sprintf("HAProxy's reconnect check dropped it (no_hbt %d -> %d, proto_err unchanged, coll %d) after it had applied the update sent after the messages: a peer it heard nothing from for a period (harp starved?) or whose alive flag a superseded connection's release cleared (#3519), not the messages", nb, na, after.Int("coll"))
}
