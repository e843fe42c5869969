// Package fixrun runs upstream-fix cases (harness/core/fixcase) as a suite: one
// shared node (the part every case shares, fixtures/upstream-fixes/
// shared.cfg, and each case's sections) or a node of the case's own, each case reached by its kind (reach.go), and after each
// whether the worker still answers. A suite of fixes is an Area: its
// words, its cases, and Go code only for the cases that need some.
package fixrun

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/harp-project/harp/fixtures"
	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/fixcase"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peers"
	"github.com/harp-project/harp/harness/live/suiteenv"
)

// Drive runs a steps case: several exchanges (counts before and after, a
// connection's fate over time) composed into one answer; an error is
// harp's failure to observe.
type Drive func(context.Context, *node.Node) (string, error)

// Session runs a peer-session case on a session harp's peers client
// completed as the remote peer `remote` of section p2.
type Session func(ctx context.Context, c *peers.Conn, tcp *net.TCPConn, remote Remote) (string, error)

// Remote reads harp's peer as the node's current worker shows it (show
// peers): a session that ends at what HAProxy shows of it.
type Remote func(context.Context) (cliout.Peer, error)

// Area is a suite of upstream fixes: the scenario's words, its cases (each
// with its judge), and the Go code of its steps and peer-session cases.
type Area struct {
	ID, Upstream, Title, Summary string
	Labels                       []string
	Cases                        []fixcase.Judged
	Drives                       map[string]Drive
	Sessions                     map[string]Session
	Settles                      map[string]Settle
}

// Settle is when the state a case's then reads can no longer move toward
// its expectation, though the expectation does not hold: the then poll
// ends at the first reading begun after Final said so, instead of at
// AnswerWait. Why says it in the case's step, with the reason a correct
// build cannot move the state afterwards.
type Settle struct {
	Why   string
	Final func(context.Context, *node.Node) (bool, error)
}

// Suite is the area's suite, its Run, and its steps as users read
// them: the shared node, every case in its words, the survival rule. An
// area whose Go code and cases do not match panics (at registration, so
// every test that imports the suite fails).
func Suite(a Area) *suite.Suite {
	if err := a.check(); err != nil {
		panic(fmt.Sprintf("suite %s: %v", a.ID, err))
	}
	return &suite.Suite{
		ID: a.ID, Upstream: a.Upstream, Title: a.Title, Summary: a.Summary, Labels: a.Labels,
		Trials: len(a.Cases),
		Cases:  len(a.Cases),
		Noun:   "cases",
		Params: []suite.Param{a.casesParam()},
		StepsFor: func(suite.Values) []string {
			s := []string{setup}
			for _, c := range a.Cases {
				line := fmt.Sprintf("Case `%s` (upstream %s", c.ID, c.Fix)
				if c.Since != "" {
					line += ", from HAProxy " + c.Since
				}
				if c.Until != "" {
					line += ", before HAProxy " + c.Until
				}
				for _, need := range c.Needs {
					line += ", on a build with " + cliout.Capabilities[need]
				}
				settle := ""
				if st, ok := a.Settles[c.ID]; ok {
					settle = "; the state after is final once " + st.Why
				}
				s = append(s, line+"): "+c.Does+"; expected: "+c.Expects+settle+sectionsOf(c.Case)+".")
			}
			return append(s, rules, "After each case the worker must still answer `show info` within 10s. One that does not fails the case when the master logged its death (the node is then started again for the next case); without that log line the case is INCONCLUSIVE.")
		},
		Run: a.run,
	}
}

// CasesParam names the cases a run is limited to: the others are not
// applicable there. A bisect whose oracle is one case's check sets it to
// that case, so that each step runs that case alone.
const CasesParam = "CASES"

func (a Area) casesParam() suite.Param {
	return suite.Text(CasesParam, "", "only these cases (ids, comma-separated; empty: every case); the others are not applicable in the run", func(v string) error {
		for _, id := range strings.Split(v, ",") {
			if !slices.ContainsFunc(a.Cases, func(c fixcase.Judged) bool { return c.ID == strings.TrimSpace(id) }) {
				return fmt.Errorf("%s is no case of %s", strings.TrimSpace(id), a.ID)
			}
		}
		return nil
	})
}

// selected says why a case is left out of the run ("" when it runs).
func selected(env *suiteenv.Env, id string) string {
	if !env.Params.Has(CasesParam) || env.Params.String(CasesParam) == "" {
		return ""
	}
	for _, want := range strings.Split(env.Params.String(CasesParam), ",") {
		if strings.TrimSpace(want) == id {
			return ""
		}
	}
	return fmt.Sprintf("%s is not among %s=%s", id, CasesParam, env.Params.String(CasesParam))
}

// Unselected says whether a case's not-applicable reason is only that
// the run left it out (CASES): nothing about the build, so no capture.
func Unselected(skip string) bool { return strings.Contains(skip, " is not among "+CasesParam+"=") }

