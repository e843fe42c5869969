// Package regtest writes harp's upstream-fix cases as HAProxy reg-tests:
// VTest `.vtc` files in upstream's style (one file, config inline,
// #REGTEST_TYPE=bug, version limits as `feature cmd`), that upstream's
// runner (VTest) or its ancestor (Debian's varnishtest) runs against any
// haproxy binary. A case VTest cannot express is refused with its reason.
// Pure: case files and the shared template's text in, text out.
package regtest

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/harp-project/harp/harness/core/fixcase"
)

// Test is one exported reg-test.
type Test struct {
	Check string `json:"check"` // suite/case, as harp names the check
	Kind  string `json:"kind"`  // how the case reaches HAProxy (fixcase.Kind)
	Fix   string `json:"fix"`   // the upstream commit
	File  string `json:"file"`  // under reg-tests/: <dir>/<name>.vtc
	Text  string `json:"-"`
}

// Refused is a case that is not exported, and why.
type Refused struct {
	Check  string `json:"check"`
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}

// refusal is Export's error for a case VTest cannot express.
type refusal struct{ reason string }

func (r refusal) Error() string { return r.reason }

func refuse(format string, a ...any) error { return refusal{fmt.Sprintf(format, a...)} }

// Reason is why err refused a case ("" when err is not a refusal).
func Reason(err error) string {
	if r, ok := err.(refusal); ok {
		return r.reason
	}
	return ""
}

// Dir is the reg-tests folder of each harp suite's cases, by upstream's
// areas: master-CLI exchanges go to mcli, command lines and config checks
// to startup.
func Dir(suite string, c fixcase.Case) string {
	switch {
	case c.Kind == fixcase.Master:
		return "mcli"
	case c.Kind == fixcase.Exec || c.Kind == fixcase.Check:
		return "startup"
	}
	return map[string]string{"upstream-fixes-cli": "cli", "upstream-fixes-tables": "stick-table",
		"upstream-fixes-listeners": "listeners", "upstream-fixes-peers": "peers"}[suite]
}

// Export writes case c of suite as a reg-test, its config the case's own
// sections (its file's `section` blocks).
func Export(suite string, c fixcase.Case) (Test, error) {
	t := Test{Check: suite + "/" + c.ID, Kind: string(c.Kind), Fix: c.Fix, File: Dir(suite, c) + "/" + strings.ReplaceAll(c.ID, "-", "_") + ".vtc"}
	if err := exportable(c); err != nil {
		return t, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "varnishtest %s\n\n", quote(prose(suite+": "+c.Does)))
	comment(&b, prose(fmt.Sprintf("Upstream fix %s. What the test does: %s. Expected: %s. A failure means: %s.", c.Fix, c.Does, c.Expects, c.Rule.Why)))
	comment(&b, fmt.Sprintf("Exported by harp from its check %s (fixtures/upstream-fixes); `harp reg-tests export` writes it again.", t.Check))
	b.WriteString("#REGTEST_TYPE=bug\n\n")
	b.WriteString("feature ignore_unknown_macro\n")
	for _, f := range features(c) {
		fmt.Fprintf(&b, "feature cmd %s\n", quote(f))
	}
	b.WriteString("\n")
	var err error
	switch c.Kind {
	case fixcase.Stats, fixcase.Master, fixcase.Connect:
		err = exchanges(&b, c)
	case fixcase.Check:
		err = checkConfig(&b, c)
	case fixcase.Exec:
		err = command(&b, c)
	}
	t.Text = b.String()
	return t, err
}

