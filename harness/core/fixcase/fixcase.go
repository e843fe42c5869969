// Package fixcase reads upstream-fix cases, one text file per fixed bug
// (fixtures/upstream-fixes/<area>/<case-id>.case), saying which fix it
// checks, how it reaches HAProxy and what its answer must be; and judges a
// case from what it observed (judge.go). Only the standard library and
// light value packages (verdict, obs, cliout): a suite's judge imports
// it, and `make unit` tests it.
//
// A file is lines of `key value`; blank lines and lines starting with `#`
// are skipped. Values are of four sorts:
//
//   - text: the rest of the line, as written (fix, since, until, order,
//     does, expects, kind, then, port, times, why; apart, a duration);
//   - bytes (send, global, frontend, extra): one or more Go-quoted strings,
//     each optionally followed by *N for N copies, concatenated ({n} in
//     a string is its copy's number, from 1); a key given again appends.
//     So "\n", "\r", "\x00" are a line feed, a carriage return and a NUL,
//     "x"*20000 is 20000 x, and "k{n};"*3 is k1;k2;k3;
//     in send, {try} is the connection's number when times gives several;
//   - words (args, ports, needs): separated by spaces;
//   - blocks (config, node, section): `key {`, then lines taken verbatim,
//     each ending in a line feed, up to a line that is only `}`; section
//     given again appends;
//   - flags (silent, keep-open, direct, abort, then-final, leaks): the key alone.
//
// `needs` names what the build must have for the case to apply (a
// capability of cliout.Capabilities, read from its -vv): where it lacks
// one, the case is not applicable, never held and never failed.
//
// A case carries its config: `section` holds the top-level sections it
// reaches on the suite's shared node (its frontend, tables, peers
// section), added to the part every case shares (shared.cfg) and to the
// other cases' sections; `node` is a whole config for a node of its own.
// Both name their ports: `bind "0.0.0.0:${PORT_name}"`, HAProxy's own
// syntax for an environment variable, which harp replaces with a port
// number (Ports) and an exported reg-test with VTest's fd@${name}.
//
// `want OP [ARG]` (ARG Go-quoted) adds a term the answer must meet; all
// must. `why` says what a failure means; {answer} in it is the answer.
// `want go` leaves the judging to Go code that knows the case.
package fixcase

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/config"
)

// Kind is how a case reaches HAProxy.
type Kind string

const (
	Stats       Kind = "stats"        // bytes on the admin stats socket, read until it closes
	Master      Kind = "master"       // bytes on the master CLI
	Check       Kind = "check"        // a config checked with haproxy -c
	Connect     Kind = "connect"      // a TCP connection to the port of the case's sections
	HTTP        Kind = "http"         // Send on the stats socket, then a request to the case's port: its x-g header
	Peer        Kind = "peer"         // a connection to the case's peers bind that sends nothing and half-closes
	Exec        Kind = "exec"         // the build's haproxy run with Args ({cfg}: Config written to a file)
	PeerSession Kind = "peer-session" // harp's peers client, as its peers section's remote peer, runs the case's Go session
	Steps       Kind = "steps"        // the case's Go drive runs several exchanges
)

var kinds = []Kind{Stats, Master, Check, Connect, HTTP, Peer, Exec, PeerSession, Steps}

// ThenMark separates an answer from the answer to the case's Then.
const ThenMark = "\n--- then\n"

