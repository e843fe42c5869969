//go:build selftest

// selftest: together

package images_test

import (
	"testing"

	"github.com/harp-project/harp/harness/ops/selftest"
)

// Builds from where users keep HAProxy, end to end through the harp
// command: a registry, a clone, a tarball's URL. They mostly wait on
// harp and on Docker, so they run beside other waiting packages.
func TestSelf(t *testing.T) { selftest.Run(t, "builds from images, clones and URLs") }
