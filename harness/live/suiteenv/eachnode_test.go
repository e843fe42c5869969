package suiteenv

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/harp-project/harp/harness/live/node"
)

// EachNode gives every node's result in order; the first failure, in the
// nodes' order, is the answer, named after its node when there are several.
func TestEachNode(t *testing.T) {
	a, b, c := &node.Node{Name: "a"}, &node.Node{Name: "b"}, &node.Node{Name: "c"}
	name := func(_ context.Context, n *node.Node) (string, string, error) { return n.Name, "", nil }
	if got, u, err := EachNode(context.Background(), []*node.Node{a, b, c}, name); !slices.Equal(got, []string{"a", "b", "c"}) || u != "" || err != nil {
		t.Errorf("all prepared: %v %q %v", got, u, err)
	}
	fails := func(_ context.Context, n *node.Node) (string, string, error) {
		switch n {
		case b:
			return "", "resync stuck", nil
		case c:
			return "", "", errors.New("EOF")
		}
		return n.Name, "", nil
	}
	if got, u, err := EachNode(context.Background(), []*node.Node{a, b, c}, fails); got != nil || u != "b: resync stuck" || err != nil {
		t.Errorf("b unmet first: %v %q %v", got, u, err)
	}
	if _, u, err := EachNode(context.Background(), []*node.Node{c, b}, fails); u != "" || err == nil {
		t.Errorf("c failed first: %q %v", u, err)
	}
	if _, u, _ := EachNode(context.Background(), []*node.Node{b}, fails); u != "resync stuck" {
		t.Errorf("one node: %q", u)
	}
}

// Beside's wait gives the check's answer, as often as asked.
func TestBeside(t *testing.T) {
	release := make(chan struct{})
	wait := Beside(func() (string, error) { <-release; return "control failed", nil })
	close(release)
	for range 2 {
		if u, err := wait(); u != "control failed" || err != nil {
			t.Errorf("%q %v", u, err)
		}
	}
}
