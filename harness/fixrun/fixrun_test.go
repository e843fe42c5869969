package fixrun

import (
	"context"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/fixcase"
	"github.com/harp-project/harp/harness/node"
)

func TestAreaCheck(t *testing.T) {
	steps := fixcase.Judged{Case: fixcase.Case{ID: "s", Kind: fixcase.Steps}}
	stats := fixcase.Judged{Case: fixcase.Case{ID: "t", Kind: fixcase.Stats}}
	drive := func(context.Context, *node.Node) (string, error) { return "", nil }
	for _, c := range []struct {
		a   Area
		err string
	}{
		{Area{Cases: []fixcase.Judged{steps, stats}, Drives: map[string]Drive{"s": drive}}, ""},
		{Area{Cases: []fixcase.Judged{steps}}, "case s (kind steps): a drive false"},
		{Area{Cases: []fixcase.Judged{stats}, Drives: map[string]Drive{"t": drive}}, "case t (kind stats): a drive true"},
		{Area{Cases: []fixcase.Judged{steps}, Drives: map[string]Drive{"s": drive, "x": drive}}, "Go code for x"},
	} {
		err := c.a.check()
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%+v: %v, want %q", c.a, err, c.err)
		}
	}
}
