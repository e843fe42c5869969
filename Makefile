# harp: make test-<issue> runs one issue suite against a build; make test runs
# harp's own tests. HAPROXY takes build specs (see README.md).
HAPROXY ?= deb:latest
TRIALS  ?=
LABELS  ?=
GO      ?= go
HARP    := bin/harp

export TESTCONTAINERS_RYUK_DISABLED ?= true

# Everything the binary embeds too (templates, CLI levels, upstream-fix cases, repro scripts): a new case must rebuild it.
GO_SOURCES := $(shell find . -name '*.go' -not -path './.cache/*') go.mod go.sum $(shell find fixtures/templates fixtures/patches fixtures/cli-levels fixtures/upstream-fixes harness/ops/repro/scripts -type f -not -path 'fixtures/upstream-fixes/captures/*') $(shell find suites -name repro.sh -o -name repro.py -o -name "*.tmpl")

.PHONY: scoreboard reg-tests reg-tests-export nemesis test-upstream-fixes conformance report-property repeat test-cluster doctor bisect report nightly matrix fuzz build deps test unit selftest bench sweep builds capture vet generate readme

build: $(HARP)

## deps: every package any target uses (make test's list); each target
##   installs only what it needs (scripts/deps.sh PROFILE, or --for SPECS)
deps:
	@scripts/deps.sh all

# The suites' import list is generated from suites/ first: a new suite
# directory is all it takes.
# harp version reports the commit (and +changes for a modified tree).
COMMIT = $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo +changes)
$(HARP): $(GO_SOURCES)
	@scripts/suites-current.sh || $(GO) run ./suites/all/gen
	$(GO) build -ldflags "-X main.commit=$(COMMIT)" -o $(HARP) ./cmd/harp

## generate: suites/all/suites.go, the import of every suite directory
generate:
	$(GO) run ./suites/all/gen

## readme: README's suites table, from the registry (a unit test fails when stale)
readme: $(HARP)
	$(HARP) suites --readme README.md

## test-<suite>: one registered suite (bin/harp suites lists them), e.g.
##   make test-3517 HAPROXY=deb:trixie
##   make test-cluster-partition NODES=5
##   make test-listener-livelock THREADS=2 MAXCONN=100 RATE=300 DURATION=4s
## A suite's parameters are make variables of the same names.
## GIT_BISECT=1 exits 0 PASS, 1 REPRODUCED, 125 otherwise (make itself then
## exits 2 on any failure: `git bisect run` calls scripts/git-bisect-step instead).
test-%: $(HARP)
	@scripts/deps.sh --for "$$HAPROXY"
	$(HARP) run --suites "suite:$*" --haproxy "$$HAPROXY" $(if $(TRIALS),--trials "$$TRIALS") --params-from-env $(if $(GIT_BISECT),--git-bisect)

## repeat: make repeat N=20 TARGET=test-3517 HAPROXY=deb:trixie — the verdict histogram of N runs
N ?= 10
TARGET ?= test-3517
repeat: $(HARP)
	@scripts/deps.sh --for "$$HAPROXY"
	@scripts/repeat.sh "$$N" "$$TARGET"

## test-cluster: every peers-cluster suite (NODES nodes, default 3, on a private network)
test-cluster: $(HARP)
	@scripts/deps.sh --for "$$HAPROXY"
	$(HARP) run --suites 'area:peers-cluster' --haproxy "$$HAPROXY" $(if $(TRIALS),--trials "$$TRIALS") --params-from-env

## test-upstream-fixes: every suite of upstream's fixed bugs (label
## area:regressions: upstream-fixes-cli, -master, -config, -tables,
## -listeners, -peers; make test-upstream-fixes-cli runs one)
test-upstream-fixes: $(HARP)
	@scripts/deps.sh --for "$$HAPROXY"
	$(HARP) run --suites 'area:regressions' --haproxy "$$HAPROXY" $(if $(TRIALS),--trials "$$TRIALS") --params-from-env

