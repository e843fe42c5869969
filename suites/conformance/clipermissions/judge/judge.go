// Package judge decides a conf-cli-permissions trial (one socket) from
// what it observed: pure functions of recorded facts, with nothing of
// Docker's in their imports, so that `make unit` tests them alone.
package judge

import (
	"fmt"
	"strings"

	"github.com/harp-project/harp/harness/core/verdict"
)

// SuiteID is the suite's id, the first part of its findings' signatures.
const SuiteID = "conf-cli-permissions"

// Evidence is what one trial recorded.
type Evidence struct {
	Table string `json:"level_table"`
	Facts Facts  `json:"facts"`
}

// Call is one command sent below (or, for reads, at) its level.
type Call struct {
	Command   string `json:"command"`
	Level     string `json:"documented_level"`
	CodeLevel string `json:"code_level,omitempty"`
	Answer    string `json:"answer"`
	Refused   bool   `json:"refused"`
	Changed   string `json:"changed,omitempty"` // for changes: the state before -> after ("" unchanged)
	// Unread: the state the command would change could not be read
	// before or after it. Each command is its own check: its unknown state
	// says nothing of the others' (Socket), so it is not an obs.Of that
	// would make the whole socket's trial say nothing.
	Unread string `json:"unread,omitempty"`
	Failed string `json:"failed,omitempty"` // a read that got an empty answer
	Err    string `json:"error,omitempty"`  // a read that could not be sent
}

// Facts are what one trial observed.
type Facts struct {
	Socket   string   `json:"socket"`
	Setup    string   `json:"setup,omitempty"`
	Changes  []Call   `json:"changes,omitempty"`
	Reads    []Call   `json:"reads,omitempty"`
	Unprobed []string `json:"unprobed,omitempty"`
}

// Refused counts the state-changing commands refused.
func (f Facts) Refused() int { return f.count(func(c Call) bool { return c.Refused }) }

// Changed counts the state-changing commands that changed state.
func (f Facts) Changed() int { return f.count(func(c Call) bool { return c.Changed != "" }) }

func (f Facts) count(is func(Call) bool) int {
	k := 0
	for _, c := range f.Changes {
		if is(c) {
			k++
		}
	}
	return k
}

// CheckID names one command's check on one socket, stable across builds
// ("user.set-table.refusal-changes-nothing"): the command's verb and
// object, without its arguments.
func CheckID(socket, command, what string) string {
	words := strings.Fields(command)
	if len(words) > 2 {
		words = words[:2]
	}
	return verdict.Slug(socket) + "." + verdict.Slug(strings.Join(words, " ")) + "." + what
}

// SocketChecks decides one trial, with each command's checks by id. A
// command below its documented level that changed state is a security
// violation, refused or not; one answered as a success is a violation
// even if nothing changed; a documented read refused at its own level is
// one too; a state not read is the one rule's.
func SocketChecks(f Facts) (cs verdict.Checks, violation, unmet string) {
	var unread []string
	for _, c := range f.Changes {
		switch ch := c.Changed; {
		case c.Unread != "":
			unread = append(unread, fmt.Sprintf("%q (%s)", c.Command, c.Unread))
		case c.Refused:
			if ch == "" {
				cs.Hold(CheckID(f.Socket, c.Command, "level-enforced"))
			}
			cs.Expect(CheckID(f.Socket, c.Command, "refusal-changes-nothing"), ch == "",
				fmt.Sprintf("SECURITY: %q (documented %s) refused on the %s socket (%q) but changed %s", c.Command, c.Level, f.Socket, c.Answer, ch))
		case ch != "":
			cs.Fail(CheckID(f.Socket, c.Command, "level-enforced"),
				fmt.Sprintf("SECURITY: %q (documented %s) accepted on the %s socket and changed %s", c.Command, c.Level, f.Socket, ch))
		default:
			cs.Fail(CheckID(f.Socket, c.Command, "no-false-success"),
				fmt.Sprintf("%q (documented %s) answered as a success on the %s socket, though it changed nothing", c.Command, c.Level, f.Socket))
		}
	}
	for _, c := range f.Reads {
		id := CheckID(f.Socket, c.Command, "read-allowed")
		switch {
		case c.Refused:
			cs.Fail(id, fmt.Sprintf("%q refused at its documented level %s (%q)", c.Command, c.Level, c.Answer))
		case c.Failed != "":
			cs.Fail(id, fmt.Sprintf("%q got no answer at its documented level %s (%s)", c.Command, c.Level, c.Failed))
		case c.Err == "":
			cs.Hold(id)
		}
	}
	// A violation seen stands: each command's check had its preconditions
	// met when it ran, whatever a later one lacked (Setup) or could not
	// read.
	if violation = cs.Violation(f.Socket + " socket"); violation != "" {
		return cs, violation, ""
	}
	if f.Setup != "" {
		return cs, "", f.Socket + " socket: " + f.Setup
	}
	if len(unread) > 0 {
		return cs, "", fmt.Sprintf("%s socket: the state %d command(s) would change could not be read: %s", f.Socket, len(unread), strings.Join(unread, "; "))
	}
	for _, c := range f.Reads {
		if c.Err != "" {
			return cs, "", fmt.Sprintf("%s socket: %q could not be sent: %s", f.Socket, c.Command, c.Err)
		}
	}
	return cs, "", ""
}
