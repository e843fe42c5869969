package clipermissions

import (
	_ "embed"
	"slices"

	"fmt"
	"strings"

	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/repro"
	clijudge "github.com/harp-project/harp/suites/conformance/clipermissions/judge"
)

// reproScript is the reproducer's template, rendered with repro's shared helpers.
//
//go:embed repro.sh
var reproScript string

var cliChecks = map[string]string{
	"refusal-changes-nothing": "a refused command changes nothing",
	"level-enforced":          "a command below its level is refused and changes nothing",
	"no-false-success":        "a command answered as a success did something",
	"read-allowed":            "a read works at its documented level",
}

func matchCLIPermissions(f findings.Finding) bool {
	return f.Kind == findings.KindCheck && f.Suite == clijudge.SuiteID
}

func cliPermissions(f findings.Finding, r report.Result) (repro.Repro, error) {
	i := strings.LastIndex(f.Check, ".")
	if i < 0 {
		return repro.Repro{}, fmt.Errorf("check %q is not <socket>.<command>.<check>", f.Check)
	}
	what := f.Check[i+1:]
	if _, ok := cliChecks[what]; !ok {
		return repro.Repro{}, fmt.Errorf("unknown check %q of %s", what, clijudge.SuiteID)
	}
	evs, err := repro.Trials[clijudge.Evidence](r)
	if err != nil {
		return repro.Repro{}, err
	}
	// The judged command, and every state-changing command harp sent
	// before it on that node (earlier trials' too, each trial starting
	// with the table entry set again): they make the state it met (a
	// `clear map` after a `del map` has nothing left to clear).
	var call clijudge.Call
	var socket string
	var steps []cliStep
	found := false
	for _, t := range repro.SortedTrials(r) {
		fa := evs[t.N].Facts
		if found {
			break
		}
		steps = append(steps, cliStep{"admin", "set table tbl key " + cliKey + " data.gpc0 5"})
		calls := fa.Changes
		if what == "read-allowed" {
			calls = fa.Reads
		}
		for _, c := range calls {
			// Two commands may share a check id (its verb and object):
			// the judged one is the one whose outcome failed it.
			if clijudge.CheckID(fa.Socket, c.Command, what) == f.Check && failedCheck(c, what) {
				call, socket, found = c, fa.Socket, true
				break
			}
			// Reads change nothing; a command that never reached the
			// socket did nothing.
			if what != "read-allowed" && !strings.HasPrefix(c.Unread, "the command never reached") {
				steps = append(steps, cliStep{fa.Socket, c.Command})
			}
		}
	}
	if !found {
		return repro.Repro{}, fmt.Errorf("no trial of the result on %s sent the command of %s", repro.BuildName(r), f.Check)
	}
	for i := range steps {
		steps[i].Command = localPath(steps[i].Command)
	}
	probe := ""
	if what != "read-allowed" {
		if probe, err = cliProbe(call.Command); err != nil {
			return repro.Repro{}, err
		}
	}
	loc, err := repro.Localize(r.Config)
	if err != nil {
		return repro.Repro{}, err
	}
	for _, level := range []string{"admin", "operator", "user"} {
		if loc.Sockets[level] != level+".sock" {
			return repro.Repro{}, fmt.Errorf("the recorded config has no %s stats socket", level)
		}
	}
	web := "8080"
	if !slices.Contains(loc.Ports, web) {
		return repro.Repro{}, fmt.Errorf("the recorded config has no port %s (the suite's frontend): ports %v", web, loc.Ports)
	}
	cmd := strings.ReplaceAll(call.Command, "/etc/harp/", "${REPRO_DIR}/")
	quoted := []string{cmd, probe}
	for _, st := range steps {
		quoted = append(quoted, st.Command)
	}
	for _, s := range quoted {
		if strings.ContainsAny(strings.ReplaceAll(s, "${REPRO_DIR}", ""), "\"$`\\\n") {
			return repro.Repro{}, fmt.Errorf("command %q holds characters the script cannot quote", call.Command)
		}
	}
	level := call.Level
	data := map[string]any{"Finding": f, "From": fmt.Sprintf("%s (%s), %s", repro.BuildName(r), r.Build, r.Evidence),
		"Socket": socket, "Level": level, "What": what, "WhatText": cliChecks[what], "Probe": probe,
		"Ports": strings.Join(loc.Ports, " "), "WebPort": web, "Command": cmd, "Steps": steps}
	script, err := repro.Render("repro.sh", reproScript, data)
	if err != nil {
		return repro.Repro{}, err
	}
	does := []string{
		"Copies `haproxy.cfg` to a temporary directory with the map `m.map` (k v0) and the ACL file `a.acl` (192.0.2.9) it reads, picks free ports, checks `haproxy -c` accepts it and starts `haproxy -W -db -f haproxy.cfg -S <dir>/master.sock`, with three stats sockets there: admin.sock, operator.sock and user.sock (`level admin`, `operator`, `user`).",
		"Setup, as harp's run: 5 HTTP requests answered 200.",
		fmt.Sprintf("Replays, in order, the %d commands harp sent on that node before the judged one (each trial's `set table tbl key %s data.gpc0 5` on the admin socket, then each state-changing command on its trial's socket), so that the judged command meets the state it met in harp's run.", len(steps), cliKey),
	}
	if what == "read-allowed" {
		does = append(does, fmt.Sprintf("Sends `%s` on the %s socket (its documented level), followed by `show cli level` so that the whole answer is known: REPRODUCED when it is refused (Permission denied, Unknown command) or empty, PASS otherwise.", call.Command, level))
	} else {
		does = append(does,
			fmt.Sprintf("Reads the state the command would change on the admin socket (%s), sends `%s` on the %s socket (documented level: %s) followed by `show cli level` so that the whole answer is known, and reads the state again.", probeText(probe), call.Command, socket, call.Level),
			fmt.Sprintf("Judges %s (%s): a refused command (any answer but an empty one or Done) must change nothing; a command answered as a success below its level is a violation whether it changed something (level-enforced) or not (no-false-success). REPRODUCED when %s fails, PASS when it holds, INCONCLUSIVE when the answer or a state could not be read or the command fell under another check.", what, cliChecks[what], what))
	}
	files := []repro.File{{Name: "reproduce", Exec: true, Text: script}, {Name: "haproxy.cfg", Text: loc.Config}}
	return repro.Repro{Lang: repro.Sh, Files: files, Does: does, Needs: "POSIX sh and its usual tools (awk, sed, grep; the script checks for each first), socat and Linux's /proc"}, nil
}

