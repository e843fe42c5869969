// Package masterfixes: upstream's fixed bugs of the master CLI and starting HAProxy, one case file
// each (fixtures/upstream-fixes/master), run by harness/fixrun. Each case is a
// named check (upstream-fixes-master/<case>), so docs/upstream-bugs.md reads
// every fix's verdict from the same run.
package masterfixes

import (
	"github.com/harp-project/harp/harness/fixrun"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/suites/regressions/masterfixes/judge"
)

var Suite = scenario.Register(fixrun.Scenario(fixrun.Area{
	ID:       "upstream-fixes-master",
	Upstream: "regressions: upstream's fixed bugs of the master CLI and of starting HAProxy",
	Title:    "Master CLI commands and haproxy runs (-vv, -c, master-worker starts) from upstream's fixed bugs behave as their fixes made them, and none kills a process",
	Summary:  "one node; each case (a master CLI command, the build's haproxy run with a case's arguments and config) expects what its upstream fix made HAProxy do; cases a build is too old for are not applicable",
	Labels:   []string{"area:regressions", "area:mworker"},
	Cases:    judge.Cases,
}))