// exportable refuses what VTest's haproxy driver cannot do.
func exportable(c fixcase.Case) error {
	switch {
	case c.Rule.Go:
		return refuse("judged by Go code that knows the case (`want go`), not by terms on one answer")
	case c.Kind == fixcase.Steps:
		return refuse("several exchanges composed by Go code (counts before and after, a connection's fate over time)")
	case c.Kind == fixcase.PeerSession, c.Kind == fixcase.Peer:
		return refuse("raw peers-protocol bytes and replies: VTest has no peers client")
	case c.Kind == fixcase.HTTP:
		return refuse("a request then a header judged by Go code: exportable with VTest's client, not written yet")
	case c.KeepOpen:
		return refuse("the client never ends its side: VTest's CLI always half-closes after its send")
	case c.Abort:
		return refuse("the client closes without reading: VTest's CLI always reads the answer")
	case c.Silent:
		return refuse("the answer may be no byte while HAProxy keeps the connection open: VTest's CLI reads until HAProxy closes")
	case (c.Kind == fixcase.Stats || c.Kind == fixcase.Master) && strings.HasPrefix(c.Send, "prompt\n"):
		return refuse("interactive (prompt) mode: varnishtest's CLI timed out reading such a session on every build tried, where harp reads HAProxy's whole answer")
	case c.Leaks:
		return refuse("run once with LeakSanitizer on (ASAN_OPTIONS for that run only): VTest sets no environment per run")
	case c.Times > 1:
		return refuse("%d connections one after another: not written yet", c.Times)
	case c.Port != "":
		return refuse("sent on a user-level stats socket: VTest's CLI speaks on its own admin socket")
	case c.Then != "" && !c.ThenFinal:
		return refuse("the state after (%s) is polled until it settles: VTest has no poll", c.Then)
	case c.Node != "":
		return refuse("runs on a node of its own with fixed ports: not written yet")
	case strings.ContainsRune(c.Send, 0):
		return refuse("sends a NUL byte, which VTest's send cannot carry")
	case (c.Kind == fixcase.Stats || c.Kind == fixcase.Master) && !strings.HasSuffix(c.Send, "\n"):
		return refuse("sends a command without its line feed: VTest's send always adds one")
	case c.Kind == fixcase.Exec && c.Config == "" && slices.ContainsFunc(c.Args, func(a string) bool { return strings.Contains(a, "{cfg}") }):
		return refuse("names a config it does not give")
	}
	for _, t := range c.Rule.Terms {
		if c.Kind == fixcase.Connect && t.Op != "anything" {
			return refuse("a connect case judged by its answer (%s): harp's answer is its own word", t.Op)
		}
		if strings.HasPrefix(t.Op, "then-") && c.Then == "" {
			return refuse("a then term without a then command")
		}
	}
	return nil
}

// features are the case's version limits and capabilities as commands
// that exit 0 where the test applies (VTest skips it elsewhere).
func features(c fixcase.Case) []string {
	var fs []string
	cc := func(cond string) { fs = append(fs, "$HAPROXY_PROGRAM -cc '"+cond+"'") }
	// -dev0: a case's X.Y is its major.minor, development builds of X.Y
	// included (harp's rule); HAProxy's version_atleast(X.Y) alone is false
	// on X.Y-devN.
	if c.Since != "" {
		cc("version_atleast(" + c.Since + "-dev0)")
	}
	if c.Until != "" {
		cc("!version_atleast(" + c.Until + "-dev0)")
	}
	for _, n := range c.Needs {
		switch n {
		case "dump-libs":
			cc("feature(DL)")
		case "threads":
			cc("feature(THREAD)")
		case "openssl":
			cc("feature(OPENSSL)")
		case "lua":
			cc("feature(LUA)")
		case "pcre":
			cc("feature(PCRE2) || feature(PCRE)")
		case "asan":
			// No -cc predicate names the sanitizer: -vv's CFLAGS line does.
			fs = append(fs, "$HAPROXY_PROGRAM -vv | grep -q -- -fsanitize=address")
		}
	}
	return fs
}

// exchanges: the case's sections, started in master-worker mode with a
// master CLI, the case's bytes, the state after, and the control: the
// worker still answers.
func exchanges(b *strings.Builder, c fixcase.Case) error {
	// The map files the case names are the test's own, in its tmpdir,
	// with what harp's node holds in them.
	maps := nodeFile.FindAllString(c.Send+" "+c.Then+" "+c.Sections, -1)
	for _, f := range maps {
		if !strings.HasSuffix(f, ".map") {
			return refuse("names %s, a file of harp's node that is not a map", f)
		}
	}
	body, err := sections(c.Sections)
	if err != nil {
		return err
	}
	var port string
	if c.Kind == fixcase.Connect {
		if port, err = c.ReachPort(); err != nil {
			return err
		}
	}
	for _, f := range slices.Compact(slices.Sorted(slices.Values(maps))) {
		fmt.Fprintf(b, "shell {\n    printf '%s\\n' > \"%s\"\n}\n\n", fixcase.MapHolds, inTmpdir(f))
	}
	body = inTmpdirs(body)
	c.Send, c.Then = inTmpdirs(c.Send), inTmpdirs(c.Then)
	// Master-worker with a master CLI, as harp runs every node: what the
	// worker holds (its environment, its sockets) is a worker's of that mode.
	mode := " -W -S"
	fmt.Fprintf(b, "haproxy h1%s -conf {\n    global\n        nbthread 1\n\n    defaults\n        timeout connect 2s\n        timeout client 10s\n        timeout server 10s\n%s} -start\n\n", mode, body)
	now, then := split(c.Rule.Terms)
	cli := "-cli"
	if c.Kind == fixcase.Master {
		cli = "-mcli"
	}
	// As on harp's node, the case starts once the worker answers: a master
	// CLI command that reaches the master while its worker is still
	// starting was seen to get no answer from 3.4.7 (1 run in 24).
	b.WriteString("# The worker is up.\n")
	exchange(b, "-cli", "show info", []fixcase.Term{{Op: "contains", Arg: "Name: HAProxy"}})
	b.WriteString("\n# The case.\n")
	if c.Kind == fixcase.Connect {
		// One connection and a byte, as harp's connect case sends.
		fmt.Fprintf(b, "client c1 -connect ${h1_%s_sock} {\n    send \"x\"\n} -run\n", port)
	} else {
		exchange(b, cli, strings.TrimSuffix(c.Send, "\n"), now)
	}
	if c.Then != "" {
		b.WriteString("\n# The state after.\n")
		exchange(b, "-cli", c.Then, then)
	}
	b.WriteString("\n# Control: the worker still answers.\n")
	exchange(b, "-cli", "show info", []fixcase.Term{{Op: "contains", Arg: "Name: HAProxy"}})
	return nil
}

