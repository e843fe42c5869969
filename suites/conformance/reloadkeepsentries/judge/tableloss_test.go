package judge

import (
	"reflect"
	"testing"

	"github.com/harp-project/harp/harness/core/cliout"
)

func TestTableLossAdd(t *testing.T) {
	tb := cliout.Table{Entries: []cliout.Entry{
		{Key: "k0", Data: map[string]string{"gpc0": "1"}},
		{Key: "k1", Data: map[string]string{"gpc0": "9"}},
	}}
	var l TableLoss
	l.Add("s1/t", tb, "gpc0", []string{"k0", "k1", "k2", "k3", "k4", "k5"}, []string{"1", "2", "3", "4", "5", "6"})
	l.Add("s2/t", tb, "gpc0", []string{"k0"}, []string{"1"})
	want := TableLoss{
		Lost:   map[string]int{"s1/t": 4},
		Wrong:  map[string]int{"s1/t": 1},
		Sample: []string{"s1/t k2", "s1/t k3", "s1/t k4", "s1/t k1 gpc0=9 (want 2)"},
	}
	if !reflect.DeepEqual(l, want) {
		t.Fatalf("got %+v, want %+v", l, want)
	}
}
