package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// makeTargets are the make targets README documents that run harp (or the
// nemesis driver), with what their defaults must put on its command line.
var makeTargets = map[string][]string{
	"test-3517":                      {`--suites="suite:3517"`, `--haproxy="deb:latest"`},
	"test-3519":                      {`--suites="suite:3519"`},
	"test-listener-livelock":         {`--suites="suite:listener-livelock"`},
	"test-cluster-partition":         {`--suites="suite:cluster-partition"`},
	"test-conf-reload-keeps-entries": {`--suites="suite:conf-reload-keeps-entries"`},
	"test-chaos":                     {`--suites="suite:chaos"`},
	"test-cluster":                   {`--suites="area:peers-cluster"`},
	"test-upstream-fixes":            {`--suites="area:regressions"`},
	"conformance":                    {`--suites="area:conformance"`},
	"matrix":                         {`--haproxy="deb:bookworm deb:trixie deb:sid deb:experimental"`, `--suites="area:peers"`, `--jobs="1"`, `--shard="1/1"`},
	"nightly":                        {`--jobs="1"`, `--keep="14"`, `--bisect-budget="45m0s"`},
	"bisect":                         {`--suites="issue:3517"`, `--good="deb:bookworm"`, `--bad="deb:experimental"`},
	"report-property":                {`--run="reports/latest"`},
	"doctor":                         {"harp doctor: flags parsed"},
	"capture":                        {`--out="fixtures/captures"`},
	"repeat":                         {"verdicts over 10 runs of test-3517"},
	"nemesis":                        {"nemesis: flags parsed: 3 seeds"},
	"scoreboard":                     {`--trials="3"`, `--shard="1/1"`, `--phase="all"`},
	"reg-tests":                      {`harp reg-tests run: flags parsed: --haproxy="deb:latest"`},
	"reg-tests-export":               {"harp reg-tests export: flags parsed"},
}

// targetDeps is what each target installs with its defaults
// (scripts/deps.sh, HARP_DEPS=list): a verdict on a Debian build needs
// Docker, mmdebstrap and gdb only; compiling adds the toolchain; nothing
// but make test (deps all) installs the monitor's browser or a registry.
var targetDeps = map[string]string{
	"test-3517": runDeps, "test-3519": runDeps, "test-listener-livelock": runDeps, "test-cluster-partition": runDeps,
	"test-conf-reload-keeps-entries": runDeps, "test-chaos": runDeps, "test-cluster": runDeps, "test-upstream-fixes": runDeps,
	"conformance": runDeps, "matrix": runDeps, "nightly": runDeps, "bisect": runDeps, "capture": runDeps, "repeat": runDeps,
	"nemesis":         "harp deps: run source: " + runPkgs + " " + sourcePkgs,
	"scoreboard":      "harp deps: run source: " + runPkgs + " " + sourcePkgs,
	"report-property": "", "doctor": "", "reg-tests": runDeps, "reg-tests-export": "",
}

const (
	runPkgs    = "mmdebstrap gdb"
	sourcePkgs = "build-essential patch ccache git libcrypt-dev ca-certificates"
	runDeps    = "harp deps: run: " + runPkgs
)

// scripts/deps.sh --for reads build specs: a compiled one adds the
// toolchain, flavor=full its headers; all is every profile.
func TestDepsForSpecs(t *testing.T) {
	for specs, want := range map[string]string{
		"deb:latest deb:bookworm image:localhost:5000/h:1": runDeps,
		"src:deb:3.0.11,patch=fix.diff":                    "harp deps: run source: " + runPkgs + " " + sourcePkgs,
		"git:~/haproxy@v3.0.0":                             "harp deps: run source: " + runPkgs + " " + sourcePkgs,
		"src:deb:3.0.11,flavor=full":                       "harp deps: run source full: " + runPkgs + " " + sourcePkgs + " libssl-dev liblua5.4-dev libpcre2-dev zlib1g-dev",
	} {
		cmd := exec.Command("../../scripts/deps.sh", "--for", specs)
		cmd.Env = append(os.Environ(), "HARP_DEPS=list")
		out, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("--for %q: %q %v, want %q", specs, out, err, want)
		}
	}
	cmd := exec.Command("../../scripts/deps.sh", "all")
	cmd.Env = append(os.Environ(), "HARP_DEPS=list")
	if out, _ := cmd.Output(); !strings.Contains(string(out), "prometheus chromium docker-registry") {
		t.Errorf("all: %q", out)
	}
	if err := exec.Command("../../scripts/deps.sh", "everything").Run(); err == nil {
		t.Error("an unknown profile was taken")
	}
}

