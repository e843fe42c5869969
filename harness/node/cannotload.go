package node

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/text"
)

// CannotLoad writes cfg, a break (a config meant not to load), to path
// and checks that this build indeed cannot load it: the precondition of
// any property of failed reloads, since a break a build loads makes a
// new worker after the reload HAProxy's right, not a failure kept. Most
// breaks are refused by `haproxy -c` (WriteCheck). A bind to an address
// no interface has passes -c and fails only when started: for it,
// failsOnBind is that address's host, and the config must pass -c and,
// started alone (StartAlone, within bound), fail naming the host.
//
// unmet is why cfg is no break on this build ("" when it is one), naming
// it as what ("the config with a syntax error"); note says what showed
// it is one. err is harp failing to write or check it.
func (n *Node) CannotLoad(ctx context.Context, path, cfg, what, failsOnBind string, bound time.Duration) (unmet, note string, err error) {
	ok, out, err := n.WriteCheck(ctx, path, cfg)
	switch {
	case err != nil:
		return "", "", err
	case failsOnBind != "" && !ok:
		return fmt.Sprintf("haproxy -c refuses %s on this build, which must fail only when started: %s", what, text.FirstAlert(out)), "", nil
	case failsOnBind != "":
		// Started alone, the config fails on that bind (a node that could
		// take the address would start a worker).
		code, out, err := n.StartAlone(ctx, path, bound)
		if err != nil || code == 0 || !strings.Contains(out, failsOnBind) {
			return fmt.Sprintf("%s, started alone, did not fail on that bind (exit %d, %v): %s", what, code, err, text.FirstAlert(out)), "", nil
		}
		return "", "haproxy -c accepts the broken config, and started alone it fails on its bind: " + text.FirstAlert(out), nil
	case ok:
		return fmt.Sprintf("haproxy -c accepts %s on this build: it is no break here", what), "", nil
	}
	return "", "haproxy -c refuses the broken config: " + text.FirstAlert(out), nil
}
