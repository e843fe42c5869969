package clilevels

import (
	"strings"
	"testing"
)

// Every build served has a table, with no change documented at level user.
func TestTables(t *testing.T) {
	for _, v := range []string{"2.6.12-1+deb12u3", "3.0.11-1+deb13u4", "3.2.26-1", "3.4.7-1"} {
		file, rows, err := Table(v)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(file, v[:4]) || len(rows) < 40 {
			t.Errorf("%s: table %s with %d rows", v, file, len(rows))
		}
		for _, r := range rows {
			if r.Kind == "change" && r.DocLevel == "user" {
				t.Errorf("%s: %q documented as a change at level user", file, r.Command)
			}
		}
	}
	if _, _, err := Table("1.8.30"); err == nil || !strings.Contains(err.Error(), "no CLI level table for HAProxy 1.8") {
		t.Errorf("a version without a table: %v", err)
	}
}

// The `level user` rule needs no table: every state-changing command of
// every table, each once.
func TestUserRule(t *testing.T) {
	rows, err := UserRule()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if r.Kind != "change" || r.DocLevel == "user" || seen[r.Command] {
			t.Errorf("row %+v", r)
		}
		seen[r.Command] = true
	}
	_, v30, err := Table("3.0.11-1+deb13u5")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range v30 {
		if r.Kind == "change" && !seen[r.Command] {
			t.Errorf("3.0's %q is not in the user rule", r.Command)
		}
	}
	if _, _, err := Table("2.7.0"); err == nil {
		t.Fatal("2.7 has no table: the user rule is what checks it")
	}
}

// A development version has a major.minor too: its reason names the
// missing table, not a version harp could not read.
func TestTableOfADevVersion(t *testing.T) {
	if _, _, err := Table("3.5-dev5-50872daa6"); err == nil || !strings.Contains(err.Error(), "no CLI level table for HAProxy 3.5") {
		t.Errorf("3.5-dev5: %v", err)
	}
	if name, _, err := Table("3.2.26-1"); err != nil || name != "3.2.0.tsv" {
		t.Errorf("3.2.26-1: %s %v", name, err)
	}
}

// Above orders the levels; an unknown socket level ranks as user.
func TestAbove(t *testing.T) {
	op := Row{DocLevel: "operator"}
	if !op.Above("user") || op.Above("operator") || op.Above("admin") {
		t.Errorf("operator above user/operator/admin: %v %v %v", op.Above("user"), op.Above("operator"), op.Above("admin"))
	}
}
