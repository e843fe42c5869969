package cliout

import (
	"fmt"
)

// HeartbeatDrop is why a session the node dropped after it had applied
// the update harp sent after a turn's crafted messages says nothing of
// them ("" when it does): HAProxy's reconnect check dropped it (no_hbt
// up, proto_err not), as it drops a peer it heard nothing from for a
// period, or one whose alive flag the release of a superseded connection
// cleared (#3519, in 3.0.11 and later until fixed). The messages had been
// read past: the session did not choke on them. before and after are
// HAProxy's counters for harp's peer at the turn's start and once it
// ended. remotepeer.Turn.Kept applies it.
func HeartbeatDrop(before, after Peer) string {
	nb, na := before.Int("no_hbt"), after.Int("no_hbt")
	if na <= nb || after.Int("proto_err") != before.Int("proto_err") {
		return ""
	}
	return fmt.Sprintf("HAProxy's reconnect check dropped it (no_hbt %d -> %d, proto_err unchanged, coll %d) after it had applied the update sent after the messages: a peer it heard nothing from for a period (harp starved?) or whose alive flag a superseded connection's release cleared (#3519), not the messages", nb, na, after.Int("coll"))
}
