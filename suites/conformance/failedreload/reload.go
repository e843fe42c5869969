package failedreload

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/suites/conformance/failedreload/judge"
)

// cannotLoad writes cfg, a break, to path and checks that this build
// indeed cannot load it: a break a build loads makes a new worker after
// the reload HAProxy's right, not a failure kept. Most breaks are refused
// by `haproxy -c`. A bind to an address no interface has passes -c and
// fails only when started: for it, failsOnBind is that address's host,
// and the config must pass -c and, started alone (in the foreground,
// within bound), fail naming the host.
//
// unmet is why cfg is no break on this build ("" when it is one), naming
// it as what ("the config with a syntax error"); note says what showed
// it is one. err is harp failing to write or check it.
func cannotLoad(ctx context.Context, n *node.Node, path, cfg, what, failsOnBind string, bound time.Duration) (unmet, note string, err error) {
	if err := n.WriteFile(ctx, path, []byte(cfg)); err != nil {
		return "", "", err
	}
	ok, out, err := n.CheckConfig(ctx, path)
	switch {
	case err != nil:
		return "", "", err
	case failsOnBind != "" && !ok:
		return fmt.Sprintf("haproxy -c refuses %s on this build, which must fail only when started: %s", what, text.FirstAlert(out)), "", nil
	case failsOnBind != "":
		// Started alone, the config fails on that bind (a node that could
		// take the address would start a worker).
		alone, cancel := context.WithTimeout(ctx, bound)
		defer cancel()
		code, out, err := n.RunBinary(alone, "-db", "-f", path)
		if err != nil || code == 0 || !strings.Contains(out, failsOnBind) {
			return fmt.Sprintf("%s, started alone, did not fail on that bind (exit %d, %v): %s", what, code, err, text.FirstAlert(out)), "", nil
		}
		return "", "haproxy -c accepts the broken config, and started alone it fails on its bind: " + text.FirstAlert(out), nil
	case ok:
		return fmt.Sprintf("haproxy -c accepts %s on this build: it is no break here", what), "", nil
	}
	return "", "haproxy -c refuses the broken config: " + text.FirstAlert(out), nil
}

// failReload reads show proc's count of failed reloads, puts cfg (a
// config that cannot load) in place, sends the master SIGUSR2 and watches
// show proc until its count is decided (watchCount), then reads what it
// says of old, the worker that served before. err is harp failing to
// read the count or to ask for the reload; only Master is read then, and
// when the master is gone.
func failReload(ctx context.Context, n *node.Node, cfg string, old int, bound time.Duration) (judge.After, error) {
	before, err := n.Procs(ctx)
	if err != nil {
		return judge.After{Old: old}, err
	}
	failedBefore := before.Master.Failed
	// What the master printed before the reload, so that only this
	// reload's lines count; unread, the wait is for the count alone.
	logs, logsErr := n.Logs(ctx)
	if err := n.WriteFile(ctx, node.ConfigPath, []byte(cfg)); err != nil {
		return judge.After{FailedBefore: failedBefore, Old: old}, err
	}
	if err := n.Signal(ctx, syscall.SIGUSR2); err != nil {
		return judge.After{FailedBefore: failedBefore, Old: old}, fmt.Errorf("sending SIGUSR2: %w", err)
	}
	w := watchCount(ctx, n, failedBefore, bound, func() (string, bool) {
		if logsErr != nil {
			return "", false
		}
		fresh, err := n.LogsAfter(ctx, logs)
		if err != nil {
			return "", false
		}
		return judge.FailureLogged(fresh)
	})
	master := n.MasterExit(ctx)
	if obs.Gone(master) {
		return judge.After{FailedBefore: failedBefore, Old: old, Master: master}, nil
	}
	r := judge.AfterReading(w.procs, w.at, w.final, master, failedBefore, old)
	r.Logged = w.logged
	return r, nil
}

// counted is how watchCount ended: the reading that decided, when it
// was taken after SIGUSR2, and whether the count was final then.
type counted struct {
	procs  obs.Of[cliout.Procs]
	at     time.Duration
	final  bool
	logged string
}

// watchCount polls show proc until it counts more than failedBefore, or
// a reading begins after the master logged the failure (logged, checked
// before each reading): the count is final then, on a correct build as on
// one that does not count (judge.FailureLogged says why). Else it runs to
// bound; a failed reading at the bound is retried for up to 5 s more,
// and stays unknown if none succeeds. A master that exited ends it.
func watchCount(ctx context.Context, n *node.Node, failedBefore int, bound time.Duration, logged func() (string, bool)) counted {
	start := time.Now()
	deadline := start.Add(bound)
	var c counted
	for {
		if c.logged == "" {
			c.logged, _ = logged()
		}
		p, err := n.Procs(ctx)
		c.procs, c.at = obs.From(p, err), time.Since(start)
		if err == nil && (p.Master.Failed > failedBefore || c.logged != "") {
			c.final = c.logged != ""
			return c
		}
		now := time.Now()
		switch {
		case ctx.Err() != nil && now.Before(deadline):
			c.procs = obs.Failure[cliout.Procs]("the run ended %s before the end of the wait", deadline.Sub(now).Round(time.Millisecond))
			return c
		case err != nil && obs.Gone(n.MasterExit(ctx)):
			return c // nothing to wait for: the caller reads the exit
		case ctx.Err() != nil || (now.After(deadline) && (err == nil || now.After(deadline.Add(5*time.Second)))):
			if err != nil {
				c.procs = obs.Failure[cliout.Procs]("show proc at the end of %s: %v", bound, err)
			}
			return c
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}
