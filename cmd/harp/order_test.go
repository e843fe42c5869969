package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/ops/history/testrepo"
)

// git: builds named in any order come back in history order, in the
// places they held among the other builds.
func TestOrderGit(t *testing.T) {
	dir, git, _ := testrepo.New(t)
	for _, tag := range []string{"v3.0-dev2", "v3.0.0", "", "v3.0.1"} {
		os.WriteFile(filepath.Join(dir, "VERSION"), []byte(tag+"x\n"), 0o644)
		git("add", "-A")
		git("commit", "-q", "-m", "c "+tag)
		if tag != "" {
			git("tag", tag)
		}
	}
	specs, err := spec.ParseList("git:" + dir + "@v3.0.1 deb:bookworm git:" + dir + "@v3.0.0~0 git:" + dir + "@v3.0-dev2 git:" + dir + "@HEAD~1")
	if err != nil {
		t.Fatal(err)
	}
	if err := orderGit(specs); err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, s := range specs {
		refs = append(refs, s.Ref)
	}
	// HEAD~1 is v3.0.0-1-g...: after v3.0.0, before v3.0.1.
	if got := strings.Join(refs, " "); got != "v3.0-dev2  v3.0.0~0 HEAD~1 v3.0.1" {
		t.Errorf("order = %q", got)
	}
	if specs[1].Scheme != spec.Deb {
		t.Errorf("a deb: build moved: %+v", specs[1])
	}
}
