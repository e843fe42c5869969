package craftedupdatesobeyreceiver

import (
	_ "embed"

	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/repro"
	craftedjudge "github.com/harp-project/harp/suites/conformance/craftedupdatesobeyreceiver/judge"
)

// reproScript is the reproducer's template, rendered with repro's shared helpers.
//
//go:embed repro.py
var reproScript string

// The crafted-updates suite's node: its section, peers and table
// (conf-crafted-updates-obey-receiver.cfg.tmpl, beside it), and the
// check the repro.Python script reproduces.
const (
	learnedKind    = "huge expiry"
	learnedSection = "crafted"
	// Results recorded before the crafted checks left
	// conf-learned-entries-obey-receiver hold the node after this marker,
	// beside the two real nodes, and name the check with a prefix.
	legacySuite  = "conf-learned-entries-obey-receiver"
	legacyMarker = "# ---- nodeC"
	legacyPrefix = "crafted: "
)

// matchLearned: the huge-expiry check's finding, or the whole property's
// from results recorded before the suite named a check per kind.
func matchLearned(f findings.Finding) bool {
	switch f.Kind {
	case findings.KindCheck:
		return f.Suite == craftedjudge.SuiteID && f.Check == verdict.Slug(learnedKind)
	case findings.KindProperty:
		return f.Suite == craftedjudge.SuiteID || f.Suite == legacySuite
	}
	return false
}

var (
	peerLine  = regexp.MustCompile(`(?m)^\s*peer\s+(\S+)\s+(\S+)`)
	tableLine = regexp.MustCompile(`(?m)^\s*table\s+(\S+)\s.*\bexpire\s+(\d+)(ms|s|m)\b`)
)

// learnedExpiry: the script reproduces the violation that needs raw
// peers-protocol bytes (a timed update with a 2^31-1 ms expiry), and only
// from a result where that trial was the one violated.
func learnedExpiry(f findings.Finding, r report.Result) (repro.Repro, error) {
	evs, err := repro.Trials[craftedjudge.Evidence](r)
	if err != nil {
		return repro.Repro{}, err
	}
	kind, node := learnedKind, r.Config
	if r.Suite == legacySuite {
		kind = legacyPrefix + learnedKind
	}
	violated := false
	for _, t := range r.Trials {
		if evs[t.N].Kind == kind && t.Violation != "" && t.UnmetReason() == "" {
			violated = true
		}
	}
	if !violated {
		return repro.Repro{}, fmt.Errorf("the result on %s has no violated %q trial: the repro.Python reproducer shows that check only", repro.BuildName(r), kind)
	}
	if r.Suite == legacySuite {
		_, rest, ok := strings.Cut(r.Config, legacyMarker)
		if !ok {
			return repro.Repro{}, fmt.Errorf("the recorded config has no %q part (the node harp's peers client talks to)", legacyMarker)
		}
		_, node, _ = strings.Cut(rest, "\n") // the marker line's rest
	}
	loc, err := repro.Localize(node)
	if err != nil {
		return repro.Repro{}, err
	}
	if loc.Sockets["admin"] != "admin.sock" {
		return repro.Repro{}, fmt.Errorf("the crafted node's config has no admin stats socket")
	}
	if !strings.Contains(node, "peers "+learnedSection) {
		return repro.Repro{}, fmt.Errorf("the crafted node's config has no peers section %s", learnedSection)
	}
	peers := peerLine.FindAllStringSubmatch(node, -1)
	tm := tableLine.FindStringSubmatch(node)
	if len(peers) != 2 || tm == nil {
		return repro.Repro{}, fmt.Errorf("the crafted node's config is not two peers and one table with an expire")
	}
	local, remote := peers[0][1], peers[1][1]
	localPort := peers[0][2][strings.LastIndex(peers[0][2], ":")+1:]
	if !strings.Contains(node, "localpeer "+local) {
		return repro.Repro{}, fmt.Errorf("the crafted node's local peer is not %s", local)
	}
	n, _ := strconv.Atoi(tm[2])
	ms := map[string]int{"ms": 1, "s": 1000, "m": 60000}[tm[3]] * n
	var pyPorts []string
	for _, p := range loc.Ports {
		pyPorts = append(pyPorts, strconv.Quote(p))
	}
	data := map[string]any{"Finding": f, "From": fmt.Sprintf("%s (%s), %s", repro.BuildName(r), r.Build, r.Evidence),
		"Section": learnedSection, "Local": local, "Remote": remote, "Table": tm[1], "ExpireMS": ms,
		"PeerPort": localPort, "PyPorts": "[" + strings.Join(pyPorts, ", ") + "]"}
	script, err := repro.Render("repro.py", reproScript, data)
	if err != nil {
		return repro.Repro{}, err
	}
	does := []string{
		"Copies `haproxy.cfg` (the node harp's peers client talked to) to a temporary directory, picks free ports, checks `haproxy -c` accepts it and starts `haproxy -W -db -f haproxy.cfg -S <dir>/master.sock`; waits for its stats socket, then for section " + learnedSection + "'s initial resync to finish (`show peers` flags 0x1|0x2, up to 25 s), so that HAProxy does not ask the script's peer to teach it.",
		fmt.Sprintf("Connects to the local peer's port as peer `%s` and sends the handshake (`HAProxyS 2.1`, `%s`, `%s <pid> 1`); HAProxy must answer 200 and show the session established. From then on the script answers as a quiet, up-to-date peer (resync-finished, confirms, acks) and sends a heartbeat every 1.5 s.", remote, local, remote),
		fmt.Sprintf("`set table %s/%s key harp-def data.gpc0 1` on the admin socket, so that HAProxy pushes an update: the script reads HAProxy's own definition of the table from it (the name and data types it uses on the wire).", learnedSection, tm[1]),
		fmt.Sprintf("Sends that definition back (table id 1) and a timed update (message 10/0x85: update id 1, expiry 2147483647 ms, key ce-repro, gpc0 4), then polls `show table %s/%s key ce-repro` (up to 5 s).", learnedSection, tm[1]),
		fmt.Sprintf("REPRODUCED when the stored entry expires later than the table's own expire (%d ms); PASS when it expires within it; INCONCLUSIVE when the update was never applied or a step before it could not be made.", ms),
	}
	return repro.Repro{Lang: repro.Python, Files: []repro.File{{Name: "reproduce", Exec: true, Text: script}, {Name: "haproxy.cfg", Text: loc.Config}},
		Does: does, Needs: "repro.Python 3 (its standard library, and of it only what Debian's python3-minimal holds: socket, struct, select, subprocess) and Linux",
		Reproduces: fmt.Sprintf("its %q violation (the suite's other checks are harp's to run)", kind)}, nil
}

// The suite's reproducer, for harp findings repro.
func init() {
	repro.Register(repro.Generator{Pattern: "conf-crafted-updates-obey-receiver/huge-expiry (and the whole suite, or conf-learned-entries-obey-receiver, recorded before it named checks)", What: "a crafted peers timed update with a huge expiry (Python 3, raw peers protocol)", Match: matchLearned, Make: learnedExpiry})
}
