package verdict

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// CrashSuite is the id of the crash row: the one property every build must
// keep whichever suite runs on it, that no HAProxy process (master, worker,
// old worker) dies on a signal, a watchdog abort or an AddressSanitizer
// report.
const CrashSuite = "crash"

// CrashTitle is the crash row's title.
const CrashTitle = "no HAProxy process dies (signal, watchdog, AddressSanitizer), whichever suite runs"

// CrashWatch is what one suite run's crash collection could check: the
// HAProxy nodes whose logs and state it read, and the ones it could not
// (a crash there may have gone unseen).
type CrashWatch struct {
	Nodes  int      `json:"nodes_checked"`
	Failed []string `json:"failed,omitempty"`
}

// Add adds another run's watch to w.
func (w *CrashWatch) Add(o CrashWatch) {
	w.Nodes += o.Nodes
	w.Failed = append(w.Failed, o.Failed...)
}

// CrashVerdict is the crash row of one build, from every crash its suite
// runs met (cs), what their collection could check (w) and how many suite
// runs there were: REPRODUCED when any process died, else INCONCLUSIVE when
// some node could not be checked (or none was), else PASS. violated counts
// the suite runs that met a crash.
func CrashVerdict(cs []Crash, w CrashWatch, runs int) (v Verdict, violated int, reason string) {
	total := w.Nodes + len(w.Failed)
	var failed string
	if len(w.Failed) > 0 {
		failed = fmt.Sprintf("crash collection failed on %d of %d nodes: %s", len(w.Failed), total, strings.Join(w.Failed, "; "))
	}
	if len(cs) > 0 {
		suites := map[string]bool{}
		for _, c := range cs {
			suites[c.Suite] = true
		}
		reason = fmt.Sprintf("%d HAProxy %s died in %d of %d suite runs: %s", len(cs), plural(len(cs), "process", "processes"), len(suites), runs, CrashGroups(cs, true))
		if failed != "" {
			reason += "; " + failed
		}
		return Reproduced, len(suites), reason
	}
	switch {
	case failed != "":
		return Inconclusive, 0, failed
	case total == 0:
		return Inconclusive, 0, fmt.Sprintf("no HAProxy node was checked in %d %s", runs, plural(runs, "suite run", "suite runs"))
	}
	return Pass, 0, fmt.Sprintf("no HAProxy process died in %d %s (%d %s checked)", runs, plural(runs, "suite run", "suite runs"), total, plural(total, "node", "nodes"))
}

