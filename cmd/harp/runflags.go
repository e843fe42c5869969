package main

import (
	"flag"
	"fmt"
	"runtime"

	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/ops/report"
)

// runFlags are the flags run, matrix and nightly share, defined and checked
// once: which suites (--suites; --suites is its old name),
// their parameters and trials, harness faults, where the reports go, and
// for commands that run cells, how many builds at a time and which shard.
type runFlags struct {
	fs      *flag.FlagSet
	filter  string
	trials  *int
	reports *string
	params  *paramList
	faults  *harnessFaults
	jobs    *int    // nil: the command runs no cells side by side
	shard   *string // nil: no shards
}

// newRunFlags defines the shared flags on fs; reports is the default
// directory, cells adds --jobs and --shard with shardHelp.
func newRunFlags(fs *flag.FlagSet, reports string, cells bool, shardHelp string) *runFlags {
	f := &runFlags{fs: fs}
	fs.StringVar(&f.filter, "suites", "", "the suites: a label filter (e.g. suite:3517, area:conformance; matrix and nightly: default all)")
	renamed(fs, "label-filter", "suites", &f.filter)
	f.trials = fs.Int("trials", 0, "trials per suite, 1 to 1000 (default: each suite's own)")
	f.reports = fs.String("reports", reports, "directory for reports")
	f.params = paramFlags(fs)
	f.faults = harnessFaultsFlag(fs)
	if cells {
		f.jobs = fs.Int("jobs", max(runtime.NumCPU()/2, 1), "builds run at the same time")
		f.shard = fs.String("shard", "1/1", shardHelp)
	}
	return f
}

// checked is what the shared flags select once checked.
type checked struct {
	suites []*suite.Suite
	params map[string]string
	shard  [2]int // i, n (1, 1 without shards)
}

// check validates every shared flag before any work (cmd prefixes the
// error): an empty filter selects every suite unless required.
func (f *runFlags) check(cmd string, required bool) (checked, error) {
	var c checked
	fail := func(err error) (checked, error) { return c, fmt.Errorf("%s: %w", cmd, err) }
	if err := f.faults.apply(); err != nil {
		return fail(err)
	}
	if f.filter == "" && required {
		return fail(fmt.Errorf("--suites is required (e.g. --suites suite:3517)"))
	}
	if err := checkTrials(f.fs, *f.trials); err != nil {
		return fail(err)
	}
	if f.jobs != nil && (*f.jobs < 1 || *f.jobs > 64) {
		return fail(fmt.Errorf("--jobs %d: want 1 to 64", *f.jobs))
	}
	c.shard = [2]int{1, 1}
	if f.shard != nil {
		i, n, err := report.ParseShard(*f.shard)
		if err != nil {
			return fail(err)
		}
		c.shard = [2]int{i, n}
	}
	if err := writable(*f.reports); err != nil {
		return fail(err)
	}
	var err error
	if c.suites, err = selectSuites(f.filter); err != nil {
		return c, err
	}
	if c.params, err = f.params.values(c.suites); err != nil {
		return c, err
	}
	return c, nil
}