## conformance: every conformance property (label area:conformance) on HAPROXY, e.g.
##   make conformance HAPROXY='deb:bookworm deb:experimental'
## A property a build violates is a finding: make report-property PROPERTY=conf-...
conformance: $(HARP)
	@scripts/deps.sh --for "$$HAPROXY"
	$(HARP) run --suites 'area:conformance' --haproxy "$$HAPROXY" $(if $(TRIALS),--trials "$$TRIALS") --params-from-env

## doctor: diagnose replication between live instances, e.g.
##   make doctor SOCKETS='/run/haproxy/admin.sock 10.0.0.2:9999'
SOCKETS ?=
doctor: $(HARP)
	@set --; for s in $$SOCKETS; do set -- "$$@" --socket "$$s"; done; $(HARP) doctor "$$@"

## bisect: make bisect SUITE=issue:3517 GOOD=deb:bookworm BAD=deb:experimental [REPO=dir] [FIND_FIX=1]
SUITE ?= issue:3517
GOOD  ?= deb:bookworm
BAD   ?= deb:experimental
REPO  ?=
bisect: $(HARP)
	@scripts/deps.sh --for "$$GOOD $$BAD" $(if $(REPO),source)
	$(HARP) bisect --suites "$$SUITE" --good "$$GOOD" --bad "$$BAD" $(if $(REPO),--repo "$$REPO") $(if $(FIND_FIX),--find-fix) $(if $(TRIALS),--trials "$$TRIALS") --params-from-env

## scoreboard: make scoreboard REPO=<clone of haproxy/haproxy> [SB_TRIALS=3] [SHARD=1/1] [PHASE=all]
##   every check rerun by this harp on its fix's bad and fixed releases (then the fix's parent
##   and the fix where the releases did not catch it), SB_TRIALS runs of each cell, into
##   reports/scoreboard (a unit already there is not run again); writes docs/upstream-bugs.md
SB_TRIALS ?= 3
SHARD     ?= 1/1
PHASE     ?= all
scoreboard: $(HARP)
	@scripts/deps.sh run source
	$(HARP) scoreboard --repo "$$REPO" --trials "$(SB_TRIALS)" --shard "$(SHARD)" --phase "$(PHASE)"

## reg-tests: every exported reg-test (reg-tests/<area>/*.vtc, VTest's format) on HAPROXY,
##   each build's image with Debian's varnishtest added (a compiled build's binary: here, with
##   varnish installed) or HARP_VTEST=/path/to/vtest,
##   four at a time, 10 s each; exits 0 when every result is the one
##   reg-tests/harp-manifest.json expects for that build. COMPARE=<harp run dir> puts harp's
##   verdict of the same check beside each result; RECORD=1 keeps them as validations
COMPARE ?=
reg-tests: $(HARP)
	@scripts/deps.sh --for "$$HAPROXY" $(if $(filter-out deb:% image:%,$(HAPROXY)),regtests)
	$(HARP) reg-tests run --haproxy "$$HAPROXY" $(if $(COMPARE),--compare "$$COMPARE") $(if $(RECORD),--record)

## reg-tests-export: write reg-tests/ again from the upstream-fix cases (the manifest lists
##   those VTest cannot express, with why)
reg-tests-export: $(HARP)
	$(HARP) reg-tests export

## report-property: make report-property PROPERTY=conf-reload-keeps-entries [RUN=...] [POST=...]
PROPERTY ?=
report-property: $(HARP)
	$(HARP) report --property "$$PROPERTY" --run "$$RUN" $(if $(POST),--post "$$POST")

## report: make report ISSUE=3517 [RUN=reports/<id>] [POST=owner/repo#N]
ISSUE ?= 3517
RUN   ?= reports/latest
POST  ?=
report: $(HARP)
	$(HARP) report --issue "$$ISSUE" --run "$$RUN" $(if $(POST),--post "$$POST")

## test: unit tests, then the self-tests that run real suites on real builds
test: deps vet unit selftest

# The selftest tag only adds files (no file is built without it), so one
# vet with the tag checks every file: a second, untagged pass cost about
# a minute on a fresh machine for nothing.
vet:
	$(GO) vet -tags selftest ./...

