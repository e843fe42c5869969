package cli_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Value packages are leaves: verdicts, reports, parsers and the doctor
// must compile without Docker or testcontainers.
func TestValuePackagesStayLeaves(t *testing.T) {
	leaves := []string{"cli", "cliout", "verdict", "report", "doctor", "spec", "text"}
	for _, p := range leaves {
		out, err := exec.Command("go", "list", "-deps", "github.com/harp-project/harp/harness/"+p).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", p, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.Contains(dep, "testcontainers") || strings.Contains(dep, "moby/moby") || strings.HasSuffix(dep, "harness/node") {
				t.Errorf("harness/%s depends on %s", p, dep)
			}
		}
	}
}