// check: every steps case has its drive and every peer-session case its
// session, and each drive and session has its case.
func (a Area) check() error {
	ids := map[string]bool{}
	for _, c := range a.Cases {
		ids[c.ID] = true
		_, drive := a.Drives[c.ID]
		_, session := a.Sessions[c.ID]
		if drive != (c.Kind == fixcase.Steps) || session != (c.Kind == fixcase.PeerSession) {
			return fmt.Errorf("case %s (kind %s): a drive %v, a session %v", c.ID, c.Kind, drive, session)
		}
	}
	for id := range a.Settles {
		for _, c := range a.Cases {
			if c.ID == id && c.Then == "" {
				return fmt.Errorf("case %s: a settle rule, and no then to end", id)
			}
		}
	}
	for _, m := range []map[string]bool{keys(a.Drives), keys(a.Sessions), keys(a.Settles)} {
		for id := range m {
			if !ids[id] {
				return fmt.Errorf("Go code for %s, which is none of the suite's cases", id)
			}
		}
	}
	return nil
}

func keys[V any](m map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// setup says what the shared node holds; each case's step names its own
// sections, and the run's report has the whole config.
const setup = "Setup: one node holding the part every case shares (fixtures/upstream-fixes/shared.cfg: nbthread 1, localpeer harp, an admin stats socket and one at level user) and the sections of every case of the suite, each named in its case's step; map " + mapFile + " holds " + fixcase.MapHolds + ". A case on \"a node of its own\" starts one with its whole config (in the run's report) and leaves the shared node alone."

const mapFile = "/etc/harp/m.map"

// Port is the container port of a named port of the cases' configs
// (${PORT_name}): Go code that reaches a case's frontend asks by name.
// Every suite numbers them alike (fixcase.Number over every case).
func Port(name string) string {
	ports, err := portNumbers()
	if err != nil {
		panic(fmt.Sprintf("fixrun: the upstream-fixes cases: %v", err))
	}
	n, ok := ports[name]
	if !ok {
		panic(fmt.Sprintf("fixrun: no case names port %s", name))
	}
	return fmt.Sprintf("%d/tcp", n)
}

// firstPort: the named ports are numbered from here, below the stats
// and master sockets (9997-9999).
const firstPort = 8080

var portNumbers = sync.OnceValues(func() (map[string]int, error) {
	dirs, err := fs.ReadDir(fixtures.UpstreamFixes, "upstream-fixes")
	if err != nil {
		return nil, err
	}
	var all []fixcase.Case
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		cs, err := fixcase.Load(fixtures.UpstreamFixes, path.Join("upstream-fixes", d.Name()))
		if err != nil {
			return nil, err
		}
		all = append(all, cs...)
	}
	return fixcase.Number(all, firstPort), nil
})

// sectionsOf names a case's sections for its step.
func sectionsOf(c fixcase.Case) string {
	secs, err := fixcase.SplitSections(c.Sections)
	if err != nil || c.Sections == "" {
		return ""
	}
	var keys []string
	for _, s := range secs {
		keys = append(keys, "`"+s.Key()+"`")
	}
	return "; its sections: " + strings.Join(keys, ", ")
}

// rules: what counts as HAProxy's answer, in the steps users read.
const rules = "An answer is HAProxy's only when it is whole: bytes on the node's own address (no proxy between) up to HAProxy's close. Harp's failures are unknown, never an answer: a dial or a write that failed, no byte by harp's 10s deadline, an answer cut by it, a close without a byte where the case expects words, a setup (a `set table` before the trigger) that does not read back, output the case's judge cannot parse. A case whose answer may be no byte (`silent`) takes HAProxy's close without one, or its silence while it answered a control exchange (`show info`, or `show proc` on the master CLI) sent after the case's bytes. A case too old or too new for the build, or needing a capability its `haproxy -vv` lacks, is not applicable: held by none. `--trials N` runs every case N times; a run where no case applies is INCONCLUSIVE."

func (a Area) run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	cfg, ports, err := a.nodeConfig()
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, unmet, err := env.StartNode(ctx, node.Options{Config: cfg, Ports: append(ports, userPort), Files: map[string]string{mapFile: fixcase.MapHolds + "\n"}}, 1)
	if n == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		return a.trial(ctx, env, n, t, a.Cases[(t.N-1)%len(a.Cases)])
	})
}

// nodeConfig is the shared node's: the shared part and the cases'
// sections, ports numbered.
func (a Area) nodeConfig() (string, []string, error) {
	ports, err := portNumbers()
	if err != nil {
		return "", nil, err
	}
	cases := make([]fixcase.Case, len(a.Cases))
	for i, c := range a.Cases {
		cases[i] = c.Case
	}
	return fixcase.NodeConfig(fixtures.UpstreamFixesShared, cases, ports)
}

