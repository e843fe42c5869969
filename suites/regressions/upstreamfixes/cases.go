package upstreamfixes

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/peers"
	"github.com/harp-project/harp/suites/regressions/upstreamfixes/judge"
)

// The cases: how each upstream fix reaches HAProxy (what its answer must
// be is the judge package's).

// config is a whole config for a Check case: lines go in a frontend.
const checkConfig = `global
    nbthread 1
%s
defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s

frontend fe
    bind 127.0.0.1:18080
%s
    http-request return status 200

backend t
    stick-table type ip size 1k expire 1m store gpc0,gpt0

backend tg
    stick-table type ip size 1k expire 1m store gpc(1)
%s`

// CheckConfig is a Check case's whole config.
func CheckConfig(c Case) string { return fmt.Sprintf(checkConfig, c.Global, c.Send, c.Extra) }

// deprecatedOK lets 3.1 and later parse a program section (3.0 knows the
// keyword; older builds skip it).
const deprecatedOK = ".if version_atleast(3.0-dev6)\nglobal\n    expose-deprecated-directives\n.endif\n"

// unbindable is the control config with its one bind on an address no
// host has: it parses but cannot start, so a master-worker start prints
// what startup prints, then ends by itself.
var unbindable = strings.Replace(CheckConfig(Case{}), "bind 127.0.0.1:18080", "bind 192.0.2.1:18080", 1)

// Cases in the order they run (judge.Cases), each with how it reaches
// HAProxy.
var Cases = func() []Case {
	var cs []Case
	for _, c := range judge.Cases {
		r, ok := oneExchange[c.ID]
		if !ok {
			r = stepCases[c.ID]
		}
		cs = append(cs, Case{c, r})
	}
	return cs
}()

// How each case of one exchange reaches HAProxy (what its answer must be
// is judge's oneExchange).
var oneExchange = map[string]Reach{
	"cli-empty-line-ignored":                   {Kind: Stats, Send: "\n"},
	"cli-too-many-args-refused":                {Kind: Stats, Send: "show info" + strings.Repeat(" x", 70) + "\n"},
	"cli-too-big-command-reported":             {Kind: Stats, Silent: true, KeepOpen: true, Send: strings.Repeat("x", 20000)},
	"cli-set-table-invalid-ip-refused":         {Kind: Stats, Send: "set table tip key foo data.gpc0 1\n", Then: "show table tip"},
	"cli-anon-global-key":                      {Kind: Stats, Send: "set anon global-key 12345\n"},
	"cli-env-without-sockpairs":                {Kind: Stats, Send: "show env HAPROXY_CLI; show env HAPROXY_MASTER_CLI\n"},
	"cli-map-payload-crlf":                     {Kind: Stats, Send: "add map " + mapFile + " <<\nk1 v1\r\nk2 v2\r\n\n", Then: "show map " + mapFile},
	"cli-immediate-abort-released":             {Kind: Stats, Direct: true, Send: "", Times: 5, Then: "show sess"},
	"cli-debug-counters-one-line-each":         {Kind: Stats, Send: "debug counters all\n"},
	"cli-pipelined-after-pause":                {Kind: Stats, Send: "show info;\x00show env\n"},
	"cli-help-show-table-argument-optional":    {Kind: Stats, Send: "help\n"},
	"mcli-relative-pid-checked":                {Kind: Master, Send: "@2 show info\n"},
	"mcli-pipelined-after-expert-mode":         {Kind: Master, Send: "expert-mode on; @1 show info\n"},
	"mcli-severity-output-applies":             {Kind: Master, Send: "set severity-output number; @1 show table harp-nosuch\n"},
	"mcli-user-level-kept-through-pid-prefix":  {Kind: Master, Send: "user; @@1 set table tip key 10.9.9.9 data.gpc0 7\n", Then: "show table tip"},
	"cfg-check-with-daemon-reports-errors":     {Kind: Check, Global: "    daemon", Send: "    frobnicate yes"},
	"cfg-stats-bind-process-message":           {Kind: Check, Global: "    stats bind-process 1"},
	"cfg-len-needs-digits":                     {Kind: Check, Extra: "\nbackend lx\n    stick-table type string len 32x size 1k\n"},
	"cfg-tcp-connection-sc-set-gpt":            {Kind: Check, Send: "    tcp-request connection track-sc0 src table t\n    tcp-request connection sc-set-gpt0(0) int(7)"},
	"cfg-tcp-connection-sc-add-gpc":            {Kind: Check, Send: "    tcp-request connection track-sc0 src table tg\n    tcp-request connection sc-add-gpc(0,0) int(3)"},
	"cfg-stick-counters-index":                 {Kind: Check, Global: "    tune.stick-counters 5", Send: "    http-request track-sc4 src table tg\n    http-request sc-add-gpc(0,4) int(1)"},
	"cfg-max-reloads-negative-refused":         {Kind: Check, Global: "    mworker-max-reloads -1"},
	"cfg-sc-inc-gpc-error-names-action":        {Kind: Check, Send: "    http-request track-sc0 src table t\n    http-request sc-inc-gpc2(0)"},
	"cli-64-args-then-next-command":            {Kind: Stats, Send: "show info" + strings.Repeat(" x", 62) + ";show env PATH\n"},
	"cli-env-cfgfiles":                         {Kind: Stats, Send: "show env HAPROXY_CFGFILES\n"},
	"mcli-at-at-prefix-split-line":             {Kind: Master, Send: "@@\x001 show info\n"},
	"mcli-master-uptime-sane":                  {Kind: Master, Send: "show proc\n"},
	"exec-vv-exits-cleanly":                    {Kind: Exec, Args: []string{"-vv"}},
	"exec-check-master-worker":                 {Kind: Exec, Args: []string{"-W", "-c", "-f", "{cfg}"}, Config: unbindable},
	"exec-mworker-libs-dumped-once":            {Kind: Exec, Args: []string{"-W", "-db", "-dL", "-f", "{cfg}"}, Config: unbindable},
	"exec-mworker-keywords-dumped-once":        {Kind: Exec, Args: []string{"-W", "-db", "-dKcli", "-f", "{cfg}"}, Config: unbindable},
	"exec-mworker-pollers-dumped-once":         {Kind: Exec, Args: []string{"-W", "-db", "-V", "-f", "{cfg}"}, Config: unbindable},
	"exec-program-without-command-refused":     {Kind: Exec, Args: []string{"-W", "-c", "-f", "{cfg}"}, Config: deprecatedOK + unbindable + "\nprogram p1\n"},
	"exec-localpeer-set-before-config":         {Kind: Exec, Args: []string{"-L", "harpnode", "-c", "-f", "{cfg}"}, Config: strings.Replace(unbindable, "frontend fe\n", "frontend fe\n.if !streq(\"${HAPROXY_LOCALPEER}\",harpnode)\n    harp-localpeer-was \"${HAPROXY_LOCALPEER}\"\n.endif\n", 1)},
	"cli-partial-command-eof-no-error":         {Kind: Stats, Send: "show info", Silent: true},
	"cli-user-level-refusal-releases-entry":    {Kind: Stats, Port: userPort, Send: "set table texp key harp-user data.gpc0 1\n", Then: "show table texp"},
	"peer-unknown-table-traffic-keeps-session": {Kind: PeerSession, Session: unknownTableOnly},
	"peer-truncated-varint-then-close":         {Kind: PeerSession, Session: truncatedThenClose},
	"http-other-table-counter-by-own-key":      {Kind: HTTP, Send: "set table tstr key a data.gpc0 42\n"},
	"peer-half-closed-connection-closed":       {Kind: Peer},
	"connect-src-inc-gpc-untracked":            {Kind: Connect},
}

