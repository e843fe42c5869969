package cliout

import "testing"

func TestSucceeded(t *testing.T) {
	for out, want := range map[string]bool{
		"": true, "\n": true, "Done.\n": true, "Permission denied\n": false, "Unknown command": false, "'set weight' requires a server": false,
	} {
		if Succeeded(out) != want {
			t.Errorf("Succeeded(%q) = %v", out, !want)
		}
	}
}

func TestEntriesText(t *testing.T) {
	tb := Table{Entries: []Entry{{Key: "z", Data: map[string]string{"gpc0": "1"}}, {Key: "a", Data: map[string]string{"gpc0": "5"}}}}
	if got := tb.EntriesText("gpc0"); got != "[a gpc0=5, z gpc0=1]" {
		t.Errorf("EntriesText = %q", got)
	}
	if got := (Table{}).EntriesText("gpc0"); got != "[]" {
		t.Errorf("EntriesText empty = %q", got)
	}
}
