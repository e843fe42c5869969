//go:build selftest

package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.yaml.in/yaml/v3"

	"github.com/harp-project/harp/harness/ops/selftest"
)

// workflow is what a local run reads of a GitHub workflow file.
type workflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Steps []struct {
			Name string `yaml:"name"`
			Run  string `yaml:"run"`
			Uses string `yaml:"uses"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// Steps the local run does not take, each with why: the rest of the
// shard and merge jobs' run steps are taken as written.
var notLocal = map[string]string{
	"clone HAProxy": "the network: the local matrix names Debian builds instead of heads",
	"install":       "sudo and the packages: the self-tests' machine has them; harp is built once before",
}

// The shipped nightly workflow, run here: its shard job's steps for each
// of two shards and its merge job's, on a small matrix (two builds, one
// suite) given through the env its steps read. A workflow that no longer
// matches harp's flags fails here, not in someone's nightly.
var _ = Describe("the shipped nightly workflow", Label("workflow"), func() {
	It("runs its shard and merge steps on two builds and one suite", func(ctx SpecContext) {
		root := selftest.Root()
		raw, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "nightly.yml"))
		Expect(err).NotTo(HaveOccurred())
		var wf workflow
		Expect(yaml.Unmarshal(raw, &wf)).To(Succeed())
		Expect(wf.Jobs).To(HaveKey("shard"))
		Expect(wf.Jobs).To(HaveKey("merge"))
		for _, k := range []string{"SHARDS", "SUITES", "HEADS", "BISECT_BUDGET"} {
			Expect(wf.Env).To(HaveKey(k), "the steps read %s from the workflow's env", k)
		}

		// The workspace: harp's tracked files, as actions/checkout lays them.
		dir := GinkgoT().TempDir()
		files, err := exec.Command("git", "-C", root, "ls-files").Output()
		Expect(err).NotTo(HaveOccurred())
		for _, f := range strings.Split(strings.TrimSpace(string(files)), "\n") {
			data, err := os.ReadFile(filepath.Join(root, f))
			if os.IsNotExist(err) {
				continue // deleted in the work tree
			}
			Expect(err).NotTo(HaveOccurred())
			info, _ := os.Stat(filepath.Join(root, f))
			Expect(os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(dir, f), data, info.Mode().Perm())).To(Succeed())
		}
		env := append(os.Environ(), "SHARDS=2", "SUITES=suite:upstream-fixes-config", "HEADS=deb:bookworm deb:experimental", "BISECT_BUDGET=0",
			"TESTCONTAINERS_RYUK_DISABLED=true")
		step := func(name, script string, shard int) {
			script = strings.ReplaceAll(script, "${{ matrix.shard }}", fmt.Sprint(shard))
			Expect(script).NotTo(ContainSubstring("${{"), "step %q uses an expression the local run cannot give", name)
			rctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(rctx, "bash", "-eo", "pipefail", "-c", script)
			cmd.Dir, cmd.Env = dir, env
			out, err := cmd.CombinedOutput()
			GinkgoWriter.Printf("step %q (shard %d):\n%s\n", name, shard, out)
			Expect(err).NotTo(HaveOccurred(), "step %q: %s", name, out)
		}
		step("make build", "make build", 0)
		for shard := 1; shard <= 2; shard++ {
			for _, s := range wf.Jobs["shard"].Steps {
				if s.Run == "" || notLocal[s.Name] != "" {
					continue
				}
				step(s.Name, s.Run, shard)
			}
			// actions/upload-artifact of the shard's latest run, then
			// actions/download-artifact into shards/<artifact name>.
			latest := filepath.Join(dir, "reports", fmt.Sprintf("nightly-%d", shard), "latest")
			step("artifact", fmt.Sprintf("mkdir -p shards/nightly-%d && cp -rL %s/. shards/nightly-%d/", shard, latest, shard), shard)
		}
		for _, s := range wf.Jobs["merge"].Steps {
			if s.Run != "" {
				step(s.Name, s.Run, 0)
			}
		}
		// One merged run holding both builds' cells.
		sums, _ := filepath.Glob(filepath.Join(dir, "merged", "*", "summary.json"))
		Expect(sums).NotTo(BeEmpty(), "merge wrote no run under merged/")
		data, err := os.ReadFile(sums[0])
		Expect(err).NotTo(HaveOccurred())
		var run struct {
			Results []struct {
				Suite string `json:"suite"`
				Build string `json:"build_spec"`
			} `json:"results"`
		}
		Expect(json.Unmarshal(data, &run)).To(Succeed())
		builds := map[string]bool{}
		for _, r := range run.Results {
			if r.Suite == "upstream-fixes-config" {
				builds[r.Build] = true
			}
		}
		Expect(builds).To(HaveKey("deb:bookworm"))
		Expect(builds).To(HaveKey("deb:experimental"))
	}, SpecTimeout(30*time.Minute))
})
