package capture

import (
	"strings"
	"testing"
)

// The capture's two sections are #3517's setup: each holds only the local
// peer and one table, each on a port of its own.
func TestTwoSections(t *testing.T) {
	cfg, err := TwoSections()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"localpeer harp", "peers first\n    peer harp 127.0.0.1:10000\n    table marker type ip size 100 expire 1h store gpc0",
		"peers second\n    peer harp 127.0.0.1:10001\n    table marker"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
}
