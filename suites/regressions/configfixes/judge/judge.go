// Package judge holds upstream-fixes-config's cases
// (fixtures/upstream-fixes/config), each judged by its file's rule; pure, so
// that `make unit` tests them alone on facts captured from real builds.
package judge

import (
	"github.com/harp-project/harp/fixtures"
	"github.com/harp-project/harp/harness/core/fixcase"
)

// Cases in their files' order.
var Cases = fixcase.MustLoadJudged(fixtures.UpstreamFixes, "upstream-fixes/config", nil)
