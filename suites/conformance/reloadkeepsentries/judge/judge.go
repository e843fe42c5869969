// Package judge decides one conf-reload-keeps-entries reload from what
// it observed: pure functions of recorded facts, with nothing of Docker's
// in their imports, so that `make unit` tests them alone.
package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

// Facts are what one reload observed.
type Facts struct {
	Kind          string                 `json:"kind"`
	Sections      int                    `json:"sections"`
	Entries       int                    `json:"entries_per_section"`
	MaxAge        time.Duration          `json:"max_age_ns,omitempty"`
	MinAge        time.Duration          `json:"min_age_ns,omitempty"`
	Setup         string                 `json:"setup,omitempty"`         // the node could not be set up
	RemoteBefore  string                 `json:"remote_before,omitempty"` // the remote peer was not up
	ResyncBefore  string                 `json:"resync_before,omitempty"` // the old worker never finished its resync
	WrittenBefore int                    `json:"written_before"`          // entries read back before the reload
	Age           time.Duration          `json:"age_at_reload_ns"`        // show proc's uptime: a lower bound
	AgeBound      time.Duration          `json:"age_bound_at_reload_ns"`  // since harp started the node: an upper bound
	ReloadErr     string                 `json:"reload_error,omitempty"`
	ResyncAfter   obs.Optional[string]   `json:"resync_after"`        // "" finished, or how the new worker never said so
	Loss          obs.Optional[Loss]     `json:"after"`               // what the new worker's tables lack
	Died          obs.Optional[obs.Exit] `json:"died"`                // the new worker died: it explains the reads that fail after it
	OldCrash      string                 `json:"old_crash,omitempty"` // the old one died on a signal while leaving
	// OldFinished: right after start, whether the old worker's sections
	// (no remote peer) showed their resync finished before the reload.
	OldFinished obs.Optional[bool] `json:"old_resync_finished"`
}

// Loss is what a reload lost: table -> entries absent, entries with other
// data, and a sample of them.
type Loss = TableLoss

// Check ids, each qualified by the kind's slug (entries-kept.early): a
// finding names the kind of reload whose check failed.
const (
	CheckEntriesKept    = "entries-kept"    // every entry, with its data
	CheckResyncFinished = "resync-finished" // the new worker says so
	CheckNewWorkerLives = "new-worker-lives"
)

// ReloadChecks decides one reload: every precondition first (an unmet
// one makes the reload say nothing, and lists no check), then the entries
// and the resync state, each known fact one check (an unknown one is not
// listed: it is left to the one rule on observations). The old worker
// crashing on its way out (2.6.12 does with several sections) is a remark
// when the new worker learnt everything: it is another property.
func ReloadChecks(f Facts, slug string) (cs verdict.Checks, violation, unmet, remark string) {
	want := f.Entries * f.Sections
	switch {
	case f.Setup != "":
		return nil, "", f.Kind + ": " + f.Setup, ""
	case f.RemoteBefore != "":
		return nil, "", f.Kind + ": " + f.RemoteBefore, ""
	case f.ResyncBefore != "":
		return nil, "", f.Kind + ": before the reload: " + f.ResyncBefore, ""
	case f.WrittenBefore != want:
		return nil, "", fmt.Sprintf("%s: before the reload only %d of %d entries written read back", f.Kind, f.WrittenBefore, want), ""
	case f.MaxAge > 0 && f.AgeBound >= f.MaxAge:
		return nil, "", fmt.Sprintf("%s: the worker may have been %s old at the reload, not surely under %s", f.Kind, f.AgeBound.Round(100*time.Millisecond), f.MaxAge), ""
	case f.MinAge > 0 && f.Age < f.MinAge:
		return nil, "", fmt.Sprintf("%s: the worker was %s old at the reload, not over %s", f.Kind, f.Age.Round(time.Millisecond), f.MinAge), ""
	case f.ReloadErr != "":
		return nil, "", f.Kind + ": reload: " + f.ReloadErr, ""
	}
	var v []string
	if d, ok := f.Died.Get(); ok { // only a death is recorded: this check can fail, not hold
		died := fmt.Sprintf("%s exited with code %d (%s)", d.Process, d.Code, d.Signal)
		cs.Fail(CheckNewWorkerLives, died)
		v = append(v, died)
	}
	if l, ok := f.Loss.Get(); ok {
		cs.Expect(CheckEntriesKept, l.Bad() == 0, fmt.Sprintf("%d of %d entries lost or changed", l.Bad(), want))
		v = append(v, l.Texts(want)...)
	}
	if r, ok := f.ResyncAfter.Get(); ok {
		cs.Expect(CheckResyncFinished, r == "", "the new worker's "+r)
		if r != "" {
			v = append(v, "the new worker's "+r)
		}
	}
	if done, ok := f.OldFinished.Get(); ok && !done && len(v) > 0 {
		v = append(v, "the old worker had not finished its resync although its sections have no remote peer to wait for")
	}
	cs = cs.Qualified(slug)
	switch {
	case len(v) == 0 && f.OldCrash != "":
		return cs, "", "", f.Kind + ": the old worker " + f.OldCrash + ", after teaching every entry"
	case len(v) == 0:
		return cs, "", "", ""
	case f.OldCrash != "":
		v = append(v, "the old worker "+f.OldCrash)
	}
	return cs, f.Kind + ": " + strings.Join(v, "; "), "", ""
}

// Reload is ReloadChecks' decision without the checks.
func Reload(f Facts) (violation, unmet, remark string) {
	_, violation, unmet, remark = ReloadChecks(f, "")
	return violation, unmet, remark
}
