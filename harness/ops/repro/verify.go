package repro

import (
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
)

// States of a reproducer's verification.
const (
	Verified   = "verified"   // it agreed with harp on a build with the finding and on one without
	Unverified = "unverified" // it disagreed, or could not be run or tell
	Skipped    = "skipped"    // --no-verify
)

// Run is one run of a reproducer in a build's image.
type Run struct {
	Build string          `json:"build"` // the build's name
	Spec  string          `json:"build_spec"`
	Image string          `json:"image"` // the build's image
	Tools string          `json:"tools_image,omitempty"`
	Harp  verdict.Verdict `json:"harp"` // harp's verdict of the finding on that build
	Exit  int             `json:"exit"` // the reproducer's exit status
	// Said is the reproducer's verdict line (REPRODUCED: ...), "" when it
	// printed none.
	Said   string        `json:"said"`
	Output string        `json:"output"`
	Err    string        `json:"error,omitempty"` // harp could not run it (image, Docker)
	Took   time.Duration `json:"took_ns"`
}

// Agrees says whether the reproducer's exit is harp's verdict's.
func (r Run) Agrees() bool { return r.Err == "" && r.Exit == r.Harp.ExitCode() && r.Said != "" }

// Verdict is what the reproducer's exit status says.
func (r Run) Verdict() verdict.Verdict {
	if r.Err != "" {
		return verdict.Error
	}
	switch r.Exit {
	case ExitPass:
		return verdict.Pass
	case ExitReproduced:
		return verdict.Reproduced
	case ExitInconclusive:
		return verdict.Inconclusive
	}
	return verdict.Error
}

// Verification is what harp's check of a reproducer found.
type Verification struct {
	State string    `json:"state"`
	Why   string    `json:"why,omitempty"`
	Runs  []Run     `json:"runs,omitempty"`
	At    time.Time `json:"at"`
}

// Judge decides a verification from its runs: verified only when the
// reproducer ran on at least one build harp saw the finding on and one
// it saw it clean on, and every run's exit was harp's verdict (1 and 0).
// A run that contradicts harp, says nothing (INCONCLUSIVE) or could not
// be made leaves it unverified: no reproducer is called checked on less.
func Judge(runs []Run, at time.Time) Verification {
	v := Verification{Runs: runs, At: at, State: Unverified}
	var shows, clean bool
	var bad []string
	for _, r := range runs {
		switch {
		case r.Err != "":
			bad = append(bad, fmt.Sprintf("on %s harp could not run it: %s", r.Build, r.Err))
		case !r.Agrees():
			bad = append(bad, fmt.Sprintf("on %s it exited %d (%s) where harp says %s", r.Build, r.Exit, orNothing(r.Said), r.Harp))
		case r.Harp == verdict.Reproduced:
			shows = true
		case r.Harp == verdict.Pass:
			clean = true
		}
	}
	switch {
	case len(bad) > 0:
		v.Why = strings.Join(bad, "; ")
	case !shows:
		v.Why = "it was not run on a build that shows the finding"
	case !clean:
		v.Why = "it was not run on a build where harp saw the finding clean (the ledger knows none, or none could be run)"
	default:
		v.State = Verified
	}
	return v
}

// Disagrees says whether a run contradicted harp (REPRODUCED where harp
// saw it clean, PASS where harp saw it): the reproducer is wrong, which
// is worse than one that could not tell.
func (v Verification) Disagrees() bool {
	for _, r := range v.Runs {
		if r.Err == "" && r.Said != "" && (r.Exit == ExitPass || r.Exit == ExitReproduced) && !r.Agrees() {
			return true
		}
	}
	return false
}

// ExitCode of harp findings repro: 0 verified (or not asked to verify),
// 1 a run contradicted harp, 2 it could not be verified (a run said
// INCONCLUSIVE, could not be made, or no clean build is known).
func (v Verification) ExitCode() int {
	switch {
	case v.State == Verified || v.State == Skipped:
		return 0
	case v.Disagrees():
		return 1
	}
	return 2
}

// Text is verified.txt: each run's transcript.
func (v Verification) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "harp's verification of this reproducer, %s: %s", v.At.UTC().Format(time.RFC3339), strings.ToUpper(v.State))
	if v.Why != "" {
		fmt.Fprintf(&b, " (%s)", v.Why)
	}
	b.WriteString("\n")
	for _, r := range v.Runs {
		fmt.Fprintf(&b, "\n== %s (%s): harp says %s\n", r.Build, r.Spec, r.Harp)
		fmt.Fprintf(&b, "   build image %s", r.Image)
		if r.Tools != "" {
			fmt.Fprintf(&b, "; run in %s (the build's image with Debian's socat and python3-minimal added)", r.Tools)
		}
		b.WriteString("\n")
		if r.Err != "" {
			fmt.Fprintf(&b, "   not run: %s\n", r.Err)
			continue
		}
		fmt.Fprintf(&b, "$ ./reproduce /usr/sbin/haproxy\n%s", r.Output)
		if !strings.HasSuffix(r.Output, "\n") {
			b.WriteString("\n")
		}
		agree := "agrees with harp"
		if !r.Agrees() {
			agree = "DISAGREES with harp"
		}
		fmt.Fprintf(&b, "-> exit %d after %.1f s: %s\n", r.Exit, r.Took.Seconds(), agree)
	}
	return b.String()
}

// Line is one run's summary line.
func (r Run) Line() string {
	if r.Err != "" {
		return fmt.Sprintf("%s (harp: %s): not run: %s", r.Build, r.Harp, r.Err)
	}
	agree := "agrees"
	if !r.Agrees() {
		agree = "DISAGREES"
	}
	return fmt.Sprintf("%s (harp: %s): exit %d, %s: %s", r.Build, r.Harp, r.Exit, agree, orNothing(r.Said))
}

func orNothing(s string) string {
	if s == "" {
		return "no verdict line"
	}
	return s
}

// SaidLine is the verdict line a reproducer printed: its last line that
// starts with REPRODUCED, PASS or INCONCLUSIVE.
func SaidLine(out string) string {
	said := ""
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimRight(l, "\r")
		for _, p := range []string{"REPRODUCED:", "PASS:", "INCONCLUSIVE:"} {
			if strings.HasPrefix(l, p) {
				said = l
			}
		}
	}
	return said
}