// PeerRun is a PeerSession case's established session.
type PeerRun struct {
	C   *peers.Conn
	TCP *net.TCPConn
}

// truncatedThenClose sends an update message whose length varint never
// ends, then half-closes: HAProxy must close its side.
func truncatedThenClose(ctx context.Context, p PeerRun) (string, error) {
	c, tcp := p.C, p.TCP
	if err := c.SendRaw([]byte{peers.ClassStickTable, peers.StktUpdate, 0xf0}); err != nil {
		return "", err
	}
	tcp.CloseWrite()
	select {
	case <-c.Closed():
		if c.ClosedByPeer() {
			return "closed by haproxy", nil
		}
		_, why := c.ClosedAt()
		return "", fmt.Errorf("harp's client ended the session itself: %v", why)
	case <-time.After(answerWait):
		// Neither the fix's close nor the bug's spin (that worker dies):
		// run then finds the worker answering, and this decides nothing.
		return "", fmt.Errorf("the session was still open after %s", answerWait)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// unknownTableOnly sends a definition of a table the node lacks, then one
// update of it a second, for 11 s: two of HAProxy's reconnect checks (5 s
// apart) come in that time, and only the messages can keep the peer alive.
func unknownTableOnly(ctx context.Context, p PeerRun) (string, error) {
	c := p.C
	def := peers.TableDef{ID: 1, Name: "harp-nosuch", KeyType: peers.KeyIPv4, KeyLen: 4, Types: []int{2}, Expire: 60000}
	if err := c.Send(def.Encode()); err != nil {
		return "", err
	}
	t0, last := time.Now(), time.Now()
	for i := 1; i <= 11; i++ {
		// harp's own pace decides nothing: a gap that spans a reconnect
		// check's worth of the 5 s period would let HAProxy cut a session
		// that its messages keep alive on a fixed build too.
		if gap := time.Since(last); gap > 2500*time.Millisecond {
			return "", fmt.Errorf("harp sent nothing for %s between two updates: too slow to judge", gap.Round(100*time.Millisecond))
		}
		last = time.Now()
		m, err := peers.Update{HasID: true, ID: uint32(i), Key: []byte{10, 0, 0, byte(i)}, Values: map[int]peers.Value{2: {Ints: []uint64{1}}}}.Encode(def)
		if err != nil {
			return "", err
		}
		if err := c.SendRaw(m.Encode()); err != nil {
			select {
			case <-c.Closed():
			case <-time.After(time.Second):
			}
		}
		select {
		case <-c.Closed():
			if !c.ClosedByPeer() {
				_, why := c.ClosedAt()
				return "", fmt.Errorf("harp's client ended the session itself: %v", why)
			}
			return fmt.Sprintf("closed by haproxy after %s", time.Since(t0).Round(100*time.Millisecond)), nil
		case <-time.After(time.Second): // the pace of the traffic, not a wait for an outcome
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return fmt.Sprintf("open after %s", time.Since(t0).Round(100*time.Millisecond)), nil
}