// failedCheck says whether a recorded call failed its check, as
// clijudge.SocketChecks decides it.
func failedCheck(c clijudge.Call, what string) bool {
	if c.Unread != "" {
		return false
	}
	switch what {
	case "refusal-changes-nothing":
		return c.Refused && c.Changed != ""
	case "level-enforced":
		return !c.Refused && c.Changed != ""
	case "no-false-success":
		return !c.Refused && c.Changed == ""
	case "read-allowed":
		return c.Refused || c.Failed != ""
	}
	return false
}

// cliKey is the entry every trial of the suite sets first.
const cliKey = "harp-key"

type cliStep struct{ Socket, Command string }

// cliProbe says how the script reads the state a command would change,
// as the suite does (clipermissions' probe), or that it cannot.
func cliProbe(cmd string) (string, error) {
	has := func(s string) bool { return strings.Contains(cmd, s) }
	switch {
	case has(" table "):
		return "table", nil
	case has(" map "):
		return "map:" + localPath(fileArg(cmd, " map ")), nil
	case has(" acl "):
		return "acl:" + localPath(fileArg(cmd, " acl ")), nil
	case has("maxconn global"):
		return "info:Maxconn", nil
	case has("rate-limit connections"):
		return "info:ConnRateLimit", nil
	case has("rate-limit sessions"):
		return "info:SessRateLimit", nil
	case has("shutdown session "):
		return "", fmt.Errorf("%q needs a held client session: the sh reproducer does not hold one", cmd)
	case has("clear counters"):
		return "stat:web:FRONTEND:stot,smax,rate_max", nil
	case has("frontend"):
		return "stat:web:FRONTEND:status,slim", nil
	case has("server") || has("weight") || has("health") || has("agent"):
		return "stat:be:srv:status,weight,slim,check_status,agent_status,scur", nil
	}
	return "", fmt.Errorf("no state known that %q would change", cmd)
}

// fileArg is the word after the marker (the map or ACL file).
func fileArg(cmd, marker string) string {
	_, rest, _ := strings.Cut(cmd, marker)
	f := strings.Fields(rest)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func localPath(p string) string { return strings.ReplaceAll(p, "/etc/harp/", "${REPRO_DIR}/") }

func probeText(p string) string {
	kind, arg, _ := strings.Cut(p, ":")
	switch kind {
	case "table":
		return "`show table tbl`: its keys and gpc0"
	case "map", "acl":
		return fmt.Sprintf("`show %s %s`: its entries", kind, strings.ReplaceAll(arg, "${REPRO_DIR}", "<dir>"))
	case "info":
		return "`show info`: " + arg
	case "stat":
		parts := strings.Split(arg, ":")
		return fmt.Sprintf("`show stat` of %s/%s: %s", parts[0], parts[1], parts[2])
	}
	return p
}

// The suite's reproducer, for harp findings repro.
func init() {
	repro.Register(repro.Generator{Pattern: "conf-cli-permissions/<socket>.<command>.<check>", What: "a command below its level on a table, map, ACL, info or stat state (sh, socat)", Match: matchCLIPermissions, Make: cliPermissions})
}