// trial runs one case: not applicable to a build too old or too new for
// it, or lacking what it needs; else its answer, then whether the worker
// still answers, and a death only when the master logged it (the node is
// then started again).
func (a Area) trial(ctx context.Context, env *suiteenv.Env, n *node.Node, t *verdict.Trial, c fixcase.Judged) error {
	f := &fixcase.Facts{Case: c.ID, Fix: c.Fix}
	t.Evidence = f
	defer func() {
		t.Checks, t.Violation, t.Unmet = fixcase.Judge(a.Cases, *f)
		t.NotApplicable = f.Skip
	}()
	if f.Skip = selected(env, c.ID); f.Skip != "" {
		return nil
	}
	if f.Skip = c.NotApplicable(env.Image.Version, env.Image.VV); f.Skip != "" {
		return nil
	}
	if c.Node != "" {
		own, err := ownNode(ctx, env, c)
		if err != nil {
			f.Answer = obs.Failure[string]("%v", err)
			return nil
		}
		defer env.StopNode(ctx, own) // its crashes kept first
		n = own
	}
	before, err := n.Exits(ctx)
	if err != nil {
		f.Answer = obs.Failure[string]("reading the master's log before the case: %v", err)
		return nil
	}
	exits := len(before)
	var skip string
	if f.Answer, skip = a.do(ctx, n, c); skip != "" {
		f.Skip = fmt.Sprintf("%s: %s", c.ID, skip)
		t.Notef("%s: not applicable: %s", c.ID, skip)
		return nil
	}
	t.Notef("%s: %s", c.ID, obs.Text(f.Answer, OneLine))
	if !f.Answer.Known() && masterGone(ctx, n) {
		// HAProxy ended the exchange without an answer because its master
		// was dying (an asan build's master prints its report, then exits,
		// while the worker still answers for a moment).
		me, _ := n.MasterExit(ctx).Get()
		if n.DiedSince(ctx, exits, time.Second) {
			// A master ends when its worker dies: the worker's death it is.
			me = obs.Exit{Process: "worker"}
		}
		f.Died = obs.Opt(obs.Value(me))
		t.Notef("%s: the master is gone (exit %d; the %s died)", c.ID, me.Code, me.Process)
		if c.Node == "" {
			if err := n.Restart(ctx, 30*time.Second); err != nil {
				return fmt.Errorf("restarting the node after %s: %w", c.ID, err)
			}
		}
		return nil
	}
	if n.Alive(ctx, 10*time.Second) {
		return nil
	}
	// No answer is not a death: the master's log must say a worker
	// exited since the case began. A death is the case's finding even
	// where harp could not finish reading the case (it died under it).
	died := n.DiedSince(ctx, exits, 10*time.Second)
	if died {
		f.Died = obs.Opt(obs.Value(obs.Exit{Process: "worker"}))
	} else if me, ok := n.MasterExit(ctx).Get(); ok && me.Process == "master" {
		// The master itself is gone (a master CLI command it parses; an
		// asan build aborts it, as PID 1 with exit code 1): nothing in a
		// case stops it, so its end is the answer.
		f.Died, died = obs.Opt(obs.Value(me)), true
	} else if f.Answer.Known() {
		f.Answer = obs.Failure[string]("the worker answered no show info within 10s after the case (its answer was %q), and no worker exit was logged", OneLine(f.Answer.Value))
	}
	if c.Node != "" {
		t.Notef("%s: the worker of the case's own node no longer answers (died: %v)", c.ID, died)
		return nil
	}
	t.Notef("%s: the worker no longer answers (died: %v); starting the node again", c.ID, died)
	if err := n.Restart(ctx, 30*time.Second); err != nil {
		return fmt.Errorf("restarting the node after %s: %w", c.ID, err)
	}
	return nil
}

// masterGone polls, for at most 5 s, whether the node's master has
// exited: asked only when a case got no answer, so that a master that
// died under it is its answer and not an unknown.
func masterGone(ctx context.Context, n *node.Node) bool {
	gone := false
	node.Poll(ctx, 5*time.Second, 200*time.Millisecond, func() (bool, error) {
		me, ok := n.MasterExit(ctx).Get()
		gone = ok && me.Process == "master"
		return gone, nil
	})
	return gone
}

// ownNode starts the case's own node. A config this build refuses is
// harp's error, never HAProxy's answer: the case's Since names what the
// config needs.
func ownNode(ctx context.Context, env *suiteenv.Env, c fixcase.Judged) (*node.Node, error) {
	numbers, err := portNumbers()
	if err != nil {
		return nil, err
	}
	cfg, ports, err := fixcase.WithPorts(c.Node, numbers)
	if err != nil {
		return nil, err
	}
	o := node.Options{Name: "node-upstream-fixes-" + c.ID, Config: cfg, Ports: ports}
	if c.Kind != fixcase.Exec {
		o.Args = c.Args // its haproxy's own arguments (an exec case's are for the run it makes)
	}
	own, unmet, err := env.StartNode(ctx, o, 0)
	switch {
	case err != nil:
		return nil, fmt.Errorf("starting the case's own node: %w", err)
	case own == nil:
		return nil, fmt.Errorf("starting the case's own node: %s", unmet)
	}
	return own, nil
}

// OneLine is s on one line, cut at 200 bytes: an answer in a note.
func OneLine(s string) string { return text.OneLine(s, 200) }
