package node

import (
	"context"
	"fmt"
)

// SetMaxconn sets a frontend's maxconn (`set maxconn frontend`), then the
// process's (`set maxconn global`) when global is above 0.
func (n *Node) SetMaxconn(ctx context.Context, pid int, frontend string, max, global int) error {
	if err := n.Silent(ctx, pid, fmt.Sprintf("set maxconn frontend %s %d", frontend, max)); err != nil {
		return err
	}
	if global > 0 {
		return n.Silent(ctx, pid, fmt.Sprintf("set maxconn global %d", global))
	}
	return nil
}
