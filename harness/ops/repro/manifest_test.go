package repro_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/repro"
)

// repro.json names the finding and the verification; a directory
// written before it is read from README.md to the same effect.
func TestManifest(t *testing.T) {
	f, r := failedReloadResult(t)
	rp, err := repro.For(f, r)
	if err != nil {
		t.Fatal(err)
	}
	bad := repro.Judge([]repro.Run{{Build: "3.4.7-1", Harp: verdict.Reproduced, Exit: 0, Said: "PASS: held"}}, time.Now())
	good := repro.Judge([]repro.Run{{Build: "3.4.7-1", Harp: verdict.Reproduced, Exit: 1, Said: "REPRODUCED: x"}, {Build: "3.0.11", Harp: verdict.Pass, Exit: 0, Said: "PASS: y"}}, time.Now())
	for _, v := range []repro.Verification{{State: repro.Skipped}, bad, good} {
		dir := t.TempDir()
		if err := rp.Write(dir, v); err != nil {
			t.Fatal(err)
		}
		for _, from := range []string{repro.ManifestName, "README.md"} {
			m, err := repro.ReadManifest(dir)
			if err != nil {
				t.Fatalf("%s, from %s: %v", v.State, from, err)
			}
			if m.Finding != f.ID || m.Signature != f.Signature || m.Verification.State != v.State || m.Verification.Why != v.Why {
				t.Errorf("%s, from %s: %+v", v.State, from, m)
			}
			os.Remove(filepath.Join(dir, repro.ManifestName))
		}
		os.Remove(filepath.Join(dir, "README.md"))
		if _, err := repro.ReadManifest(dir); err == nil {
			t.Errorf("a directory naming no finding: no error")
		}
	}
}
