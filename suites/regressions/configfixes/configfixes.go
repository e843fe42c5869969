// Package configfixes: upstream's fixed bugs of config parsing, one case file
// each (fixtures/upstream-fixes/config), run by harness/live/fixrun. Each case is a
// named check (upstream-fixes-config/<case>), so docs/upstream-bugs.md reads
// every fix's verdict from the same run.
package configfixes

import (
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/live/fixrun"
	"github.com/harp-project/harp/suites/regressions/configfixes/judge"
)

var Suite = suite.Register(fixrun.Suite(fixrun.Area{
	ID:       "upstream-fixes-config",
	Upstream: "regressions: upstream's fixed bugs of config parsing",
	Title:    "Configs from upstream's fixed bugs are accepted or refused, with the messages, as their fixes made haproxy -c do",
	Summary:  "one node; each case's config is checked with haproxy -c after a control (the same config without the case's lines) loads, and its exit and messages are what its upstream fix made them; cases a build is too old for are not applicable",
	Labels:   []string{"area:regressions", "area:config"},
	Cases:    judge.Cases,
}))
