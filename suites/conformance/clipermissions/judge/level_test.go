package judge

import "testing"

func TestCutLevel(t *testing.T) {
	for _, c := range []struct {
		out, level, want string
		ok               bool
	}{
		{"user\n", "user", "", true},
		{"Permission denied\n\nuser\n", "user", "Permission denied\n", true},
		{"Done.\noperator\n", "operator", "Done.", true},
		{"Permission denied\n", "user", "", false},
		{"", "user", "", false},
	} {
		got, ok := CutLevel(c.out, c.level)
		if got != c.want || ok != c.ok {
			t.Errorf("CutLevel(%q, %q) = %q, %v; want %q, %v", c.out, c.level, got, ok, c.want, c.ok)
		}
	}
}

func TestDenied(t *testing.T) {
	for out, want := range map[string]bool{
		"Permission denied\n": true, "Unknown command: 'show foo'": true, "insufficient privileges": true,
		"# table: tbl, type: string": false, "": false,
	} {
		if Denied(out) != want {
			t.Errorf("Denied(%q) = %v", out, !want)
		}
	}
}

func TestListed(t *testing.T) {
	if got := Listed("0x55d1 k v0\n0x55d2 k2 v1\n"); got != "[k v0, k2 v1]" {
		t.Errorf("Listed = %q", got)
	}
	if got := Listed("192.0.2.9\n"); got != "[192.0.2.9]" {
		t.Errorf("Listed without pointers = %q", got)
	}
	if got := Listed(""); got != "[]" {
		t.Errorf("Listed empty = %q", got)
	}
}
