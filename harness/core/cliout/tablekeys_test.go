package cliout

import (
	"reflect"
	"testing"
)

func TestTableKeysAdded(t *testing.T) {
	before := Table{Entries: []Entry{{Key: "a"}, {Key: "b"}}}
	after := Table{Entries: []Entry{{Key: "c", Data: map[string]string{"gpc0": "1"}}, {Key: "a"}, {Key: "d"}}}
	if got := after.Keys(); !reflect.DeepEqual(got, []string{"c", "a", "d"}) {
		t.Errorf("Keys: %q", got)
	}
	if got := (Table{}).Keys(); got != nil {
		t.Errorf("Keys of an empty table: %q", got)
	}
	added := after.Added(before)
	if len(added) != 2 || added[0].Key != "c" || added[0].Data["gpc0"] != "1" || added[1].Key != "d" {
		t.Errorf("Added: %+v", added)
	}
}
