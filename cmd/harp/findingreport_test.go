package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/ops/repro"
)

// --repro must be the reproducer of the finding reported, and one never
// verified must be said to be so in the report.
func TestReportFindingRepro(t *testing.T) {
	root := reproReports(t)
	sig := "conf-cli-permissions/user.set-table.refusal-changes-nothing"
	dir := filepath.Join(t.TempDir(), "repro")
	if code := cmdFindingsRepro(context.Background(), []string{sig, "--reports", root, "--out", dir, "--no-verify"}); code != 0 {
		t.Fatalf("findings repro: exit %d", code)
	}
	report := func(finding, reproDir string) (int, string) {
		out := filepath.Join(t.TempDir(), "report.md")
		code := cmdReportFinding(context.Background(), findingArgs{name: finding, reports: root, repro: reproDir}, out, "")
		md, _ := os.ReadFile(out)
		return code, string(md)
	}

	// Another finding's reproducer is refused, and nothing is written.
	if code, md := report("3517", dir); code != 3 || md != "" {
		t.Errorf("finding 3517 with the reproducer of %s: exit %d, want 3 and no report\n%s", sig, code, md)
	}
	code, md := report(sig, dir)
	if code != 0 {
		t.Fatalf("its own reproducer: exit %d", code)
	}
	if !strings.Contains(md, "<code>reproduce</code>") {
		t.Errorf("the reproducer is not inlined:\n%s", md)
	}
	if !strings.Contains(md, "**Not verified**") || !strings.Contains(md, "--no-verify") {
		t.Errorf("a --no-verify reproducer must be said not verified:\n%s", md)
	}
	if strings.Contains(md, repro.ManifestName) {
		t.Errorf("harp's manifest is inlined as a file of the reproducer:\n%s", md)
	}

	// A directory written before repro.json: its README.md says the same.
	if err := os.Remove(filepath.Join(dir, repro.ManifestName)); err != nil {
		t.Fatal(err)
	}
	if code, _ := report("3517", dir); code != 3 {
		t.Errorf("without repro.json, another finding's reproducer: exit %d, want 3", code)
	}
	if code, md := report(sig, dir); code != 0 || !strings.Contains(md, "**Not verified**") {
		t.Errorf("without repro.json, its own unverified reproducer: exit %d\n%s", code, md)
	}
	// A directory that names no finding cannot be told to be this one's.
	os.Remove(filepath.Join(dir, "README.md"))
	if code, _ := report(sig, dir); code != 3 {
		t.Errorf("a reproducer naming no finding: exit %d, want 3", code)
	}
}
