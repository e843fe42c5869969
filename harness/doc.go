// Package harness is harp's toolkit, in three layers, one folder each; a
// package imports its own layer and those below it, never one above
// (layers_test.go holds every package to it):
//
//   - core: values and pure functions. Verdicts, observations, records of
//     harp's actions (a CLI exchange, an injected fault), parsers of
//     HAProxy's output, build specs, case judging, configs, text, the suite
//     registry (what `harp suites` lists), the chaos checker. No Docker, no
//     socket, no child process: `make unit` builds and tests it with Docker
//     stopped.
//   - live: what acts on running HAProxy and on the machine. Images'
//     helpers, the engine, nodes, clusters, the remote peer, load, link
//     and process faults, the nemesis, a suite's environment, the runtime
//     CLI's connections, the peers client.
//   - ops: the operations on runs. Running suites on builds, reports,
//     findings, history and the scoreboard, bisect, reproducers, the
//     doctor and its monitor, captures, the reg-test export.
//
// Suites (suites/) sit above live and beside ops; no toolkit package
// imports a suite.
package harness