// Case is one upstream fix as a black-box check.
type Case struct {
	ID    string // the file's name without .case
	Order int    // where it runs among the cases
	Fix   string // the upstream commit
	Since string // the first major.minor that has what the case uses ("": every)
	Until string // the first major.minor that no longer has it ("": none)
	// Does and Expects say in words what the case sends and expects.
	Does    string
	Expects string

	Kind Kind
	Send string // the bytes sent (Stats, Master, HTTP)
	// Global, Frontend and Extra: a Check config's global lines, frontend
	// lines and further sections.
	Global, Frontend, Extra string
	// Silent: no byte is an answer for this case: HAProxy closing without
	// one (on a direct connection, no proxy between), or, on a stats
	// socket, no byte while HAProxy answered a control exchange sent after
	// the case's bytes (the master's quiet proves nothing of a command it
	// relays). Elsewhere either is harp's failure, never an answer.
	Silent bool
	// KeepOpen: the client never ends its side.
	KeepOpen bool
	// Times: that many connections, one after another (0: one); {try} in
	// Send is each one's number, from 1.
	Times int
	// Apart: the pause between two of those connections (a racy trigger
	// tried at times a burst of load cannot all cover).
	Apart time.Duration
	// Abort: the client closes right after sending, reading nothing.
	Abort bool
	// Direct: connect to the node's own address, not Docker's port proxy.
	Direct bool
	Then   string // a stats command whose answer is appended after ThenMark
	// ThenFinal: the state Then reads cannot move toward the expectation
	// once read (an entry of a table that expires in 1 h): the first read
	// decides, with no poll for the state to settle.
	ThenFinal bool
	Port      string // the stats socket written to ("": the admin one)
	// Sections: the top-level config sections the case reaches on the
	// shared node, ports named (${PORT_name}).
	Sections string
	// Node: a whole config for a node of the case's own, ports named.
	Node string
	// Args of an Exec case ({cfg} is the path Config is written to); of
	// another case with a node of its own, more arguments for that node's
	// haproxy (-dMfail).
	Args   []string
	Config string
	// Needs: capabilities the build must have (cliout.Capabilities).
	Needs []string
	// Leaks: an Exec case on the asan flavour run with LeakSanitizer on
	// (off on every node: a leak at exit is a bug only where a case says
	// so), its report then part of the answer.
	Leaks bool

	Rule Rule
}

// Load reads every *.case file in dir, in their Order (each unique).
func Load(fsys fs.FS, dir string) ([]Case, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.case"))
	if err != nil {
		return nil, err
	}
	var cs []Case
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		c, err := Parse(name, data)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b Case) int { return a.Order - b.Order })
	for i := 1; i < len(cs); i++ {
		if cs[i].Order == cs[i-1].Order {
			return nil, fmt.Errorf("%s and %s: both order %d", cs[i-1].ID, cs[i].ID, cs[i].Order)
		}
	}
	return cs, nil
}

// Parse reads one case file; name (its path) gives the ID and the
// errors' place.
func Parse(name string, data []byte) (Case, error) {
	c := Case{ID: strings.TrimSuffix(path.Base(name), ".case")}
	p := parser{name: name, c: &c, seen: map[string]bool{}}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		p.line = i + 1
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		key, val, _ := strings.Cut(l, " ")
		val = strings.TrimLeft(val, " ")
		if val == "{" {
			end := slices.Index(lines[i+1:], "}")
			if end < 0 {
				return c, p.errorf("block %s never ends (no line `}`)", key)
			}
			val = strings.Join(lines[i+1:i+1+end], "\n") + "\n"
			i += end + 1
		}
		if err := p.set(key, val); err != nil {
			return c, err
		}
	}
	p.line = len(lines)
	return c, p.done()
}

type parser struct {
	name string
	line int
	c    *Case
	seen map[string]bool
}

func (p *parser) errorf(format string, a ...any) error {
	return fmt.Errorf("%s:%d: %s", p.name, p.line, fmt.Sprintf(format, a...))
}

