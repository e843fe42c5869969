package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/harp-project/harp/harness/core/verdict"
)

// Cell is what a matrix shows for one suite on one build.
func Cell(r Result) string {
	switch r.Verdict {
	case verdict.Inconclusive, verdict.Error:
		reason := r.Reason
		if i := strings.IndexAny(reason, ";\n"); i > 0 {
			reason = reason[:i]
		}
		if len(reason) > 60 {
			reason = reason[:57] + "..."
		}
		return fmt.Sprintf("%s: %s", r.Verdict, reason)
	}
	return fmt.Sprintf("%s %d/%d", r.Verdict, r.TrialsViolated, r.TrialsRun)
}

// Matrix lays results out as one row per suite and one column per build,
// in the order they first appear. markdown picks a Markdown table.
func Matrix(results []Result, markdown bool) string {
	var suites, builds []string
	seenS, seenB := map[string]bool{}, map[string]bool{}
	cells := map[[2]string]string{}
	titles := map[string]string{}
	for _, r := range results {
		name := r.Name
		if name == "" {
			name = r.Build
		}
		if !seenS[r.Suite] {
			seenS[r.Suite] = true
			suites = append(suites, r.Suite)
		}
		if !seenB[name] {
			seenB[name] = true
			builds = append(builds, name)
		}
		cells[[2]string{r.Suite, name}] = Cell(r)
		titles[r.Suite] = r.Title
	}
	rows := [][]string{append([]string{"suite"}, builds...)}
	for _, s := range suites {
		row := []string{"#" + s + " " + titles[s]}
		for _, b := range builds {
			c := cells[[2]string{s, b}]
			if c == "" {
				c = "-"
			}
			row = append(row, c)
		}
		rows = append(rows, row)
	}
	var sb strings.Builder
	if markdown {
		for i, row := range rows {
			sb.WriteString("| " + strings.Join(mdCells(row), " | ") + " |\n")
			if i == 0 {
				sb.WriteString(strings.Repeat("|---", len(row)) + "|\n")
			}
		}
		return sb.String()
	}
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			if i == 0 && len(c) > 48 {
				row[i] = c[:45] + "..."
			}
			width[i] = max(width[i], len(row[i]))
		}
	}
	for _, row := range rows {
		for i, c := range row {
			fmt.Fprintf(&sb, "%-*s  ", width[i], c)
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

func mdCells(row []string) []string {
	out := make([]string, len(row))
	for i, c := range row {
		out[i] = mdCell(c)
	}
	return out
}

// JUnit XML: one testcase per suite x build, so CI dashboards can show it.
type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string      `xml:"name,attr"`
	ClassName string      `xml:"classname,attr"`
	Time      float64     `xml:"time,attr"`
	Failure   *junitIssue `xml:"failure,omitempty"`
	Error     *junitIssue `xml:"error,omitempty"`
	Skipped   *junitIssue `xml:"skipped,omitempty"`
}

type junitIssue struct {
	Message string `xml:"message,attr"`
}

// JUnit renders a run as JUnit XML: REPRODUCED is a failure, ERROR an
// error, INCONCLUSIVE skipped (with its reason).
func JUnit(run Run) ([]byte, error) {
	s := junitSuite{Name: "harp " + run.ID}
	for _, r := range run.Results {
		c := junitCase{Name: strings.TrimPrefix(r.Line(), "#"), ClassName: junitClass(r), Time: r.DurationS}
		switch r.Verdict {
		case verdict.Reproduced:
			c.Failure, s.Failures = &junitIssue{Message: r.Reason}, s.Failures+1
		case verdict.Error:
			c.Error, s.Errors = &junitIssue{Message: r.Reason}, s.Errors+1
		case verdict.Inconclusive:
			c.Skipped, s.Skipped = &junitIssue{Message: r.Reason}, s.Skipped+1
		}
		s.Cases = append(s.Cases, c)
	}
	s.Tests = len(s.Cases)
	out, err := xml.MarshalIndent(s, "", "  ")
	return append([]byte(xml.Header), append(out, '\n')...), err
}

// Shard keeps the cells of shard i of n (1-based), a deterministic share
// by position in the full list of cells.
func Shard[T any](cells []T, i, n int) []T {
	var out []T
	for k, c := range cells {
		if k%n == i-1 {
			out = append(out, c)
		}
	}
	return out
}

// ParseShard reads "i/n".
func ParseShard(s string) (int, int, error) {
	m := shardRe.FindStringSubmatch(s)
	var i, n int
	if m != nil {
		i, _ = strconv.Atoi(m[1])
		n, _ = strconv.Atoi(m[2])
	}
	if m == nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("shard %q: want i/n with 1 <= i <= n", s)
	}
	return i, n, nil
}

