package report

import (
	"bytes"
	"fmt"
	"html/template"
	"regexp"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
)

// HTML renders the run as a self-contained page (report.html): the verdict
// matrix, a legend, and one section per result with its evidence. It loads
// nothing: no scripts, no stylesheets, no fonts, no images.
func HTML(run Run) ([]byte, error) {
	v := htmlView{Run: run, Started: run.Started.UTC().Format(time.RFC3339)}
	buildIdx, suiteIdx := map[string]int{}, map[string]int{}
	sections := layout(run)
	for i, r := range run.Results {
		name := buildName(r)
		if _, ok := buildIdx[name]; !ok {
			buildIdx[name] = len(v.Builds)
			v.Builds = append(v.Builds, htmlBuild{Name: name, Spec: r.Build})
		}
		if _, ok := suiteIdx[r.Suite]; !ok {
			suiteIdx[r.Suite] = len(v.Rows)
			v.Rows = append(v.Rows, htmlRow{Suite: r.Suite, Link: issueURL(r.Upstream)})
		}
		v.Rows[suiteIdx[r.Suite]].Title = r.Title
		v.Counts[verdictIndex(r.Verdict)]++
		v.Results = append(v.Results, htmlResult(i, sections[i]))
	}
	for i := range v.Rows {
		v.Rows[i].Cells = make([]*htmlCell, len(v.Builds))
	}
	for i, r := range run.Results {
		v.Rows[suiteIdx[r.Suite]].Cells[buildIdx[buildName(r)]] = &htmlCell{Text: Cell(r), Verdict: r.Verdict, Anchor: anchor(i)}
	}
	var b bytes.Buffer
	if err := htmlTemplate.Execute(&b, v); err != nil {
		return nil, fmt.Errorf("report.html: %w", err)
	}
	return b.Bytes(), nil
}

type htmlView struct {
	Run     Run
	Started string
	Builds  []htmlBuild
	Rows    []htmlRow
	Counts  [4]int // PASS, REPRODUCED, INCONCLUSIVE, ERROR (and anything else)
	Results []htmlRes
}

type htmlBuild struct{ Name, Spec string }

type htmlRow struct {
	Suite, Title, Link string
	Cells              []*htmlCell // nil: no result for that build
}

type htmlCell struct {
	Text    string
	Verdict verdict.Verdict
	Anchor  string
}

type htmlRes struct {
	section
	Anchor, BuildName, Link, Noun, Reproduce string
	// Notes on what the budgets cut, each ending in a link to evidence.
	BriefNote, SummaryNote, MoreCrashesNote string
	TrialsLink, DirLink                     string
	MoreTrialsNote                          string
}

func htmlResult(i int, s section) htmlRes {
	r := s.Result
	h := htmlRes{section: s, Anchor: anchor(i), BuildName: buildName(r), Link: issueURL(r.Upstream),
		Noun:      verdict.Singular(r.Noun),
		Reproduce: Reproduce(r)}
	if h.Noun == "" {
		h.Noun = "trial"
	}
	if r.Evidence != "" {
		h.TrialsLink, h.DirLink = r.Evidence+"/trials.json", r.Evidence+"/"
	}
	if s.Brief {
		h.BriefNote = briefNote()
	}
	if len(s.Summary) > 0 || s.MoreTrials > 0 {
		h.SummaryNote = summaryNote(s)
	}
	if s.MoreTrials > 0 {
		h.MoreTrialsNote = fmt.Sprintf("... and %d more %s", s.MoreTrials, noun(r))
	}
	if s.MoreCrashes > 0 {
		h.MoreCrashesNote = moreCrashesNote(s.MoreCrashes, s.Budget)
	}
	return h
}

func buildName(r Result) string {
	if r.Name != "" {
		return r.Name
	}
	return r.Build
}

func anchor(i int) string { return fmt.Sprintf("r-%02d", i+1) }

var upstreamIssue = regexp.MustCompile(`^([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)#([0-9]+)$`)

// issueURL links "owner/repo#N" to its GitHub issue ("" for anything else).
func issueURL(up string) string {
	m := upstreamIssue.FindStringSubmatch(strings.TrimSpace(up))
	if m == nil {
		return ""
	}
	return fmt.Sprintf("https://github.com/%s/%s/issues/%s", m[1], m[2], m[3])
}

func verdictIndex(v verdict.Verdict) int {
	switch v {
	case verdict.Pass:
		return 0
	case verdict.Reproduced:
		return 1
	case verdict.Inconclusive:
		return 2
	}
	return 3
}

