package monitor

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/ops/doctor"
)

// The status page is one self-contained document: no request leaves it
// (the Content-Security-Policy allows only its own inline style and
// scripts, by hash). Its scripts only show the read's age and reload the
// page; a script error is recorded on the body (data-script-error), and
// data-ready says the last script ran to its end.
const (
	errScript  = `window.addEventListener("error", function (e) { document.body.setAttribute("data-script-error", String(e.message)); });`
	mainScript = `(function () {
  var b = document.body, at = Number(b.getAttribute("data-at")), every = Number(b.getAttribute("data-interval"));
  var ago = document.getElementById("ago");
  function tick() {
    if (ago && at > 0) { ago.textContent = Math.max(0, Math.round((Date.now() - at) / 1000)) + " s ago"; }
  }
  tick();
  setInterval(tick, 1000);
  if (every > 0) { setTimeout(function () { location.reload(); }, Math.max(every, 5000)); }
  b.setAttribute("data-ready", "1");
})();`
	style = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; }
h1 { font-size: 1.4em; margin: 0 0 .3em; }
h2 { font-size: 1.1em; margin: 1.4em 0 .4em; }
.status { padding: .6em .8em; border-radius: 4px; }
.status.ok { background: #e3f4e6; } .status.problem { background: #fbe3e1; }
table { border-collapse: collapse; margin: .3em 0; }
th, td { border: 1px solid #d0d0d4; padding: .25em .55em; text-align: left; vertical-align: top; }
th { background: #f3f3f5; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.down, .bad { color: #b3261e; font-weight: 600; } .up { color: #1e7b34; }
ul.findings { padding-left: 0; list-style: none; }
ul.findings > li { margin: .4em 0; padding: .3em .6em; border-left: 4px solid #999; }
ul.findings > li.problem { border-color: #b3261e; } ul.findings > li.warning { border-color: #c98a00; } ul.findings > li.ok { border-color: #1e7b34; }
.level { font-weight: 600; text-transform: uppercase; font-size: .85em; }
code { font-size: .9em; }
footer { margin-top: 2em; color: #666; font-size: .9em; }
`
)

var csp = fmt.Sprintf("default-src 'none'; style-src '%s'; script-src '%s' '%s'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	hash(style), hash(errScript), hash(mainScript))

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(h[:])
}

var pageT = template.Must(template.New("page").Funcs(template.FuncMap{
	"upper": strings.ToUpper,
	"pct":   func(f float64) string { return fmt.Sprintf("%.1f%%", f) },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>harp doctor: {{.Title}}</title>
<style>{{.Style}}</style>
</head>
<body data-at="{{.AtMs}}" data-interval="{{.IntervalMs}}" data-healthy="{{.Healthy}}">
<script>{{.ErrScript}}</script>
<h1>harp doctor</h1>
{{if not .Read}}<p class="status">No read has finished yet: the first read of {{.Sockets}} socket(s) is under way.</p>
{{else}}
<p class="status {{if .Healthy}}ok{{else}}problem{{end}}" id="summary">{{if .Healthy}}Healthy: {{.Summary}}{{else}}<strong>Problem.</strong> Likely cause: {{.Cause}}{{end}}</p>
<p>Read #{{.N}} of {{len .Instances}} instance(s), finished at <time datetime="{{.At}}">{{.At}}</time> (<span id="ago">just now</span>), in {{.Took}}; read again every {{.Interval}}.</p>

<h2>Findings</h2>
<ul class="findings" id="findings">
{{range .Findings}}<li class="{{.Level}}"><span class="level">{{.Level}}</span> <code>[{{.Code}}]</code> {{.Message}}
{{if .Evidence}}<details><summary>evidence ({{len .Evidence}})</summary><ul>{{range .Evidence}}<li>{{.}}</li>{{end}}</ul></details>{{end}}</li>
{{end}}</ul>

<h2>Instances</h2>
<table id="instances"><tr><th>instance</th><th>socket</th><th>HAProxy</th><th>node</th><th>peers sections</th><th>failed commands</th></tr>
{{range .Instances}}<tr><td>{{.Name}}</td><td><code>{{.Socket}}</code></td>{{if .Unreachable}}<td colspan="4" class="bad">NOT READ: {{.Unreachable}}</td>{{else}}<td>{{.Version}}</td><td>{{.Node}}</td><td>{{range .Sections}}{{.}}<br>{{else}}none{{end}}</td><td class="num">{{.Failed}}</td>{{end}}</tr>
{{end}}</table>

<h2>Peer links, seen from each end</h2>
{{if or .Links .Unknown}}<table id="links"><tr><th>section</th><th>from</th><th>to</th><th>state</th><th>last_status</th><th>last_hdshk</th></tr>
{{range .Links}}<tr><td>{{.Section}}</td><td>{{.From}}</td><td>{{or .To .Peer}}</td><td class="{{if .Established}}up{{else}}down{{end}}">{{if .Established}}established{{else}}DOWN{{end}}</td><td>{{.Status}}</td><td>{{.Handshake}}</td></tr>
{{end}}{{range .Unknown}}<tr><td>{{.Section}}</td><td>{{.Instance}}</td><td>{{.Peer}}</td><td class="bad">UNKNOWN: {{.Instance}} not read; {{if .Established}}established{{else}}DOWN{{end}} at the last read that showed it ({{.At}})</td><td>-</td><td>-</td></tr>
{{end}}</table>{{else}}<p>No link: no instance has a local peer in a peers section.</p>{{end}}

<h2>Tables across instances</h2>
{{if .Tables}}<table id="tables"><tr><th>table</th><th>keys</th><th>not on every instance</th><th>differing data</th><th>instance</th><th>definition</th><th>used</th><th>lacks</th></tr>
{{range .Tables}}{{$t := .}}{{range $i, $c := .Cells}}<tr>{{if eq $i 0}}<td rowspan="{{len $t.Cells}}">{{$t.Name}}{{if not $t.Replicated}}<br><small>(not replicated)</small>{{end}}</td>
<td class="num" rowspan="{{len $t.Cells}}">{{if $t.Replicated}}{{$t.Keys}}{{else}}-{{end}}</td>
<td class="num{{if $t.Diverging}} bad{{end}}" rowspan="{{len $t.Cells}}">{{if $t.Replicated}}{{$t.Diverging}} ({{pct $t.Percent}}){{else}}-{{end}}</td>
<td class="num{{if $t.ValueDiffs}} bad{{end}}" rowspan="{{len $t.Cells}}">{{if $t.Replicated}}{{$t.ValueDiffs}}{{else}}-{{end}}</td>{{end}}
<td>{{$c.Instance}}</td><td>{{$c.Definition}}</td><td class="num">{{$c.Used}}</td><td class="num">{{if $c.Hidden}}contents refused{{else if $t.Replicated}}{{$c.Missing}}{{else}}-{{end}}</td></tr>
{{end}}{{end}}</table>{{else}}<p>No stick table on any instance.</p>{{end}}
{{end}}
<footer>harp doctor --watch: <a href="/metrics">/metrics</a> (Prometheus), <a href="/healthz">/healthz</a>. Counts and names only: no table key is shown or exported.</footer>
<script>{{.MainScript}}</script>
</body></html>
`))

type instanceRow struct {
	Name, Socket, Version, Node, Unreachable string
	Sections                                 []string
	Failed                                   int
}

type tableCell struct {
	Instance, Definition string
	Used, Missing        int
	Hidden               bool
}

type tableRow struct {
	doctor.TableView
	Cells []tableCell
}

// unknownRow is a link of an instance this read could not see.
type unknownRow struct {
	KnownLink
	At string
}

type pageData struct {
	Title, Summary, Cause, At, Took, Interval string
	Healthy, Read                             bool
	AtMs, IntervalMs                          int64
	N, Sockets                                int
	Findings                                  []doctor.Finding
	Instances                                 []instanceRow
	Links                                     []doctor.Link
	Unknown                                   []unknownRow
	Tables                                    []tableRow
	Style                                     template.CSS
	ErrScript, MainScript                     template.JS
}

func (m *Monitor) pageData() pageData {
	p := pageData{Title: "waiting for the first read", Sockets: len(m.o.Sockets), Interval: m.o.Interval.String(), IntervalMs: m.o.Interval.Milliseconds(),
		Style: template.CSS(style), ErrScript: template.JS(errScript), MainScript: template.JS(mainScript)}
	s := m.Last()
	if s == nil {
		return p
	}
	d := s.D
	p.Read, p.Healthy, p.Cause, p.Summary, p.N = true, d.Healthy, d.Cause, summary(d), s.N
	p.Title = "healthy"
	if !d.Healthy {
		p.Title = "problem"
	}
	end := s.Start.Add(s.Took)
	p.At, p.AtMs, p.Took = end.Format(time.RFC3339), end.UnixMilli(), s.Took.Round(time.Millisecond).String()
	p.Findings, p.Links = d.Findings, d.Links
	for _, l := range s.Unknown {
		p.Unknown = append(p.Unknown, unknownRow{KnownLink: l, At: l.Seen.Format(time.RFC3339)})
	}
	hidden := map[string]bool{}
	for _, in := range d.Instances {
		row := instanceRow{Name: in.Name, Socket: in.Socket, Version: in.Version, Node: in.Node, Unreachable: in.Unreachable, Failed: len(in.Errors)}
		for _, sec := range in.Sections {
			local := "NO LOCAL PEER"
			if l, ok := sec.Local(); ok {
				local = "local peer " + l.Name
			}
			resync := "resync finished"
			if !sec.ResyncFinished() {
				resync = "resync NOT finished"
			}
			row.Sections = append(row.Sections, fmt.Sprintf("%s: %s, %s", sec.Name, local, resync))
		}
		p.Instances = append(p.Instances, row)
		for cmd := range in.Errors {
			if t, ok := strings.CutPrefix(cmd, "show table "); ok {
				hidden[in.Name+"\x00"+t] = true
			}
		}
	}
	for _, t := range d.Tables {
		r := tableRow{TableView: t}
		for _, inst := range slices.Sorted(maps.Keys(t.Definitions)) {
			r.Cells = append(r.Cells, tableCell{Instance: inst, Definition: t.Definitions[inst], Used: t.Used[inst], Missing: t.Missing[inst], Hidden: hidden[inst+"\x00"+t.Name]})
		}
		p.Tables = append(p.Tables, r)
	}
	return p
}

func (m *Monitor) page(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	if err := pageT.Execute(w, m.pageData()); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}
