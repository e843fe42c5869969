//go:build selftest

package peers_test

import (
	"testing"

	"github.com/harp-project/harp/harness/ops/selftest"
)

func TestSelf(t *testing.T) { selftest.Run(t, "peers client against real builds") }