func exchange(b *strings.Builder, cli, send string, terms []fixcase.Term) {
	op, re := expect(terms)
	fmt.Fprintf(b, "haproxy h1 %s {\n    send %s\n    expect %s %s\n}\n", cli, quote(send), op, quote(re))
}

// split sorts the terms on the case's answer from those on the answer to
// its Then.
func split(terms []fixcase.Term) (now, then []fixcase.Term) {
	for _, t := range terms {
		if op, ok := strings.CutPrefix(t.Op, "then-"); ok {
			then = append(then, fixcase.Term{Op: op, Arg: t.Arg})
		} else {
			now = append(now, t)
		}
	}
	return now, then
}

// checkConfig: haproxy -c on the case's config, -conf-BAD where the terms
// say only refused, else the exit status and output matched. Not -conf-OK:
// varnishtest's wants "Configuration file is valid", which 3.x builds from
// source do not print (VTest2's wants nothing): the runners would differ.
func checkConfig(b *strings.Builder, c fixcase.Case) error {
	cfg, err := fixcase.CheckConfig(c)
	if err != nil {
		return err
	}
	terms := c.Rule.Terms
	if len(terms) == 1 && terms[0].Op == "not-starts-with" && terms[0].Arg == "exit 0" {
		fmt.Fprintf(b, "haproxy h1 -conf-BAD \"ALERT\" {\n%s}\n", indent(cfg))
		return nil
	}
	// harp's answer to a check: "exit 0" or "refused", a line feed, the output.
	script := fmt.Sprintf("cat >\"${tmpdir}/check.cfg\" <<'HARP_CFG'\n%sHARP_CFG\nout=$(\"$HAPROXY_PROGRAM\" -c -f \"${tmpdir}/check.cfg\" 2>&1) && echo \"exit 0\" || echo refused\nprintf '%%s\\n' \"$out\"\n", cfg)
	shell(b, script, terms)
	return nil
}

// command: the build's haproxy with the case's arguments ({cfg}: its
// config, written first), its exit status and output matched as harp's
// answer ("exit N", a line feed, the output).
func command(b *strings.Builder, c fixcase.Case) error {
	var script strings.Builder
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = strings.ReplaceAll(a, "{cfg}", "\"${tmpdir}/case.cfg\"")
	}
	if c.Config != "" {
		fmt.Fprintf(&script, "cat >\"${tmpdir}/case.cfg\" <<'HARP_CFG'\n%sHARP_CFG\n", c.Config)
	}
	// VTest runs the script with sh -e: the status is taken by ||.
	fmt.Fprintf(&script, "code=0\nout=$(\"$HAPROXY_PROGRAM\" %s 2>&1 </dev/null) || code=$?\necho \"exit $code\"\nprintf '%%s\\n' \"$out\"\n", strings.Join(args, " "))
	shell(b, script.String(), c.Rule.Terms)
	return nil
}

// shell runs script and matches its output: shell -match has no
// negation, so the terms are always the lookahead form (all must hold).
func shell(b *strings.Builder, script string, terms []fixcase.Term) {
	re := "\\A"
	for _, t := range terms {
		re += lookahead(t)
	}
	// Not indented: a here-document's end marker must start its line.
	fmt.Fprintf(b, "shell -match %s {\n%s}\n", quote(re), script)
}

