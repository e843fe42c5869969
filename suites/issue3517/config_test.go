package issue3517

import (
	"strings"
	"testing"
)

// The rendered config: n sections on their own ports, the issue's two by default.
func TestConfig(t *testing.T) {
	cfg, err := ConfigFor(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"peers first\n    peer harp 127.0.0.1:10000\n", "peers s3\n    peer harp 127.0.0.1:10002\n"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
	if two, _ := ConfigFor(2); !strings.Contains(two, "peers second\n    peer harp 127.0.0.1:10001") || strings.Contains(two, "s3") {
		t.Errorf("the issue's config changed:\n%s", two)
	}
}