var shardRe = regexp.MustCompile(`^(\d{1,6})/(\d{1,6})$`)

// Merge reads several run directories (shards) and returns one run holding
// all their results and evidence, ordered by suite then build.
func Merge(id string, dirs []string) (Run, error) {
	run := Run{ID: id, Command: "harp merge " + strings.Join(dirs, " ")}
	runs, cells := map[string]string{}, map[string]string{}
	var parts []Run
	for _, d := range dirs {
		part, err := Load(d)
		if err != nil {
			return run, fmt.Errorf("merge: %w", err)
		}
		part.Results = WithoutCrashRows(part.Results) // made again from every shard's cells below
		parts = append(parts, part)
		// A shard given twice would count its cells twice.
		if other, dup := runs[part.ID]; dup {
			return run, fmt.Errorf("merge: %s and %s hold the same run %s", other, d, part.ID)
		}
		runs[part.ID] = d
		for _, r := range part.Results {
			key := r.Suite + " on " + r.Build + " " + r.Name
			if other, dup := cells[key]; dup {
				return run, fmt.Errorf("merge: #%s is in both %s and %s: shards of one matrix never share a cell", key, other, d)
			}
			cells[key] = d
		}
		if run.Started.IsZero() || part.Started.Before(run.Started) {
			run.Started = part.Started
		}
		run.Results = append(run.Results, part.Results...)
		// A nightly's shards each compared with their own previous night.
		run.Changes = append(run.Changes, part.Changes...)
		run.FindingChanges = append(run.FindingChanges, part.FindingChanges...)
		run.Notes = append(run.Notes, part.Notes...)
		if part.Since != "" {
			run.Since = strings.TrimPrefix(run.Since+", "+part.Since, ", ")
		}
	}
	matrix, err := sameMatrix(parts)
	if err != nil {
		return run, err
	}
	if err := shardsComplete(parts); err != nil {
		return run, err
	}
	if matrix != nil {
		run.Matrix, run.Cells = matrix, len(run.Results)
	}
	sort.SliceStable(run.Results, func(a, b int) bool {
		if run.Results[a].Suite != run.Results[b].Suite {
			return run.Results[a].Suite < run.Results[b].Suite
		}
		return run.Results[a].Name < run.Results[b].Name
	})
	run.Results = CrashRows(run.Results)
	return run, nil
}

// Identity is what makes a matrix the one it is: its builds, the suites
// filter and the suites it selected, the suite parameters and the trial
// count, and a hash of them. Every shard of a matrix carries it: shards of
// two matrices with the same counts would otherwise merge into a
// complete-looking matrix of neither.
type Identity struct {
	Builds []string          `json:"builds"`
	Filter string            `json:"suites_filter"`
	Suites []string          `json:"suites"`
	Params map[string]string `json:"params,omitempty"`
	Trials int               `json:"trials,omitempty"` // 0: each suite's own
	Hash   string            `json:"hash"`
}

// NewIdentity makes a matrix's identity, hash included.
func NewIdentity(builds []string, filter string, suites []string, params map[string]string, trials int) *Identity {
	id := &Identity{Builds: builds, Filter: filter, Suites: suites, Params: params, Trials: trials}
	id.Hash = id.sum()
	return id
}

