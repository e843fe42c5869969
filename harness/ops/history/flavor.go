package history

import (
	"strings"

	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/ops/report"
)

// A catch's signature may name the build variant its check shows the bug
// on: a flavour ("upstream-fixes-cli/cli-empty-lines-survived@asan") or a
// make option ("...@make=DEFINE=-DSYSTEM_MAXCONN=100000", for a bug that
// only a build-time define exposes). An ASan bug is an out-of-bounds
// access or a use after free that a plain build survives without a sign;
// a define's bug is not in the default build at all. Such a catch's cells
// are read from builds of that variant only, and the plan builds the
// fix's releases (or commits) in it. A signature without one is read
// from plain builds only: a sanitizer's abort on a check that does not
// ask for it is another bug, never this fix's answer.

// variant is how a build differs from the plain one: its flavour's name,
// or make=VAR=VALUE options, comma-separated ("" for the plain build).
type variant string

// splitFlavor is a signature without its variant, and the variant.
func splitFlavor(sig string) (string, variant) {
	base, v, ok := strings.Cut(strings.TrimSpace(sig), "@")
	if !ok {
		return base, ""
	}
	return base, variant(v)
}

// flavorOf is the variant a result's build was made in ("" for the plain
// one, and for a spec harp cannot read back).
func flavorOf(r report.Result) variant {
	s, err := spec.Parse(r.Build)
	if err != nil {
		return ""
	}
	var parts []string
	if s.Flavor != "" && s.Flavor != spec.Minimal {
		parts = append(parts, string(s.Flavor))
	}
	for _, m := range s.Make {
		parts = append(parts, "make="+m)
	}
	return variant(strings.Join(parts, ","))
}

// flavored is a build spec in a variant ("" leaves it plain).
func flavored(build string, v variant) string {
	var parts []string
	for _, p := range strings.Split(string(v), ",") {
		switch {
		case p == "":
		case strings.Contains(p, "="):
			parts = append(parts, p)
		default:
			parts = append(parts, "flavor="+p)
		}
	}
	if len(parts) == 0 {
		return build
	}
	return build + "," + strings.Join(parts, ",")
}