# Everything that needs no Docker: parsers, judges, parameters, registry;
# and the GitHub workflows harp ships, checked by actionlint (go.mod's tool).
unit:
	$(GO) tool actionlint .github/workflows/*.yml
	$(GO) test -count=1 ./...

# The self-tests run real suites on real builds: every package with files
# built by the selftest tag, one package at a time (they share the CPUs
# with HAProxy). LABELS narrows them with a ginkgo label filter, e.g.
# LABELS=issue:3517.
# Self-tests that mostly wait (on resyncs, expiries, reconnects) and judge
# nothing finer than seconds say so with a line `// selftest: together`;
# they run four packages at a time, after the others.
SELFTEST_PKGS = $(sort $(dir $(shell grep -rl --include='*_test.go' '^//go:build selftest' suites harness cmd images)))
SELFTEST_TOGETHER = $(sort $(dir $(shell grep -rl --include='*_test.go' '^// selftest: together' suites harness cmd images)))
SELFTEST_ALONE = $(filter-out $(SELFTEST_TOGETHER),$(SELFTEST_PKGS))
# The together group's longest packages start first (go test starts them in
# the order given): the command's end-to-end runs (741 s on a fresh clone
# here, 2026-12-05) and compiling from source (images: git, tarball, asan;
# 270 s) would otherwise start behind shorter ones and outlast them. On two
# CPUs the group is bound by throughput, not by its longest package: with
# bisect's specs in a package of their own beside cmd/harp's, the group took
# 14.4 min instead of 12.6 (the same day, fresh clones).
SELFTEST_FIRST = $(filter images/ cmd/harp/,$(SELFTEST_TOGETHER))
SELFTEST_TOGETHER_ORDERED = $(SELFTEST_FIRST) $(filter-out $(SELFTEST_FIRST),$(SELFTEST_TOGETHER))
SELFTEST_RUN = $(GO) test -tags selftest -v -count=1 -timeout 60m
SELFTEST_FILTER = -ginkgo.v $(if $(LABELS),-ginkgo.label-filter="$$LABELS")
# The log is kept and its failures summed up last: a CI log shows only its
# tail, and a failed package's lines are minutes above it.
SELFTEST_LOG = reports/selftest.log
selftest:
	@mkdir -p reports; : > $(SELFTEST_LOG); rm -f $(SELFTEST_LOG).failed
	{ $(SELFTEST_RUN) -p 1 $(addprefix ./,$(SELFTEST_ALONE)) $(SELFTEST_FILTER) 2>&1 || touch $(SELFTEST_LOG).failed; } | tee -a $(SELFTEST_LOG)
	$(if $(SELFTEST_TOGETHER),{ $(SELFTEST_RUN) -p 4 $(addprefix ./,$(SELFTEST_TOGETHER_ORDERED)) $(SELFTEST_FILTER) 2>&1 || touch $(SELFTEST_LOG).failed; } | tee -a $(SELFTEST_LOG))
	@echo "== self-tests: packages, then failures (log: $(SELFTEST_LOG))"; \
	grep -aE '^(ok |FAIL|--- FAIL|panic:)|\[FAIL\]' $(SELFTEST_LOG) | sed 's/^/  /'; \
	if [ -e $(SELFTEST_LOG).failed ]; then echo "== what each failure said (up to 15 lines each)"; \
	sed 's/\x1b\[[0-9;]*m//g' $(SELFTEST_LOG) | awk '/^ *\[FAILED\] / && !/\[FAILED\] in \[/ {p=1; n=0} p {print "  " $$0; n++; if (/^ *In \[/ || n >= 15) p=0}' | head -120; fi; \
	test ! -e $(SELFTEST_LOG).failed

## nemesis: every suite on builds whose verdict is known, under harness faults
##   (SEEDS seeds each, one cell at a time): prints the verdict histogram and
##   fails if a build without the bug was REPRODUCED or one with it PASSed
SEEDS ?= 1,2,3
NEMESIS_SUITES ?=
nemesis:
	@scripts/deps.sh run source
	$(GO) run ./cmd/nemesis -seeds "$$SEEDS" -suites "$$NEMESIS_SUITES" -out reports/nemesis.md -evidence reports/nemesis

## fuzz: the peers protocol decoder and encoder, FUZZTIME each (go test -fuzz)
FUZZTIME ?= 20s
fuzz:
	for f in FuzzDecodeMessage FuzzMessageRoundTrip FuzzVarint FuzzUpdateRoundTrip; do \
		$(GO) test ./harness/core/peerwire -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) || exit 1; done

## bench: harp's time against the reporters' own scripts (bench/reporters, run in
##   the same build's image with Python 3 added), best of BENCH_RUNS (3) each,
##   their ratio (a row fails when the verdicts differ), how the cost grows
##   (sections, nodes, builds), and what a doctor --watch scrape costs
##   (3 x 100,000 entries, as ratios to one show table dump);
##   REPO=<haproxy clone> adds the bisect row and the conformance tag matrix (--jobs 1 vs 3,
##   verdicts compared cell by cell), BENCH_ONLY=speed|growth|monitor|bisect|matrix one part,
##   BENCH_JOBS=N the matrix's second pass N cells at a time (default 3)
bench: $(HARP)
	@scripts/deps.sh run source monitor
	$(GO) test -count=1 -run '^$$' -bench . -benchtime 1x -timeout 180m ./bench

builds: $(HARP)
	$(HARP) builds

capture: $(HARP)
	@scripts/deps.sh run
	$(HARP) capture --haproxy 'deb:bookworm deb:trixie deb:sid deb:experimental' --out fixtures/captures --overwrite

sweep: $(HARP)
	$(HARP) sweep

## matrix: every suite matching SUITES on every build in BUILDS, JOBS builds at a time;
##   SHARD=i/n runs a deterministic share (merge shards with bin/harp merge DIR...)
BUILDS ?= deb:bookworm deb:trixie deb:sid deb:experimental
SUITES ?= area:peers
JOBS   ?= 1
SHARD  ?= 1/1
matrix: $(HARP)
	@scripts/deps.sh --for "$$BUILDS"
	$(HARP) matrix --haproxy "$$BUILDS" --suites "$$SUITES" --jobs "$$JOBS" --shard "$$SHARD"

## nightly: every suite on every build the Debian mirror serves (plus EXTRA specs,
##   and VERSIONS, e.g. VERSIONS='git:~/haproxy@v2.6.0..v3.4.0' for every release
##   tag in that range), compared with the previous nightly under reports/nightly
##   KEEP: the newest nightly runs that keep their evidence directories (older
##   ones keep summary.json, report.md, report.html and junit.xml)
##   HEADS: git heads, e.g. HEADS='git:~/haproxy@origin/master git:~/haproxy@origin/3.2':
##   the clone is fetched first, and a head that regressed since the previous
##   nightly is bisected between the two commits (BISECT_BUDGET in all, 45m)
EXTRA ?=
VERSIONS ?=
HEADS ?=
KEEP ?= 14
BISECT_BUDGET ?= 45m
nightly: $(HARP)
	@scripts/deps.sh --for "$$EXTRA $$VERSIONS $$HEADS"
	$(HARP) nightly --haproxy "$$EXTRA $$VERSIONS $$HEADS" --jobs "$$JOBS" --keep "$$KEEP" --bisect-budget "$$BISECT_BUDGET"

# Recipes read every value a user gives from the environment ("$$HAPROXY"):
# a quote in a build spec or a path never reaches the shell as code. The
# export comes last: GNU make defines a variable it exports before its
# `?=` default as empty, and the default would never apply.
export HAPROXY COMPARE RECORD TRIALS N TARGET SUITE PROPERTY GOOD BAD REPO ISSUE RUN POST BUILDS SUITES JOBS SHARD EXTRA VERSIONS HEADS BISECT_BUDGET KEEP LABELS SOCKETS SEEDS NEMESIS_SUITES
