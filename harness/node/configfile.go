package node

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/obs"
)

// WriteCheck writes cfg to path on the node and checks it with the
// build's `haproxy -c` (CheckConfig).
func (n *Node) WriteCheck(ctx context.Context, path, cfg string) (ok bool, out string, err error) {
	if err := n.WriteFile(ctx, path, []byte(cfg)); err != nil {
		return false, "", err
	}
	return n.CheckConfig(ctx, path)
}

// StartAlone runs the build's binary on the config at path in the
// foreground (-db), beside the node, for at most bound: a config that
// cannot start ends by itself.
func (n *Node) StartAlone(ctx context.Context, path string, bound time.Duration) (code int, out string, err error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	return n.RunBinary(ctx, "-db", "-f", path)
}

// SignalReload puts cfg in place of the node's config and sends the
// master SIGUSR2; it waits for nothing.
func (n *Node) SignalReload(ctx context.Context, cfg string) error {
	if err := n.WriteFile(ctx, ConfigPath, []byte(cfg)); err != nil {
		return err
	}
	if err := n.Signal(ctx, syscall.SIGUSR2); err != nil {
		return fmt.Errorf("sending SIGUSR2: %w", err)
	}
	return nil
}

// FailingReload reloads the node with cfg, a config that cannot load
// (SignalReload), reads show proc until it counts one more failed reload
// than failedBefore or timeout passes (ProcsUntil), then whether the
// master is gone (MasterExit). err is harp failing to ask for the reload;
// nothing is read then.
func (n *Node) FailingReload(ctx context.Context, cfg string, failedBefore int, timeout time.Duration) (procs obs.Of[cliout.Procs], master obs.Of[obs.Exit], err error) {
	if err := n.SignalReload(ctx, cfg); err != nil {
		return procs, master, err
	}
	procs = n.ProcsUntil(ctx, timeout, func(p cliout.Procs) bool { return p.Master.Failed > failedBefore })
	return procs, n.MasterExit(ctx), nil
}