// expect is the terms as one VTest expectation: a plain regex (~ or !~)
// for one term, else lookaheads anchored at the answer's start (all must
// hold). PCRE, as VTest compiles it.
func expect(terms []fixcase.Term) (op, re string) {
	if len(terms) == 1 {
		t := terms[0]
		q := regexp.QuoteMeta(t.Arg)
		switch t.Op {
		case "contains":
			return "~", q
		case "lacks":
			return "!~", q
		case "starts-with":
			return "~", "\\A" + q
		case "not-starts-with":
			return "!~", "\\A" + q
		case "matches":
			return "~", t.Arg
		case "no-line":
			return "!~", "(?m)^[ \\t\\r]*" + q + "[ \\t\\r]*$"
		}
	}
	re = "\\A"
	for _, t := range terms {
		re += lookahead(t)
	}
	return "~", re
}

// lookahead is one term as a zero-width test at the answer's start.
func lookahead(t fixcase.Term) string {
	q := regexp.QuoteMeta(t.Arg)
	switch t.Op {
	case "anything":
		return ""
	case "is":
		return "(?=" + q + "\\z)"
	case "contains":
		return "(?=[\\s\\S]*?" + q + ")"
	case "lacks":
		return "(?![\\s\\S]*?" + q + ")"
	case "starts-with":
		return "(?=" + q + ")"
	case "not-starts-with":
		return "(?!" + q + ")"
	case "matches":
		return "(?=[\\s\\S]*?(?:" + t.Arg + "))"
	case "once":
		return "(?=[\\s\\S]*?" + q + ")(?![\\s\\S]*?" + q + "[\\s\\S]*?" + q + ")"
	case "no-line":
		return "(?![\\s\\S]*?(?m:^)[ \\t\\r]*" + q + "[ \\t\\r]*(?m:$))"
	}
	panic("regtest: no term " + t.Op) // fixcase.Parse knows every op
}

// sections are a case's own sections as the test's, its named ports
// VTest's (fd@${name}: VTest opens the socket, ${h1_name_sock} reaches
// it). A peers section is refused: its peers are the node's addresses.
func sections(text string) (string, error) {
	if text == "" {
		return "", nil
	}
	secs, err := fixcase.SplitSections(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	bind := regexp.MustCompile(`"[^"\s]*` + fixcase.PortRef.String() + `"`)
	for _, s := range secs {
		if s.Kind == "peers" {
			return "", refuse("uses peers section %s, whose peers are the node's addresses", s.Name)
		}
		b.WriteString("\n" + indent(bind.ReplaceAllString(s.Text, `"fd@$${$1}"`)))
	}
	return b.String(), nil
}

// nodeFile is a path of harp's node's files.
var nodeFile = regexp.MustCompile(`/etc/harp/[\w.-]+`)

// inTmpdir is a file of harp's node as the test's own.
func inTmpdir(f string) string { return "${tmpdir}/" + strings.TrimPrefix(f, "/etc/harp/") }

// inTmpdirs puts every file of harp's node named in s in the test's tmpdir.
func inTmpdirs(s string) string {
	return nodeFile.ReplaceAllStringFunc(s, inTmpdir)
}

// prose is words for a title or a comment, where VTest expands macros
// before it reads the first command: ${NAME} is written $NAME.
func prose(s string) string { return regexp.MustCompile(`\$\{(\w+)\}`).ReplaceAllString(s, "$$$1") }

// indent puts a config or script in a VTest block, four spaces in.
func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.TrimSpace(l) == "" {
			if l != "" {
				b.WriteString("\n")
			}
			continue
		}
		b.WriteString("    " + l)
	}
	return b.String()
}

// comment writes text as # lines of at most 100 columns.
func comment(b *strings.Builder, text string) {
	line := "#"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 100 && line != "#" {
			b.WriteString(line + "\n")
			line = "#"
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
}

// quote is s as a VTest string: double quotes, with backslash, quote and
// control characters escaped (VTest's own escapes: \n \r \t \xHH).
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString("\\n")
		case c == '\r':
			b.WriteString("\\r")
		case c == '\t':
			b.WriteString("\\t")
		case c < 0x20 || c >= 0x7f:
			b.WriteString("\\x" + strconv.FormatUint(uint64(c)|0x100, 16)[1:])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
