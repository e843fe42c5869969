package reloadkeepsentries

import (
	"strings"
	"testing"
)

func TestConfigs(t *testing.T) {
	for _, k := range Kinds {
		cfg, err := Config(k)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(cfg, "\npeers "); got != k.Sections {
			t.Errorf("%s: %d peers sections, want %d:\n%s", k.Name, got, k.Sections, cfg)
		}
		if (k.Remote != "") != strings.Contains(cfg, "peer remote 127.0.0.1:10999") {
			t.Errorf("%s: remote peer line wrong:\n%s", k.Name, cfg)
		}
	}
}

func TestSelected(t *testing.T) {
	ks, err := Selected("10k, early")
	if err != nil || len(ks) != 2 || ks[0].Slug != "early" || ks[1].Slug != "10k" {
		t.Fatalf("Selected: %v %v", ks, err)
	}
	if _, err := Selected("early,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("an unknown kind was not refused by name: %v", err)
	}
	if ks, _ := Selected("all"); len(ks) != len(Kinds) {
		t.Fatal("all is not every kind")
	}
}
