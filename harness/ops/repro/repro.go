// Package repro writes a finding's standalone reproducer: a directory a
// maintainer runs without harp, Go or Docker, holding the config harp ran
// (its sockets and ports moved so that it runs on any machine) and an
// executable `reproduce` (POSIX sh with socat, or Python 3's standard
// library where raw peers-protocol bytes are needed) that takes the
// haproxy binary, performs the recorded steps and prints REPRODUCED (exit
// 1), PASS (exit 0) or INCONCLUSIVE (exit 2, a precondition it could not
// meet). Each finding family has its generator; the values here need no
// Docker (harp findings repro checks the scripts in the builds' images).
package repro

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/report"
)

// Exit statuses of every reproducer.
const (
	ExitPass         = 0
	ExitReproduced   = 1
	ExitInconclusive = 2
	ExitUsage        = 3
)

// Languages a reproducer is written in.
const (
	Sh     = "sh"      // POSIX sh and socat
	Python = "python3" // Python 3's standard library
)

// File is one file of a reproducer's directory.
type File struct {
	Name string
	Exec bool // written executable
	Text string
}

// Repro is one finding's reproducer.
type Repro struct {
	Finding findings.Finding
	Lang    string
	Files   []File   // reproduce, haproxy.cfg and any other config; README.md is rendered apart
	Does    []string // what the script does, for README.md
	Needs   string   // what it needs besides the haproxy binary
	From    Source   // the result its steps and config come from
	// Reproduces says what part of the finding the script shows, when it
	// is narrower than the finding (a suite-wide property).
	Reproduces string
}

// Source is the result a reproducer was made from.
type Source struct {
	Build    string `json:"build"` // the build's name (version and patches)
	Spec     string `json:"build_spec"`
	Image    string `json:"image"`
	Evidence string `json:"evidence"` // the result's evidence directory
}

func (s Source) String() string {
	return fmt.Sprintf("%s (%s), %s", s.Build, s.Spec, s.Evidence)
}

// File returns the named file's text.
func (r Repro) File(name string) (string, bool) {
	for _, f := range r.Files {
		if f.Name == name {
			return f.Text, true
		}
	}
	return "", false
}

// Generator makes the reproducer of the findings it matches. A suite
// registers its own (Register), beside its checks: repro knows no suite.
type Generator struct {
	Pattern string // how its signatures read, for the error listing them
	What    string
	Match   func(f findings.Finding) bool
	Make    func(f findings.Finding, r report.Result) (Repro, error)
}

var generators []Generator

// Register adds a suite's generator; a suite calls it from init.
func Register(g Generator) { generators = append(generators, g) }

// Supported lists the signatures that have a generator, and what each
// reproduces.
func Supported() []string {
	var out []string
	for _, g := range generators {
		out = append(out, g.Pattern+": "+g.What)
	}
	return out
}

// Has says whether a finding has a generator.
func Has(f findings.Finding) bool {
	for _, g := range generators {
		if g.Match(f) {
			return true
		}
	}
	return false
}

// For makes a finding's reproducer from a result that shows it (its
// evidence loaded: config and trials). A finding with no generator is an
// error naming those that have one.
func For(f findings.Finding, r report.Result) (Repro, error) {
	for _, g := range generators {
		if !g.Match(f) {
			continue
		}
		if r.Config == "" {
			return Repro{}, fmt.Errorf("%s: the result on %s has no recorded config (its evidence directory %q is missing)", f.Signature, BuildName(r), r.Evidence)
		}
		rp, err := g.Make(f, r)
		if err != nil {
			return Repro{}, fmt.Errorf("%s: %w", f.Signature, err)
		}
		rp.Finding = f
		rp.From = Source{Build: BuildName(r), Spec: r.Build, Image: r.Image, Evidence: r.Evidence}
		return rp, nil
	}
	return Repro{}, fmt.Errorf("no reproducer generator for %s (%s); generators exist for: %s", f.Signature, f.Kind, strings.Join(Supported(), "; "))
}

// BuildName is how a result names its build in errors and READMEs.
func BuildName(r report.Result) string {
	if r.Name != "" {
		return r.Name
	}
	return r.Build
}

//go:embed scripts/lib.sh
var lib string

// Render executes a suite's script template (text, named name) with the
// shared sh helpers (template "lib") and quoting funcs: shq, oneline, pyq.
func Render(name, text string, data any) (string, error) {
	t := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{"shq": shQuote, "oneline": oneLine, "pyq": strconv.Quote})
	if _, err := t.New("lib").Parse(lib); err != nil {
		return "", err
	}
	if _, err := t.New(name).Parse(text); err != nil {
		return "", fmt.Errorf("script %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("script %s: %w", name, err)
	}
	return b.String(), nil
}

