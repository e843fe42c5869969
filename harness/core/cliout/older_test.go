package cliout

import "testing"

func TestOlder(t *testing.T) {
	for _, c := range []struct {
		ver, since string
		older      bool
	}{{"2.6.0-a1efc048b", "2.7", true}, {"2.7.0", "2.7", false}, {"3.5-dev5-50872daa6", "2.8", false}, {"2.10.1", "2.9", false}, {"3.0.11-1", "", false}, {"2.9.1", "2.10", true}, {"unknown", "2.7", false}} {
		if got := Older(c.ver, c.since); got != c.older {
			t.Errorf("Older(%s, %s) = %v", c.ver, c.since, got)
		}
	}
}
