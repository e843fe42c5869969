package main

import "github.com/harp-project/harp/harness/core/verdict"

// Cell is one suite on one build whose true verdict is known (from the
// suite's self-test): a build without the suite's bug (Pass) must never be
// REPRODUCED under harness faults, one with it (Reproduced) never PASS.
type Cell struct {
	Suite  string // a suite id
	Spec   string // a build spec
	Params []string
	Truth  verdict.Verdict
	// Fails: for a suite of checks on a build with bugs, the checks that
	// show them there (each check's own truth): one of them that holds is
	// bent, and so is any other check that fails. On a build without the
	// suite's bugs (Truth PASS) every check must hold or stay unknown.
	Fails []string
	// Sample: part of the bounded sample make test runs (kept small: make
	// test on a fresh machine stays within 20 minutes).
	Sample bool
}

// Fix and mutant specs are relative to the repository root.
const (
	fix3517  = "src:deb:3.0.11,patch=fixtures/patches/3517-peers-dont-stop-per-section.diff"
	fix3519  = "src:deb:3.0.11,patch=fixtures/patches/3519-peers-alive-flag-owner-only.diff"
	mutant11 = "src:deb:3.0.11,patch=fixtures/patches/mutants/11-peers-ignored-update-not-alive.diff"
)

// Cells: every suite that can run on 2 CPUs, each on a build without its
// bug and one with it (Debian's builds where they show it, else harp's fix
// or a mutant). The listener livelock needs 16 CPUs and is left out.
var Cells = []Cell{
	{Suite: "3517", Spec: "deb:bookworm", Truth: verdict.Pass, Sample: true},
	{Suite: "3517", Spec: "deb:experimental", Truth: verdict.Reproduced, Sample: true},
	{Suite: "3519", Spec: fix3519, Truth: verdict.Pass},
	{Suite: "3519", Spec: "deb:experimental", Truth: verdict.Reproduced},
	// A build that passes keeps the 20 s bound: a correct master is never
	// waited out, and one starved by the faults must not read as a failure.
	{Suite: "conf-failed-reload", Spec: "deb:trixie", Truth: verdict.Pass, Sample: true},
	{Suite: "conf-failed-reload", Spec: "deb:sid", Truth: verdict.Reproduced},
	{Suite: "conf-cli-permissions", Spec: "deb:experimental", Truth: verdict.Pass},
	{Suite: "conf-cli-permissions", Spec: "deb:trixie", Truth: verdict.Reproduced},
	{Suite: "conf-runtime-limits", Spec: "deb:trixie", Truth: verdict.Pass},
	{Suite: "conf-runtime-limits", Spec: "deb:bookworm", Truth: verdict.Reproduced},
	{Suite: "conf-reload-keeps-entries", Spec: fix3517, Truth: verdict.Pass},
	{Suite: "conf-reload-keeps-entries", Spec: "deb:bookworm", Params: []string{"KINDS=early,late"}, Truth: verdict.Reproduced},
	{Suite: "conf-learned-entries-obey-receiver", Spec: "deb:trixie", Truth: verdict.Pass},
	{Suite: "conf-learned-entries-obey-receiver", Spec: "deb:bookworm", Truth: verdict.Reproduced},
	// Debian's 3.0.11 keeps a new key learnt with a short expiry for its
	// table's (8f06c8fda4a6, fixed in 3.2.26).
	{Suite: "conf-crafted-updates-obey-receiver", Spec: "deb:sid", Truth: verdict.Pass},
	{Suite: "conf-crafted-updates-obey-receiver", Spec: "deb:bookworm", Truth: verdict.Reproduced},
	{Suite: "conf-many-tables", Spec: "deb:trixie", Truth: verdict.Pass},
	{Suite: "conf-many-tables", Spec: "deb:bookworm", Params: []string{"BOUND=10s"}, Truth: verdict.Reproduced},
	{Suite: "conf-updates-both-ways", Spec: "deb:experimental", Truth: verdict.Pass},
	{Suite: "cluster-convergence", Spec: "deb:experimental", Truth: verdict.Pass},
	{Suite: "cluster-identity", Spec: "deb:experimental", Truth: verdict.Pass},
	{Suite: "cluster-partition", Spec: "deb:experimental", Truth: verdict.Pass},
	{Suite: "cluster-reloads", Spec: "deb:experimental", Truth: verdict.Pass},
	{Suite: "cluster-tables", Spec: "deb:experimental", Truth: verdict.Pass},
	{Suite: "chaos", Spec: "deb:experimental", Params: []string{"DURATION=25s", "SEED=5"}, Truth: verdict.Pass},
	// No chaos cell with the bug: its trigger is the seed's own faults,
	// which harp's faults disturb (mutant 2, seed 7: a restart that did
	// not happen leaves only keys the checker cannot hold to a value, and
	// the history PASSes). Its early quiet end is proven on the mutant
	// without harness faults, and cannot bend the PASS cell above.
	{Suite: "upstream-fixes-cli", Spec: "deb:experimental", Truth: verdict.Pass},
	{Suite: "upstream-fixes-cli", Spec: "deb:bookworm", Truth: verdict.Reproduced, Fails: []string{"cli-empty-line-ignored", "cli-env-without-sockpairs", "cli-error-ends-with-empty-line", "cli-help-show-table-argument-optional", "cli-newline-chained-commands-warned", "cli-pipelined-after-pause", "cli-pipelined-then-close-all-run", "cli-set-table-invalid-ip-refused", "cli-too-big-command-reported", "cli-too-many-args-refused"}},
	{Suite: "upstream-fixes-master", Spec: "deb:experimental", Truth: verdict.Pass},
	{Suite: "upstream-fixes-master", Spec: "deb:bookworm", Truth: verdict.Reproduced, Fails: []string{"foreground-cpu-map-applied", "foreground-expose-fd-keeps-listener", "master-env-processes-no-null-version", "master-x-devnull-no-socket-transfer", "mcli-severity-output-applies", "worker-getsocks-error-no-leak"}},
	{Suite: "upstream-fixes-config", Spec: "deb:experimental", Truth: verdict.Pass},
	{Suite: "upstream-fixes-config", Spec: "deb:bookworm", Truth: verdict.Reproduced, Fails: []string{"cfg-len-needs-digits", "cfg-max-reloads-negative-refused", "cfg-tcp-connection-sc-set-gpt"}},
	{Suite: "upstream-fixes-tables", Spec: "deb:experimental", Truth: verdict.Pass},
	{Suite: "upstream-fixes-tables", Spec: "deb:bookworm", Truth: verdict.Reproduced, Fails: []string{"connect-src-inc-gpc-untracked", "http-other-table-counter-by-own-key"}},
	{Suite: "upstream-fixes-listeners", Spec: "deb:experimental", Truth: verdict.Pass},
	{Suite: "upstream-fixes-listeners", Spec: "deb:bookworm", Truth: verdict.Reproduced, Fails: []string{"frontend-full-then-rate-limited-resumes", "listener-shards-close-ids-distinct", "listener-shards-distinct-ids"}},
	{Suite: "upstream-fixes-peers", Spec: "deb:experimental", Truth: verdict.Pass},
	{Suite: "upstream-fixes-peers", Spec: "deb:bookworm", Truth: verdict.Reproduced, Fails: []string{"peer-dict-id-out-of-range-refused", "peer-stalled-reader-no-sync-storm"}},
	{Suite: "upstream-fixes-peers", Spec: mutant11, Truth: verdict.Reproduced, Fails: []string{"peer-dict-id-out-of-range-refused", "peer-incoming-updates-obey-at-once", "peer-unknown-table-traffic-keeps-session"}},
}
