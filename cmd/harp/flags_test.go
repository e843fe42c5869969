package main

import (
	"context"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

// --cpus is checked before any work, not by Docker later: NaN compares
// false with every bound, so it passed a range check written as two
// comparisons.
func TestCheckCPUs(t *testing.T) {
	n := float64(runtime.NumCPU())
	for v, want := range map[float64]string{
		0: "", 0.3: "", n: "",
		math.NaN(): "not a number", math.Inf(1): "not a number", -1: "want a share", 0.001: "want a share",
		n + 1: "this machine has", 100: "this machine has",
	} {
		err := checkCPUs(v)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("--cpus %v: %v, want %q", v, err, want)
		}
	}
}

// --settle reads again each second: 100h is a typo, not a wait.
func TestCheckSettle(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "", 10 * time.Second: "", time.Hour: "",
		-time.Second: "want 0 to 1h", time.Hour + time.Second: "want 0 to 1h", 100 * time.Hour: "want 0 to 1h",
	} {
		err := checkSettle(d)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("--settle %s: %v, want %q", d, err, want)
		}
	}
}

// --haproxy of a command that tests one build: the parse error itself, or
// how many builds were given, never "(<nil>)".
func TestOneSpec(t *testing.T) {
	for raw, want := range map[string]string{
		"deb:bookworm":            "",
		"":                        "no build spec given",
		"deb:bookworm deb:trixie": "takes one build spec, not 2 (deb:bookworm deb:trixie)",
		"nope":                    `build spec "nope"`,
	} {
		_, err := oneSpec(raw)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) || (err != nil && strings.Contains(err.Error(), "<nil>")) {
			t.Errorf("%q: %v, want %q", raw, err, want)
		}
	}
}

// --keep is checked before any work (no Docker, no mirror): a negative or
// absurd retention is a typo, exit 3.
func TestNightlyKeepCheckedFirst(t *testing.T) {
	for _, k := range []string{"-1", "10001", "many"} {
		if code := cmdNightly(context.Background(), []string{"--keep", k, "--reports", t.TempDir()}); code != 3 {
			t.Errorf("nightly --keep %s: exit %d, want 3", k, code)
		}
	}
}