// CrashGroups says what died, grouped by signal and signature: "3 old
// workers: Segmentation fault in f <- g (#3517)". withSuites names the
// suites that met each group.
func CrashGroups(cs []Crash, withSuites bool) string {
	type group struct {
		what   string
		kinds  map[string]int
		suites map[string]bool
		first  int
	}
	groups := map[string]*group{}
	for i, c := range cs {
		what := c.Signal
		if c.Signature != "" {
			what += " in " + c.Signature
		} else {
			what += " (no signature: no stack to read)"
		}
		g := groups[what]
		if g == nil {
			g = &group{what: what, kinds: map[string]int{}, suites: map[string]bool{}, first: i}
			groups[what] = g
		}
		g.kinds[c.ProcessKind()]++
		if c.Suite != "" {
			g.suites["#"+c.Suite] = true
		}
	}
	var gs []*group
	for _, g := range groups {
		gs = append(gs, g)
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].first < gs[j].first })
	var parts []string
	for _, g := range gs {
		var kinds []string
		for _, k := range []string{"master", "worker", "old worker"} {
			if n := g.kinds[k]; n > 0 {
				kinds = append(kinds, fmt.Sprintf("%d %s", n, plural(n, k, k+"s")))
			}
		}
		p := strings.Join(kinds, " and ") + ": " + g.what
		if withSuites && len(g.suites) > 0 {
			p += " (" + strings.Join(sortedKeys(g.suites), ", ") + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// WithCrashes adds to a suite's reason that HAProxy crashed during its run
// (the crashes without an AddressSanitizer report: WithMemoryErrors names
// those): whatever the suite concluded about its property, a crash its
// trigger caused must not hide behind a held or an inconclusive read.
func WithCrashes(reason string, cs []Crash) string {
	var plain []Crash
	for _, c := range cs {
		if c.ASan == "" {
			plain = append(plain, c)
		}
	}
	if len(plain) == 0 {
		return reason
	}
	return reason + "; HAProxy crashed (see the crash row): " + CrashGroups(plain, false)
}

// ProcessKind is "master", "worker" or "old worker" ("worker" when not
// recorded).
func (c Crash) ProcessKind() string {
	if c.Process == "" {
		return "worker"
	}
	return c.Process
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SignatureFrames is how many frames a signature names.
const SignatureFrames = 4

// Signature names a crash by the functions of the top frames of its
// crashing thread, normalized so that the same crash reads the same in
// every cell and run: no addresses, arguments, files or lines, no
// compiler clone suffixes (.constprop.0, .isra.0, .part.0, .cold), and none
// of the frames that only deliver it (raise, abort, a signal handler, the
// sanitizer's interceptors). text is gdb's output (harp's, with its marked
// crashing thread, or any `bt`) or an AddressSanitizer report. "" when no
// frame names a function.
func Signature(text string) string {
	frames := crashingStack(text)
	if i := lastIndex(frames, "<signal handler called>"); i >= 0 && i < len(frames)-1 {
		frames = frames[i+1:] // a handler (the watchdog's, a panic's) ran on top of where the thread was
	}
	var names []string
	named := false
	for _, f := range frames {
		if len(names) == 0 && delivery(f) {
			continue
		}
		if f == "<signal handler called>" {
			continue
		}
		f = strings.TrimPrefix(f, "__sanitizer:")
		names = append(names, f)
		named = named || f != "??"
		if len(names) == SignatureFrames {
			break
		}
	}
	if !named {
		return ""
	}
	return strings.Join(names, " <- ")
}

// CrashingThreadMarker heads, in harp's gdb output, the backtrace of the
// thread that received the signal (gdb's current thread in a core).
const CrashingThreadMarker = "== harp: the thread that received the signal (bt full) =="

var (
	gdbFrame    = regexp.MustCompile(`^#(\d+)\s+(?:0x[0-9a-fA-F]+ in )?(<signal handler called>|[^\s(]+)`)
	asanFrame   = regexp.MustCompile(`^\s+#(\d+) 0x[0-9a-fA-F]+(?: in ([^\s(]+))?`)
	gdbThread   = regexp.MustCompile(`^Thread (\d+) `)
	currentInfo = regexp.MustCompile(`^\*\s+(\d+)\s`)
	cloneSuffix = regexp.MustCompile(`(\.(constprop|isra|part|cold|lto_priv)(\.\d+)?)+$`)
)

// crashingStack is the function names of the crashing thread's frames,
// innermost first.
func crashingStack(text string) []string {
	lines := strings.Split(text, "\n")
	if strings.Contains(text, "==ERROR: AddressSanitizer") || strings.Contains(text, "ERROR: AddressSanitizer") {
		return asanStack(lines)
	}
	// harp's own output marks the crashing thread.
	for i, l := range lines {
		if strings.TrimSpace(l) == CrashingThreadMarker {
			return gdbStack(lines[i+1:])
		}
	}
	// Else `info threads` stars the current thread: its block in
	// `thread apply all bt`.
	for _, l := range lines {
		if m := currentInfo.FindStringSubmatch(l); m != nil {
			for i, t := range lines {
				if tm := gdbThread.FindStringSubmatch(t); tm != nil && tm[1] == m[1] {
					return gdbStack(lines[i+1:])
				}
			}
		}
	}
	// Else the first stack there is.
	for i, l := range lines {
		if gdbFrame.MatchString(l) {
			return gdbStack(lines[i:])
		}
	}
	return nil
}

// gdbStack reads frames from lines until the stack ends (another thread,
// another section of harp's output).
func gdbStack(lines []string) []string {
	var out []string
	next := 0
	for _, l := range lines {
		if gdbThread.MatchString(l) || strings.HasPrefix(l, "== harp:") {
			if len(out) > 0 {
				break
			}
			continue
		}
		m := gdbFrame.FindStringSubmatch(l)
		if m == nil {
			continue // bt full's locals, gdb's warnings
		}
		if n := atoi(m[1]); n != next {
			if len(out) > 0 {
				break // a frame #0 again: the next stack
			}
			continue
		}
		next++
		out = append(out, normalize(m[2]))
	}
	return out
}

// asanStack reads the first stack of an AddressSanitizer report (where the
// error happened; "freed by" and "allocated by" stacks follow).
func asanStack(lines []string) []string {
	var out []string
	for _, l := range lines {
		m := asanFrame.FindStringSubmatch(l)
		if m == nil {
			if len(out) > 0 && strings.TrimSpace(l) == "" {
				break
			}
			continue
		}
		if atoi(m[1]) == 0 && len(out) > 0 {
			break
		}
		name := m[2]
		if name == "" || strings.Contains(l, "libsanitizer") || strings.Contains(l, "compiler-rt") {
			if name == "" {
				name = "??"
			} else {
				name = "__sanitizer:" + name // runtime frames are delivery, never the place
			}
		}
		out = append(out, normalize(name))
	}
	return out
}

func normalize(name string) string {
	if name == "" {
		return "??"
	}
	return cloneSuffix.ReplaceAllString(name, "")
}

// delivery says whether a frame only delivers the crash: libc's raise and
// abort, an assertion's or malloc's message, the sanitizer's runtime.
func delivery(f string) bool {
	if strings.HasPrefix(f, "__sanitizer:") || strings.HasPrefix(f, "__asan") || strings.HasPrefix(f, "__interceptor_") || strings.HasPrefix(f, "___interceptor_") || strings.HasPrefix(f, "__sanitizer") {
		return true
	}
	base := strings.TrimLeft(strings.TrimPrefix(strings.TrimLeft(f, "_"), "GI_"), "_")
	switch base {
	case "pthread_kill_implementation", "pthread_kill_internal", "pthread_kill", "raise", "abort", "libc_message", "libc_fatal",
		"assert_fail", "assert_fail_base", "fortify_fail", "chk_fail", "stack_chk_fail", "malloc_printerr", "kill", "tgkill":
		return true
	}
	return false
}

func lastIndex(s []string, v string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == v {
			return i
		}
	}
	return -1
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