// sum hashes every field but Hash (encoding/json sorts map keys).
func (id Identity) sum() string {
	id.Hash = ""
	b, _ := json.Marshal(id)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// diff names how o differs from id ("" when it does not).
func (id *Identity) diff(o *Identity) string {
	var d []string
	list := func(what string, a, b []string) {
		if !slices.Equal(a, b) {
			d = append(d, fmt.Sprintf("%s %s, not %s", what, strings.Join(b, " "), strings.Join(a, " ")))
		}
	}
	list("builds", id.Builds, o.Builds)
	if id.Filter != o.Filter {
		d = append(d, fmt.Sprintf("suites filter %q, not %q", o.Filter, id.Filter))
	}
	list("suites", id.Suites, o.Suites)
	if !maps.Equal(id.Params, o.Params) {
		d = append(d, fmt.Sprintf("parameters %s, not %s", params(o.Params), params(id.Params)))
	}
	if id.Trials != o.Trials {
		d = append(d, fmt.Sprintf("trials %d, not %d", o.Trials, id.Trials))
	}
	if len(d) == 0 && id.Hash != o.Hash {
		d = append(d, fmt.Sprintf("matrix hash %s, not %s", o.Hash, id.Hash))
	}
	return strings.Join(d, "; ")
}

func params(p map[string]string) string {
	if len(p) == 0 {
		return "(none)"
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		kv = append(kv, k+"="+p[k])
	}
	return strings.Join(kv, " ")
}

// sameMatrix checks that every shard carries one identity, intact, and
// returns it (nil when no run is a shard).
func sameMatrix(parts []Run) (*Identity, error) {
	var first *Run
	for i := range parts {
		p := &parts[i]
		if p.Shard == "" {
			continue
		}
		if p.Matrix == nil {
			return nil, fmt.Errorf("merge: run %s is shard %s without its matrix's identity (written by an older harp): it cannot be told from a shard of another matrix; run the shards again with this harp", p.ID, p.Shard)
		}
		if sum := p.Matrix.sum(); sum != p.Matrix.Hash {
			return nil, fmt.Errorf("merge: run %s: its matrix's identity does not match its hash (%s, not %s): edited or damaged", p.ID, sum, p.Matrix.Hash)
		}
		if first == nil {
			first = p
		} else if d := first.Matrix.diff(p.Matrix); d != "" {
			return nil, fmt.Errorf("merge: run %s is shard %s of another matrix than run %s: %s", p.ID, p.Shard, first.ID, d)
		}
	}
	if first == nil {
		return nil, nil
	}
	return first.Matrix, nil
}

// shardsComplete checks that shards of one matrix are all there: the same
// n and cell count, every i from 1 to n, and every cell. Runs that are not
// shards are merged as they are.
func shardsComplete(parts []Run) error {
	n, cells, have, results := 0, 0, map[int]bool{}, 0
	for _, p := range parts {
		if p.Shard == "" {
			continue
		}
		i, pn, err := ParseShard(p.Shard)
		if err != nil {
			return fmt.Errorf("merge: run %s: %w", p.ID, err)
		}
		if n != 0 && (pn != n || p.Cells != cells) {
			return fmt.Errorf("merge: run %s is shard %s of %d cells, others are of %d shards and %d cells: not one matrix", p.ID, p.Shard, p.Cells, n, cells)
		}
		n, cells, have[i] = pn, p.Cells, true
		results += len(p.Results)
	}
	if n == 0 {
		return nil
	}
	var missing []string
	for i := 1; i <= n; i++ {
		if !have[i] {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("merge: shard(s) %s missing: a merged matrix without them would look complete", strings.Join(missing, ", "))
	}
	if results != cells {
		return fmt.Errorf("merge: the shards hold %d results for a matrix of %d cells", results, cells)
	}
	return nil
}
