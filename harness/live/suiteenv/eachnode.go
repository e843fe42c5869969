package suiteenv

import (
	"context"
	"sync"

	"github.com/harp-project/harp/harness/live/node"
)

// EachNode runs prepare on every node side by side (what each node's
// trials need before the first: a probe, a finished resync) and gives
// the results in the nodes' order. The first node, in that order, whose
// prepare failed or missed a precondition is the answer; with several
// nodes its unmet reason is prefixed with the node's name.
func EachNode[T any](ctx context.Context, nodes []*node.Node, prepare func(ctx context.Context, n *node.Node) (T, string, error)) ([]T, string, error) {
	out := make([]T, len(nodes))
	unmets, errs := make([]string, len(nodes)), make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], unmets[i], errs[i] = prepare(ctx, n)
		}()
	}
	wg.Wait()
	for i, n := range nodes {
		if errs[i] != nil || unmets[i] != "" {
			if len(nodes) > 1 && unmets[i] != "" {
				unmets[i] = n.Name + ": " + unmets[i]
			}
			return nil, unmets[i], errs[i]
		}
	}
	return out, "", nil
}

// Beside starts check on a goroutine of its own, beside what the caller
// does next (a positive control on a node of its own, beside the trials);
// wait gives its answer once it returned.
func Beside(check func() (unmet string, err error)) (wait func() (unmet string, err error)) {
	done := make(chan struct{})
	var unmet string
	var err error
	go func() {
		defer close(done)
		unmet, err = check()
	}()
	return func() (string, error) {
		<-done
		return unmet, err
	}
}
