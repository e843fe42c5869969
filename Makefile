# harp: make test-<issue> runs one issue suite against a build; make test runs
# harp's own tests. HAPROXY takes build specs (see README.md).
HAPROXY ?= deb:latest
TRIALS  ?= 0
LABELS  ?=
GO      ?= go
HARP    := bin/harp

export TESTCONTAINERS_RYUK_DISABLED ?= true

GO_SOURCES := $(shell find . -name '*.go' -not -path './.cache/*') go.mod go.sum $(shell find fixtures/templates fixtures/patches -type f)

.PHONY: test-cluster doctor bisect report nightly matrix fuzz build deps test unit selftest bench sweep builds capture test-3517 test-3519 test-listener-livelock vet

build: $(HARP)

deps:
	@scripts/deps.sh

$(HARP): $(GO_SOURCES)
	$(GO) build -o $(HARP) ./cmd/harp

## test-<issue>: one upstream issue's suite, e.g. make test-3517 HAPROXY=deb:trixie
##   test-3517  multiple peers sections lose stick tables on reload
##   test-3519  releasing a superseded peers connection clears the replacement alive flag
##   test-cluster-convergence  entries written on one node appear on every node
##   test-cluster-partition    tables converge again after a partition heals
##   test-cluster-identity     a node whose local peer name matches no peer line
##   test-cluster-tables       mismatched table definitions: what is exchanged
##   test-cluster-reloads      entries survive rolling and simultaneous reloads
CLUSTER_SUITES := cluster-convergence cluster-partition cluster-identity cluster-tables cluster-reloads
.PHONY: $(addprefix test-,$(CLUSTER_SUITES))
test-3517 test-3519 $(addprefix test-,$(CLUSTER_SUITES)): test-%: deps $(HARP)
	$(HARP) run --label-filter 'issue:$*' --haproxy '$(HAPROXY)' --trials $(TRIALS)

## test-cluster: every peers-cluster suite (NODES nodes, default 3, on a private network)
NODES ?=
export HARP_CLUSTER_NODES ?= $(NODES)
test-cluster: deps $(HARP)
	$(HARP) run --label-filter 'area:peers-cluster' --haproxy '$(HAPROXY)' --trials $(TRIALS)

## doctor: diagnose replication between live instances, e.g.
##   make doctor SOCKETS='/run/haproxy/admin.sock 10.0.0.2:9999'
SOCKETS ?=
doctor: $(HARP)
	$(HARP) doctor $(foreach s,$(SOCKETS),--socket $(s))

## bisect: make bisect SUITE=issue:3517 GOOD=deb:bookworm BAD=deb:experimental [REPO=dir] [FIND_FIX=1]
SUITE ?= issue:3517
GOOD  ?= deb:bookworm
BAD   ?= deb:experimental
REPO  ?=
bisect: deps $(HARP)
	$(HARP) bisect --suite '$(SUITE)' --good '$(GOOD)' --bad '$(BAD)' $(if $(REPO),--repo '$(REPO)') $(if $(FIND_FIX),--find-fix) --trials $(TRIALS)

## report: make report ISSUE=3517 [RUN=reports/<id>] [POST=owner/repo#N]
ISSUE ?= 3517
RUN   ?= reports/latest
POST  ?=
report: $(HARP)
	$(HARP) report --issue '$(ISSUE)' --run '$(RUN)' $(if $(POST),--post '$(POST)')

## test-listener-livelock: the listener livelock at maxconn under vegeta load.
##   THREADS (16) GROUPS (=THREADS) LAYOUT (groups|shards|binds) VARIANT (frontend|process)
##   RATE (1000/s) DURATION (15s) TIMEOUT (30s) MAXCONN (4000) CPUSET (all) SERVICE (100ms)
test-listener-livelock: deps $(HARP)
	HARP_LIVELOCK_THREADS='$(THREADS)' HARP_LIVELOCK_GROUPS='$(GROUPS)' HARP_LIVELOCK_LAYOUT='$(LAYOUT)' \
	HARP_LIVELOCK_VARIANT='$(VARIANT)' HARP_LIVELOCK_RATE='$(RATE)' HARP_LIVELOCK_DURATION='$(DURATION)' \
	HARP_LIVELOCK_MAXCONN='$(MAXCONN)' HARP_LIVELOCK_CPUSET='$(CPUSET)' HARP_LIVELOCK_SERVICE='$(SERVICE)' HARP_LIVELOCK_TIMEOUT='$(TIMEOUT)' \
	$(HARP) run --label-filter 'issue:listener-livelock' --haproxy '$(HAPROXY)'

## test: unit tests, then the self-tests that run real suites on real builds
test: deps vet unit selftest

vet:
	$(GO) vet ./...

unit:
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /suites)

# LABELS narrows the self-tests with a ginkgo label filter, e.g. LABELS=issue:3517
selftest:
	$(GO) test -v -count=1 -timeout 45m ./suites -ginkgo.v $(if $(LABELS),-ginkgo.label-filter='$(LABELS)')

## fuzz: the peers protocol decoder and encoder, FUZZTIME each (go test -fuzz)
FUZZTIME ?= 20s
fuzz:
	for f in FuzzDecodeMessage FuzzMessageRoundTrip FuzzVarint FuzzUpdateRoundTrip; do \
		$(GO) test ./harness/peers -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) || exit 1; done

## bench: image build, start-to-verdict and per-reload timings for #3517
bench: deps $(HARP)
	$(GO) test -count=1 -run '^$$' -bench . -benchtime 1x -timeout 30m ./bench

builds: $(HARP)
	$(HARP) builds

capture: deps $(HARP)
	$(HARP) capture --haproxy 'deb:bookworm deb:trixie deb:sid deb:experimental' --out fixtures/captures

sweep: $(HARP)
	$(HARP) sweep

## matrix: every suite matching SUITES on every build in BUILDS, JOBS builds at a time;
##   SHARD=i/n runs a deterministic share (merge shards with bin/harp merge DIR...)
BUILDS ?= deb:bookworm deb:trixie deb:sid deb:experimental
SUITES ?= area:peers
JOBS   ?= 1
SHARD  ?= 1/1
matrix: deps $(HARP)
	$(HARP) matrix --builds '$(BUILDS)' --suites '$(SUITES)' --jobs $(JOBS) --shard $(SHARD)

## nightly: every suite on every build the Debian mirror serves (plus EXTRA specs),
##   compared with the previous nightly under reports/nightly
EXTRA ?=
nightly: deps $(HARP)
	$(HARP) nightly --extra '$(EXTRA)' --jobs $(JOBS)
