package clipermissions

import (
	"strings"
	"testing"

	"github.com/harp-project/harp/suites/conformance/clipermissions/clilevels"
)

// Every state-changing command of every build's table has a state to
// read, or is one whose effect harp does not read.
func TestTables(t *testing.T) {
	for _, v := range []string{"2.6.12-1+deb12u3", "3.0.11-1+deb13u4", "3.2.26-1", "3.4.7-1"} {
		file, rows, err := clilevels.Table(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Kind == "change" && probe(r.Command, "0x1") == nil && !strings.Contains(r.Command, "dynamic-cookie") {
				t.Errorf("%s: no state to read for %q", file, r.Command)
			}
		}
	}
}