func (p *parser) set(key, val string) error {
	c := p.c
	text := map[string]*string{"fix": &c.Fix, "since": &c.Since, "until": &c.Until, "does": &c.Does,
		"expects": &c.Expects, "then": &c.Then, "port": &c.Port, "why": &c.Rule.Why}
	bytes := map[string]*string{"send": &c.Send, "global": &c.Global, "frontend": &c.Frontend, "extra": &c.Extra}
	flags := map[string]*bool{"silent": &c.Silent, "keep-open": &c.KeepOpen, "direct": &c.Direct, "abort": &c.Abort, "then-final": &c.ThenFinal, "leaks": &c.Leaks}
	blocks := map[string]*string{"config": &c.Config, "node": &c.Node, "section": &c.Sections}
	if _, ok := bytes[key]; !ok && key != "want" && key != "section" {
		if p.seen[key] {
			return p.errorf("%s given twice", key)
		}
		p.seen[key] = true
	}
	switch {
	case text[key] != nil:
		*text[key] = val
	case bytes[key] != nil:
		b, err := Bytes(val)
		if err != nil {
			return p.errorf("%s: %v", key, err)
		}
		*bytes[key] += b
	case flags[key] != nil:
		if val != "" {
			return p.errorf("%s is a flag: it takes no value", key)
		}
		*flags[key] = true
	case blocks[key] != nil:
		if !strings.HasSuffix(val, "\n") {
			return p.errorf("%s is a block: `%s {`, its lines, then `}`", key, key)
		}
		if key == "section" {
			if _, err := SplitSections(val); err != nil {
				return p.errorf("section: %v", err)
			}
			if c.Sections != "" {
				c.Sections += "\n"
			}
			c.Sections += val
			break
		}
		*blocks[key] = val
	case key == "order" || key == "times":
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 {
			return p.errorf("%s: %q is not a positive number", key, val)
		}
		if key == "order" {
			c.Order = n
		} else {
			c.Times = n
		}
	case key == "apart":
		d, err := time.ParseDuration(val)
		if err != nil || d <= 0 {
			return p.errorf("apart: %q is not a positive duration", val)
		}
		c.Apart = d
	case key == "kind":
		if !slices.Contains(kinds, Kind(val)) {
			return p.errorf("no kind %q (one of %v)", val, kinds)
		}
		c.Kind = Kind(val)
	case key == "args":
		c.Args = strings.Fields(val)
	case key == "needs":
		c.Needs = strings.Fields(val)
		for _, n := range c.Needs {
			if _, ok := cliout.Capabilities[n]; !ok {
				return p.errorf("needs: no capability %q (one of %v)", n, slices.Sorted(maps.Keys(cliout.Capabilities)))
			}
		}
	case key == "want":
		t, err := parseTerm(val)
		if err != nil {
			return p.errorf("want: %v", err)
		}
		if t.Op == "go" {
			c.Rule.Go = true
		} else {
			c.Rule.Terms = append(c.Rule.Terms, t)
		}
	default:
		return p.errorf("unknown key %q", key)
	}
	return nil
}

func (p *parser) done() error {
	c := p.c
	for _, k := range []string{"fix", "order", "does", "expects", "kind"} {
		if !p.seen[k] {
			return p.errorf("no %s", k)
		}
	}
	switch {
	case c.Rule.Go && (len(c.Rule.Terms) > 0 || c.Rule.Why != ""):
		return p.errorf("want go takes neither other terms nor a why: Go judges the case")
	case !c.Rule.Go && len(c.Rule.Terms) == 0:
		return p.errorf("no want")
	case !c.Rule.Go && c.Rule.Why == "" && c.Rule.Terms[0].Op != "anything":
		return p.errorf("no why")
	case c.Leaks && (c.Kind != Exec || !slices.Contains(c.Needs, "asan")):
		return p.errorf("leaks: only an exec case that needs asan runs with LeakSanitizer on")
	case c.Sections != "" && c.Node != "":
		return p.errorf("section and node: a case runs on the shared node (its sections) or on a node of its own, not both")
	}
	switch c.Kind {
	case Connect, HTTP, Peer, PeerSession:
		if _, err := c.ReachPort(); err != nil {
			return p.errorf("%v", err)
		}
	}
	if c.Kind == PeerSession {
		if _, err := c.Peers(); err != nil {
			return p.errorf("%v", err)
		}
	}
	return nil
}

// Bytes reads a bytes value: Go-quoted strings, each optionally *N ({n}
// in one: the copy's number, from 1).
func Bytes(val string) (string, error) {
	var b strings.Builder
	for rest := strings.TrimSpace(val); rest != ""; rest = strings.TrimLeft(rest, " ") {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil || q[0] != '"' {
			return "", fmt.Errorf("want a double-quoted string at %q", rest)
		}
		s, _ := strconv.Unquote(q)
		rest = rest[len(q):]
		n := 1
		if strings.HasPrefix(rest, "*") {
			digits, after, _ := strings.Cut(rest[1:], " ")
			if n, err = strconv.Atoi(digits); err != nil || n < 1 {
				return "", fmt.Errorf("*%s: not a count", digits)
			}
			rest = after
		}
		for i := 1; i <= n; i++ {
			b.WriteString(strings.ReplaceAll(s, "{n}", strconv.Itoa(i)))
		}
	}
	return b.String(), nil
}

// CheckConfig is a check case's whole config: the template every check
// shares (upstream-fixes-check.cfg.tmpl) with the case's global lines,
// frontend lines and further sections.
func CheckConfig(c Case) (string, error) {
	return config.Render("upstream-fixes-check.cfg.tmpl", map[string]string{"Global": c.Global, "Frontend": c.Frontend, "Extra": c.Extra})
}

// MapHolds is what the shared node's map file (/etc/harp/m.map) holds
// before any case: harp's node and an exported reg-test both start so.
const MapHolds = "k0 v0"