// oneLine keeps a text one line (for a comment).
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// shQuote quotes a word for sh.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Local config: what a recorded config becomes to run on any machine.
// Stats sockets (TCP in harp's containers) become UNIX sockets named by
// their level under $REPRO_DIR; every address:port becomes
// "127.0.0.1:${PORT_<port>}", which HAProxy expands from the environment
// the script sets (free ports it picks); files under /etc/harp/ move to
// $REPRO_DIR. Ports are the recorded ports, ascending.
type Local struct {
	Config string
	Ports  []string
	// Sockets are the stats sockets' file names by level (admin.sock).
	Sockets map[string]string
}

var (
	statsLine = regexp.MustCompile(`^(\s*stats\s+socket\s+)ipv4@[0-9.]*:(\d+)(.*)$`)
	levelWord = regexp.MustCompile(`\blevel\s+(\w+)`)
	addrPort  = regexp.MustCompile(`(^|[\s@])((?:\d{1,3}\.){3}\d{1,3})?:(\d{2,5})\b`)
	harpFile  = regexp.MustCompile(`\S*/etc/harp/\S*`)
)

// Localize rewrites a recorded config (see Local).
func Localize(cfg string) (Local, error) {
	l := Local{Sockets: map[string]string{}}
	ports := map[string]bool{}
	lines := strings.Split(cfg, "\n")
	for i, line := range lines {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "#") || t == "" {
			continue
		}
		if m := statsLine.FindStringSubmatch(line); m != nil {
			level := "admin"
			if lm := levelWord.FindStringSubmatch(m[3]); lm != nil {
				level = lm[1]
			}
			name := level + ".sock"
			if _, taken := l.Sockets[level]; taken {
				name = level + "-" + m[2] + ".sock"
			} else {
				l.Sockets[level] = name
			}
			lines[i] = fmt.Sprintf(`%s"${REPRO_DIR}/%s"%s`, m[1], name, m[3])
			continue
		}
		var err error
		line = harpFile.ReplaceAllStringFunc(line, func(tok string) string {
			if strings.Contains(tok, `"`) {
				err = fmt.Errorf("config line %d: %q is quoted already: its /etc/harp/ path cannot be moved", i+1, tok)
				return tok
			}
			return `"` + strings.ReplaceAll(tok, "/etc/harp/", "${REPRO_DIR}/") + `"`
		})
		if err != nil {
			return Local{}, err
		}
		line = addrPort.ReplaceAllStringFunc(line, func(m string) string {
			sub := addrPort.FindStringSubmatch(m)
			ports[sub[3]] = true
			return fmt.Sprintf(`%s"127.0.0.1:${PORT_%s}"`, sub[1], sub[3])
		})
		lines[i] = line
	}
	for p := range ports {
		l.Ports = append(l.Ports, p)
	}
	sort.Slice(l.Ports, func(i, j int) bool { a, _ := strconv.Atoi(l.Ports[i]); b, _ := strconv.Atoi(l.Ports[j]); return a < b })
	l.Config = strings.Join(lines, "\n")
	return l, nil
}

// LocalNote is README.md's line on what Localize changed.
const LocalNote = "the config harp ran, with its stats sockets moved to UNIX sockets in the script's temporary directory (`${REPRO_DIR}`), its files there too, and each port to a free one the script picks (`${PORT_8080}` and the like: HAProxy expands them from the environment the script sets)"

// Trials decodes each trial's evidence into T (trials.json holds it as
// JSON; Load leaves it a map).
func Trials[T any](r report.Result) (map[int]T, error) {
	out := map[int]T{}
	for _, t := range r.Trials {
		var v T
		b, err := json.Marshal(t.Evidence)
		if err == nil {
			err = json.Unmarshal(b, &v)
		}
		if err != nil {
			return nil, fmt.Errorf("trial %d's evidence: %w", t.N, err)
		}
		out[t.N] = v
	}
	return out, nil
}

// SortedTrials is a result's trials in their numbers' order.
func SortedTrials(r report.Result) []verdict.Trial {
	ts := append([]verdict.Trial(nil), r.Trials...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].N < ts[j].N })
	return ts
}

// FailedIn is the first trial (by number) where check failed.
func FailedIn(r report.Result, check string) (verdict.Trial, bool) {
	for _, t := range SortedTrials(r) {
		for _, c := range t.Checks {
			if c.ID == check && !c.Held {
				return t, true
			}
		}
	}
	return verdict.Trial{}, false
}

// Write writes the reproducer's files, README.md (with what its
// verification said) and repro.json (Manifest) into dir, which must exist.
func (r Repro) Write(dir string, v Verification) error {
	for _, f := range r.Files {
		mode := os.FileMode(0o644)
		if f.Exec {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name), []byte(f.Text), mode); err != nil {
			return err
		}
		if err := os.Chmod(filepath.Join(dir, f.Name), mode); err != nil {
			return err
		}
	}
	if len(v.Runs) > 0 {
		if err := os.WriteFile(filepath.Join(dir, "verified.txt"), []byte(v.Text()), 0o644); err != nil {
			return err
		}
	}
	m, err := json.MarshalIndent(r.manifest(v), "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), append(m, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "README.md"), []byte(r.README(v)), 0o644)
}