// notHarp are the README's other make words: targets that run no harp
// command line (go test, the generator) and prose.
var notHarp = map[string]string{
	"test": "go test", "unit": "go test", "vet": "go vet", "selftest": "go test", "bench": "go test", "fuzz": "go test",
	"deps": "scripts/deps.sh", "build": "go build", "readme": "harp suites --readme: no flags with defaults",
	"variables": "prose", "turns": "prose", "it": "prose", "test-": "prose (make test-<suite>)",
}

// TestMakeTargetsWithDefaults runs each documented make target with no
// variables given, harp stopping once its flags parsed (HARP_FLAGS_ONLY):
// a default the Makefile loses (an export before a ?= once emptied every
// one of them) fails here, not on a user's first night.
func TestMakeTargetsWithDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds harp and runs make")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	root, _ := filepath.Abs("../..")
	// README is an index: the targets are documented on its pages too
	// (not the guide for suite writers and the generated scoreboard, which
	// say "make" in prose and in upstream's subjects).
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	documented := map[string]bool{}
	for _, page := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		if base := filepath.Base(page); base == "writing-a-suite.md" || base == "upstream-bugs.md" {
			continue
		}
		readme, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`\bmake ([a-z0-9-]+)`).FindAllStringSubmatch(string(readme), -1) {
			documented[m[1]] = true
		}
	}
	var names []string
	for name := range documented {
		if _, ok := makeTargets[name]; !ok && notHarp[name] == "" {
			t.Errorf("README or docs/ document make %s: add it to makeTargets (what its defaults must give harp) or notHarp", name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	harp := filepath.Join(t.TempDir(), "harp")
	build := exec.Command("go", "build", "-o", harp, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// The environment without any make variable a user might have set.
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !regexp.MustCompile(`^[A-Z_]+$`).MatchString(k) || k == "PATH" || k == "HOME" || strings.HasPrefix(k, "GO") || k == "TMPDIR" {
			env = append(env, kv)
		}
	}
	env = append(env, "HARP_FLAGS_ONLY=1", "HARP_DEPS=list")
	for target, want := range makeTargets {
		if !documented[target] {
			t.Errorf("make %s is tested here but README no longer documents it", target)
			continue
		}
		t.Run(target, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "-s", "-C", root, target, "HARP="+harp)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("make %s with its defaults: %v\n%s", target, err, out)
			}
			for _, w := range want {
				if !strings.Contains(string(out), w) {
					t.Errorf("make %s: output lacks %s:\n%s", target, w, out)
				}
			}
			// What the target installs with its defaults, exactly: a list
			// never grows a package the target does not use.
			got := regexp.MustCompile(`(?m)^harp deps: .*$`).FindAllString(string(out), -1)
			wd := targetDeps[target]
			if (wd == "" && len(got) > 0) || (wd != "" && !slices.Contains(got, wd)) {
				t.Errorf("make %s installs %q, want %q", target, got, wd)
			}
			for _, g := range got {
				if g != wd {
					t.Errorf("make %s also installs %q (want only %q)", target, g, wd)
				}
			}
			if strings.Contains(string(out), "invalid value") {
				t.Errorf("make %s: %s", target, out)
			}
		})
	}
}
