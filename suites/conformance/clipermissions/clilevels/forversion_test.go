package clilevels

import "testing"

func TestForVersion(t *testing.T) {
	file, rows, noTable, err := ForVersion("3.2.26-1")
	if err != nil || noTable != "" || file == NoTableFile || len(rows) == 0 {
		t.Errorf("3.2.26-1: %q, %d rows, %q, %v", file, len(rows), noTable, err)
	}
	_, _, want := Table("1.8.0-1")
	user, _ := UserRule()
	file, rows, noTable, err = ForVersion("1.8.0-1")
	if err != nil || want == nil || noTable != want.Error() || file != NoTableFile || len(rows) != len(user) {
		t.Errorf("1.8.0-1: %q, %d rows, %q, %v", file, len(rows), noTable, err)
	}
}
