// Package judge decides a #3517 round from what it observed: pure
// functions of recorded facts, with nothing of Docker's in their imports,
// so that `make unit` tests them alone.
package judge

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/text"
)

// ReloadTimeout bounds the wait for the old worker to leave after SIGUSR2.
const ReloadTimeout = 20 * time.Second

// Sections names n peers sections: first, second, then s3, s4, ...
func Sections(n int) []string {
	names := text.Numbered("s%d", n)
	copy(names, []string{"first", "second"}) // the issue's own two
	return names
}

// TablesFor is the marker table of each of n sections.
func TablesFor(n int) []string {
	var ts []string
	for _, s := range Sections(n) {
		ts = append(ts, s+"/marker")
	}
	return ts
}

// Marker is what `show table` said of the marker in one table.
type Marker struct {
	Present bool   `json:"present"`
	GPC0    string `json:"gpc0,omitempty"`
}

// Bad is why a marker is not the one set ("" when it is).
func Bad(m obs.Of[Marker]) string {
	switch v, seen := m.Get(); {
	case !seen: // never "": an unseen marker is not one that held
		return cmp.Or(m.Why, m.Unknown(), "refused") // the read's error, or HAProxy's refusal
	case !v.Present:
		return "marker absent"
	case v.GPC0 != "1":
		return "gpc0=" + v.GPC0
	}
	return ""
}

// Facts are what one round observed after the reload.
type Facts struct {
	OldPID    int
	OldExited bool
	Exits     obs.Of[[]cliout.WorkerExit] // the master's log, read after the tables
	Tables    []string                    // the marker tables the round set (nil: the two)
	Markers   map[string]obs.Of[Marker]
}

func (f Facts) tables() []string {
	if f.Tables == nil {
		return TablesFor(2)
	}
	return f.Tables
}

// Ends are what the master's log says of the round (ReloadEnds).
func (f Facts) Ends() (oldCrash, died string) {
	exits, _ := f.Exits.Get()
	return ReloadEnds(exits, f.OldPID)
}

// split sorts the markers of the named tables: held (Bad finds nothing),
// lost (absent), wrong (with its value), and how many others were unread.
func (f Facts) split(tables []string) (held, lost, wrong []string, unread int) {
	for _, t := range tables {
		switch m, seen := f.Markers[t].Get(); {
		case Bad(f.Markers[t]) == "":
			held = append(held, t)
		case !seen:
			unread++
		case !m.Present:
			lost = append(lost, t)
		case m.GPC0 != "1":
			wrong = append(wrong, fmt.Sprintf("%s gpc0=%s (want 1)", t, m.GPC0))
		}
	}
	return held, lost, wrong, unread
}

// Decided says whether the facts decide the round as they are, with no
// wait for the new worker's resync: the old worker was seen leaving, and
// every marker table was read (a value, or HAProxy's refusal). No section
// has a remote peer, so the old worker is the only process that could
// teach a section its marker: once it is gone, a marker the new worker
// lacks can never come (the loss is certain), and a correct build's old
// worker leaves only after handing over every section (both are there).
func Decided(f Facts) bool {
	if !f.OldExited || len(f.Markers) < len(f.tables()) {
		return false
	}
	for _, t := range f.tables() {
		if !f.Markers[t].Known() {
			return false
		}
	}
	return true
}

// Round decides one round from its facts: a violation of the expectation,
// an unmet precondition, or a remark that does not change the verdict.
// Unknown readings are left to the one rule on observations.
func Round(f Facts) (violation, unmet, remark string) {
	tables := slices.Sorted(maps.Keys(f.Markers))
	_, lost, wrong, _ := f.split(tables)
	oldCrash, died := f.Ends()
	switch {
	case len(tables) < len(f.tables()):
		return "", fmt.Sprintf("after reload: only %d of %d marker tables were read", len(tables), len(f.tables())), ""
	case died != "":
		return "", died, ""
	case !f.OldExited:
		return "", fmt.Sprintf("old worker %d still running %s after SIGUSR2: how it ended cannot be judged", f.OldPID, ReloadTimeout), ""
	case len(lost) == len(tables):
		// #3517 is one section taught and another not; losing every table
		// means no teaching happened at all, which has other causes.
		return "", "every marker lost: the old process taught no section, which is not this issue's signature", ""
	}
	violation = strings.Join(append(joinLost(lost, len(tables)), wrong...), "; ")
	if oldCrash != "" {
		if violation != "" {
			// A crash while teaching loses tables too: this round cannot
			// tell the issue from the crash.
			return "", fmt.Sprintf("%s, and %s: the loss may come from the crash", oldCrash, violation), ""
		}
		remark = "old worker crashed after teaching its tables"
	}
	return violation, "", remark
}

// Weak is what #3517 still trusts when the new worker's resync never
// finished: the old worker left, and the new one holds one section's
// marker intact while the other's is absent. That asymmetry is the bug's
// signature (one section taught, the other not); a resync that stopped
// in one section alone could also cause it, so it is never a verdict,
// only a lead a bisect may follow. Both markers held, both lost, a wrong
// value or an unreadable table say nothing.
func Weak(f Facts) string {
	crash, died := f.Ends()
	held, lost, wrong, unread := f.split(f.tables())
	if f.Exits.State != obs.Seen || !f.OldExited || died != "" || crash != "" || len(f.Markers) != len(f.tables()) ||
		len(wrong) > 0 || unread > 0 || len(held) == 0 || len(lost) == 0 {
		return ""
	}
	return fmt.Sprintf("%s held and %s lost although the resync never finished", strings.Join(held, " and "), strings.Join(lost, " and "))
}

func joinLost(lost []string, of int) []string {
	switch {
	case len(lost) == 0:
		return nil
	case len(lost) > 4: // many sections (SECTIONS): a count, and the first few
		return []string{fmt.Sprintf("%d of %d marker tables lost (%s, ...)", len(lost), of, strings.Join(lost[:3], ", "))}
	}
	return []string{strings.Join(lost, " and ") + " lost"}
}
