package doctor

import "testing"

func TestDiagnosisTable(t *testing.T) {
	d := Diagnosis{Tables: []TableView{{Name: "a/t", Keys: 1}, {Name: "b/t", Keys: 2}}}
	if tv, ok := d.Table("b/t"); !ok || tv.Keys != 2 {
		t.Fatalf("Table(b/t) = %+v, %v", tv, ok)
	}
	if _, ok := d.Table("c/t"); ok {
		t.Fatal("Table(c/t) found a table the doctor did not compare")
	}
}
