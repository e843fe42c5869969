package history

import (
	"strings"

	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/ops/report"
)

// A catch's signature may name the build flavour its check shows the bug
// on: "upstream-fixes-cli/cli-empty-lines-survived@asan". Such a bug is an
// out-of-bounds access or a use after free that a plain build survives
// without a sign, so its cells are read from builds of that flavour only,
// and the plan builds the fix's releases (or commits) in it. A signature
// without one is read from plain builds only: a sanitizer's abort on a
// check that does not ask for it is another bug, never this fix's answer.

// splitFlavor is a signature without its flavour, and the flavour ("" for
// the plain build).
func splitFlavor(sig string) (string, spec.Flavor) {
	base, fl, ok := strings.Cut(strings.TrimSpace(sig), "@")
	if !ok {
		return base, ""
	}
	return base, spec.Flavor(fl)
}

// flavorOf is the flavour a result's build was made in ("" for the plain
// one, and for a spec harp cannot read back).
func flavorOf(r report.Result) spec.Flavor {
	s, err := spec.Parse(r.Build)
	if err != nil {
		return ""
	}
	return s.Flavor
}

// flavored is a build spec in a flavour ("" leaves it plain).
func flavored(build string, fl spec.Flavor) string {
	if fl == "" {
		return build
	}
	return build + ",flavor=" + string(fl)
}