// verdictClass is the CSS class of a verdict: v-PASS, v-REPRODUCED,
// v-INCONCLUSIVE, v-ERROR (anything unknown shows as an error).
func verdictClass(v verdict.Verdict) string {
	return "v-" + string([]verdict.Verdict{verdict.Pass, verdict.Reproduced, verdict.Inconclusive, verdict.Error}[verdictIndex(v)])
}

var htmlTemplate = template.Must(template.New("report.html").Funcs(template.FuncMap{
	"vclass":  verdictClass,
	"seconds": func(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) },
}).Parse(htmlPage))

const htmlPage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>harp run {{.Run.ID}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 110em; }
code, pre { font-family: ui-monospace, monospace; font-size: 90%; }
pre { background: #f6f6f6; padding: .5em; overflow-x: auto; white-space: pre-wrap; }
table { border-collapse: collapse; }
th, td { border: 1px solid #bbb; padding: .3em .6em; text-align: left; vertical-align: top; }
td a, .legend span { color: inherit; }
.v-PASS { background: #d4edda; color: #155724; }
.v-REPRODUCED { background: #f8d7da; color: #721c24; }
.v-INCONCLUSIVE { background: #fff3cd; color: #856404; }
.v-ERROR { background: #e2d9f3; color: #4a3670; }
.missing { color: #999; text-align: center; }
.legend span { padding: .1em .5em; margin-right: .5em; }
.t-violated { color: #721c24; font-weight: bold; }
.t-unmet { color: #856404; }
.fold, .cut { color: #555; font-style: italic; }
section { border-top: 1px solid #ccc; margin-top: 1.5em; }
h2 { padding: .2em .4em; }
dl { display: grid; grid-template-columns: max-content auto; gap: .2em 1em; }
dt { font-weight: bold; }
dd { margin: 0; }
</style>
</head>
<body>
<h1>harp run {{.Run.ID}}</h1>
<p>Started {{.Started}}. Command: <code>{{.Run.Command}}</code></p>
{{- if .Run.Since}}
<h3>Changes since {{.Run.Since}}: {{len .Run.Changes}}</h3>
<ul>
{{- range .Run.Changes}}
<li>{{.String}}</li>
{{- end}}
</ul>
{{- if .Run.FindingChanges}}
<h3>Findings that moved: {{len .Run.FindingChanges}}</h3>
<ul>
{{- range .Run.FindingChanges}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
{{- end}}
<table class="matrix">
<thead><tr><th>suite</th>{{range .Builds}}<th title="{{.Spec}}">{{.Name}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr><th>{{if .Link}}<a href="{{.Link}}">#{{.Suite}}</a>{{else}}#{{.Suite}}{{end}} {{.Title}}</th>
{{- range .Cells}}{{if .}}<td class="{{vclass .Verdict}}"><a href="#{{.Anchor}}">{{.Text}}</a></td>{{else}}<td class="missing">-</td>{{end}}{{end}}</tr>
{{- end}}
</tbody>
</table>
<p class="legend">
<span class="v-PASS">PASS</span>expected behaviour held ({{index .Counts 0}})
<span class="v-REPRODUCED">REPRODUCED</span>expected behaviour violated: the issue reproduces ({{index .Counts 1}})
<span class="v-INCONCLUSIVE">INCONCLUSIVE</span>a precondition was not met ({{index .Counts 2}})
<span class="v-ERROR">ERROR</span>harness or infrastructure failure ({{index .Counts 3}})
<br>n/m = trials that violated the expectation / trials run; - = not run on that build. Each cell links to its details below.
</p>
{{- range .Results}}
<section id="{{.Anchor}}">
<h2 class="{{vclass .Verdict}}">#{{.Suite}} on {{.BuildName}}: {{.Verdict}}</h2>
<p>{{if .Link}}<a href="{{.Link}}">{{.Upstream}}</a>{{else}}{{.Upstream}}{{end}}: {{.Title}}</p>
<dl>
<dt>Reason</dt><dd>{{.Reason}}</dd>
<dt>Trials</dt><dd>{{.TrialsRun}} run, {{.TrialsViolated}} violated the expectation</dd>
<dt>Duration</dt><dd>{{printf "%.1f" .DurationS}} s</dd>
<dt>Build spec</dt><dd><code>{{.Build}}</code>{{if .Image}} (image <code>{{.Image}}</code>){{end}}</dd>
<dt>HAProxy version</dt><dd>{{.Version}}</dd>
<dt>Reproduce</dt><dd><code>{{.Reproduce}}</code></dd>
{{- if .Evidence}}
<dt>Evidence</dt><dd><a href="{{.Evidence}}/trials.json">trials.json</a> <a href="{{.Evidence}}/haproxy.cfg">haproxy.cfg</a> <a href="{{.Evidence}}/haproxy-vv.txt">haproxy-vv.txt</a></dd>
{{- end}}
</dl>
{{- if .Brief}}
<p class="cut">{{.BriefNote}}{{if .DirLink}}: <a href="{{.DirLink}}">{{.DirLink}}</a>{{else}}: no evidence directory was kept.{{end}}</p>
{{- else}}
{{- if .VV.Total}}
<details><summary>haproxy -vv</summary>{{template "fold" .VV}}</details>
{{- end}}
{{- if .Config.Total}}
<details><summary>Configuration</summary>{{template "fold" .Config}}</details>
{{- end}}
{{- if .CrashNote}}
<p class="t-violated">Crashes (evidence in the crash row of {{.BuildName}}): {{.CrashNote}}</p>
{{- end}}
{{- range .Crashes}}
<h3 class="t-violated">Crash: {{.ProcessKind}} {{.PID}} of {{.Node}} exited with code {{.Code}} ({{.Signal}})</h3>
<dl>
{{- if .Suite}}<dt>Met by</dt><dd>#{{.Suite}}</dd>{{end}}
{{- if .Signature}}<dt>Signature</dt><dd><code>{{.Signature}}</code></dd>{{end}}
{{- if .Note}}<dt>Note</dt><dd>{{.Note}}</dd>{{end}}
</dl>
<details><summary>Last log lines</summary>{{template "fold" .Log}}</details>
{{- if .ASan.Total}}
<details open><summary>AddressSanitizer report: {{.ASanSummary}}</summary>{{template "fold" .ASan}}</details>
{{- end}}
{{- if .Trace.Total}}
<details><summary>Backtrace: the crashing thread, then every thread (gdb: bt full; thread apply all bt full)</summary>{{template "fold" .Trace}}</details>
{{- end}}
{{- end}}
{{- if .MoreCrashesNote}}
<p class="cut">{{.MoreCrashesNote}}</p>
{{- end}}
{{- if .Steps}}
<p>Steps:</p>
<ol>{{range .Steps}}<li>{{.}}</li>{{end}}</ol>
{{- end}}
{{- $noun := .Noun}}
{{- range .Trials}}
<h3>{{$noun}} {{.N}}: <span class="{{.Class}}">{{.State}}</span> ({{seconds .Duration}} s)</h3>
{{- if .Remark}}
<p>Remark: {{.Remark}}</p>
{{- end}}
{{- if .Notes.Total}}
<ul>{{range .Notes.Head}}<li>{{.}}</li>{{end}}{{if .Notes.IsFolded}}<li class="fold">{{template "foldnote" .Notes}}</li>{{range .Notes.Tail}}<li>{{.}}</li>{{end}}{{end}}</ul>
{{- end}}
{{- range .Blocks}}
<p>{{.Title}}:</p>{{template "fold" .Text}}
{{- end}}
{{- if .Transcript.Total}}
<details><summary>Runtime transcript (polls folded)</summary>{{template "fold" .Transcript}}</details>
{{- end}}
{{- end}}
{{- if .SummaryNote}}
<p class="cut">{{.SummaryNote}}{{if .TrialsLink}}: <a href="{{.TrialsLink}}">{{.TrialsLink}}</a>{{else}}: no evidence directory was kept.{{end}}</p>
<ul>{{range .Summary}}<li>{{.}}</li>{{end}}{{if .MoreTrialsNote}}<li>{{.MoreTrialsNote}}</li>{{end}}</ul>
{{- end}}
{{- end}}
</section>
{{- end}}
</body>
</html>
{{- define "fold"}}<pre>{{.HeadText}}{{if .IsFolded}}
<span class="fold">{{template "foldnote" .}}</span>{{if .Tail}}
{{.TailText}}{{end}}{{end}}</pre>{{end}}
{{- define "foldnote"}}{{.Lead}}{{if .File}}: full text in <a href="{{.File}}">{{.File}}</a>{{else}} (no evidence directory keeps the full text){{end}}{{end}}
`
