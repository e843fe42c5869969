//go:build selftest

// selftest: together

package main_test

import (
	"testing"

	"github.com/harp-project/harp/harness/ops/selftest"
)

// The harp command end to end on real builds: bad input, matrix, bisect,
// reports, the doctor.
func TestE2E(t *testing.T) { selftest.Run(t, "harp end to end") }

var fix3517 = selftest.Fix("3517-peers-dont-stop-per-section.diff")
