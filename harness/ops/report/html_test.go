package report

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/record"
	"github.com/harp-project/harp/harness/core/verdict"
)

// htmlSample is 2 suites x 2 builds: PASS, REPRODUCED (with evidence, a
// transcript and a hostile config), INCONCLUSIVE and ERROR (no evidence).
func htmlSample() Run {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return Run{
		ID: "20260102T030405Z-00ab", Started: at, Command: "harp matrix --suites 3517,3519",
		Since:   "20260101T030405Z-00aa",
		Changes: []Change{{Kind: "regressed", Suite: "3517", Build: "3.4.7-1", Before: verdict.Pass, After: verdict.Reproduced}},
		Results: []Result{
			{Suite: "3517", Upstream: "haproxy/haproxy#3517", Title: "Multiple peers sections lose stick tables on reload",
				Build: "deb:trixie", Name: "3.0.11-1+deb13u4", Version: "3.0.11-1+deb13u4", Verdict: verdict.Pass,
				TrialsRun: 3, Reason: "expected behaviour held in 3 of 3 reloads", DurationS: 12.34,
				Evidence: "01-3517-3.0.11-1+deb13u4", Noun: "reloads", VV: "HAProxy version 3.0.11-1+deb13u4\n", Config: "global\n",
				Trials: []verdict.Trial{{N: 1, Notes: []string{"new worker 12 listed"}}}},
			{Suite: "3517", Upstream: "haproxy/haproxy#3517", Title: "Multiple peers sections lose stick tables on reload",
				Build: "deb:forky", Name: "3.4.7-1", Version: "3.4.7-1", Verdict: verdict.Reproduced,
				TrialsRun: 3, TrialsViolated: 3, Reason: "first/marker lost in 3 of 3 reloads", DurationS: 20,
				Evidence: "02-3517-3.4.7-1", Noun: "reloads", VV: "HAProxy version 3.4.7-1\n",
				Config: "global\n</pre><script>alert(1)</script>\n",
				Steps:  []string{"start with two peers sections", "reload"},
				Trials: []verdict.Trial{{N: 1, Violation: "first/marker lost", Duration: 1500 * time.Millisecond,
					Blocks: []verdict.Block{{Title: "show peers", Text: "0x55d first: 1 entries\n"}},
					Exchanges: []record.Exchange{
						{At: at, Target: "master", Command: "show proc", Output: "#<PID> <type>\n8 worker\n"},
						{At: at, Target: "worker 8", Command: "@!8 show peers", Output: "peers-poll-early"},
						{At: at, Target: "worker 8", Command: "@!8 show peers", Output: "peers-poll-last"},
						{At: at, Target: "worker 8", Command: "@!8 show table first/marker", Output: "# table: first/marker, size:1, used:0"},
					}}}},
			{Suite: "3519", Upstream: "haproxy/haproxy#3519", Title: "alive flag",
				Build: "deb:trixie", Name: "3.0.11-1+deb13u4", Verdict: verdict.Inconclusive,
				Reason: "2 CPUs < 16 threads: this machine cannot show it"},
			{Suite: "3519", Upstream: "not an issue ref", Title: "alive flag",
				Build: "deb:forky", Name: "3.4.7-1", Verdict: verdict.Error, Reason: "deb:forky is not served"},
		},
	}
}

func renderHTML(t *testing.T, run Run) string {
	t.Helper()
	out, err := HTML(run)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func between(t *testing.T, s, from, to string) string {
	t.Helper()
	i := strings.Index(s, from)
	if i < 0 {
		t.Fatalf("no %q in page", from)
	}
	j := strings.Index(s[i:], to)
	if j < 0 {
		t.Fatalf("no %q after %q", to, from)
	}
	return s[i : i+j+len(to)]
}

func TestHTMLWellFormedEnough(t *testing.T) {
	page := renderHTML(t, htmlSample())
	if !strings.HasPrefix(page, "<!DOCTYPE html>\n<html") || !strings.HasSuffix(page, "</html>\n") {
		t.Errorf("page is not one html document:\n%.200s...%s", page, page[max(0, len(page)-200):])
	}
	for _, tag := range []string{"html", "head", "body", "style", "table", "thead", "tbody", "tr", "section", "details", "pre", "dl", "ul", "ol", "p", "a"} {
		if o, c := len(regexp.MustCompile(`<`+tag+`[ >]`).FindAllString(page, -1)), strings.Count(page, "</"+tag+">"); o != c || o == 0 {
			t.Errorf("<%s>: %d opened, %d closed", tag, o, c)
		}
	}
	ids := map[string]int{}
	for _, m := range regexp.MustCompile(` id="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		ids[m[1]]++
	}
	for id, n := range ids {
		if n != 1 {
			t.Errorf("id %q appears %d times", id, n)
		}
	}
	for _, want := range []string{
		"harp run 20260102T030405Z-00ab", "Started 2026-01-02T03:04:05Z", "harp matrix --suites 3517,3519",
		"Changes since 20260101T030405Z-00aa", "<li>regressed: #3517 on 3.4.7-1: PASS -&gt; REPRODUCED</li>",
		"n/m = trials that violated the expectation / trials run",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestHTMLMatrix(t *testing.T) {
	run := htmlSample()
	page := renderHTML(t, run)
	matrix := between(t, page, `<table class="matrix">`, "</table>")
	for class, n := range map[string]int{"v-PASS": 1, "v-REPRODUCED": 1, "v-INCONCLUSIVE": 1, "v-ERROR": 1, "missing": 0} {
		if got := strings.Count(matrix, `class="`+class+`"`); got != n {
			t.Errorf("matrix has %d cells of class %s, want %d", got, class, n)
		}
	}
	if !strings.Contains(matrix, `<th title="deb:trixie">3.0.11-1&#43;deb13u4</th><th title="deb:forky">3.4.7-1</th>`) {
		t.Errorf("matrix header:\n%s", matrix)
	}
	rows := strings.Split(between(t, matrix, "<tbody>", "</tbody>"), "<tr>")[1:]
	if len(rows) != 2 {
		t.Fatalf("matrix has %d rows:\n%s", len(rows), matrix)
	}
	want := [][]string{
		{`<a href="https://github.com/haproxy/haproxy/issues/3517">#3517</a> Multiple peers sections lose stick tables on reload</th>`,
			`<td class="v-PASS"><a href="#r-01">PASS 0/3</a></td><td class="v-REPRODUCED"><a href="#r-02">REPRODUCED 3/3</a></td>`},
		{`<a href="https://github.com/haproxy/haproxy/issues/3519">#3519</a> alive flag</th>`,
			`<td class="v-INCONCLUSIVE"><a href="#r-03">INCONCLUSIVE: 2 CPUs &lt; 16 threads: this machine cannot show it</a></td><td class="v-ERROR"><a href="#r-04">ERROR: deb:forky is not served</a></td>`},
	}
	for i, row := range rows {
		for _, w := range want[i] {
			if !strings.Contains(row, w) {
				t.Errorf("matrix row %d lacks %q:\n%s", i+1, w, row)
			}
		}
	}
	for _, m := range regexp.MustCompile(`href="#(r-\d\d)"`).FindAllStringSubmatch(matrix, -1) {
		if !strings.Contains(page, `<section id="`+m[1]+`">`) {
			t.Errorf("cell links to #%s, which is not in the page", m[1])
		}
	}
	if n := len(regexp.MustCompile(`href="#r-\d\d"`).FindAllString(matrix, -1)); n != 4 {
		t.Errorf("matrix has %d cell links, want 4", n)
	}
	// A suite not run on every build shows "-" there.
	run.Results = run.Results[:3]
	matrix = between(t, renderHTML(t, run), `<table class="matrix">`, "</table>")
	if !strings.Contains(matrix, `<td class="v-INCONCLUSIVE"><a href="#r-03">INCONCLUSIVE: 2 CPUs &lt; 16 threads: this machine cannot show it</a></td><td class="missing">-</td></tr>`) {
		t.Errorf("missing cell not shown as -:\n%s", matrix)
	}
}

func TestHTMLSections(t *testing.T) {
	page := renderHTML(t, htmlSample())
	sec := map[string]string{}
	for _, id := range []string{"r-01", "r-02", "r-03", "r-04"} {
		sec[id] = between(t, page, `<section id="`+id+`">`, "</section>")
	}
	for id, want := range map[string][]string{
		"r-01": {`<h2 class="v-PASS">#3517 on 3.0.11-1&#43;deb13u4: PASS</h2>`, "expected behaviour held in 3 of 3 reloads",
			"3 run, 0 violated the expectation", "12.3 s", "<code>make test-3517 HAPROXY=&#39;deb:trixie&#39;</code>",
			"reload 1: <span class=\"t-held\">held</span>", "<li>new worker 12 listed</li>",
			"<details><summary>haproxy -vv</summary><pre>HAProxy version 3.0.11-1&#43;deb13u4</pre></details>"},
		"r-02": {`<h2 class="v-REPRODUCED">#3517 on 3.4.7-1: REPRODUCED</h2>`, "<code>deb:forky</code>", "HAProxy version</dt><dd>3.4.7-1</dd>",
			`reload 1: <span class="t-violated">VIOLATED: first/marker lost</span> (1.5 s)`, "<pre>0x55d first: 1 entries</pre>",
			"<li>start with two peers sections</li>"},
		"r-03": {`<h2 class="v-INCONCLUSIVE">#3519 on 3.0.11-1&#43;deb13u4: INCONCLUSIVE</h2>`, "2 CPUs &lt; 16 threads",
			`<a href="https://github.com/haproxy/haproxy/issues/3519">haproxy/haproxy#3519</a>: alive flag`},
		"r-04": {`<h2 class="v-ERROR">#3519 on 3.4.7-1: ERROR</h2>`, "<p>not an issue ref: alive flag</p>"},
	} {
		for _, w := range want {
			if !strings.Contains(sec[id], w) {
				t.Errorf("section %s lacks %q:\n%s", id, w, sec[id])
			}
		}
	}
	// Evidence links, relative to the run directory, only where there is evidence.
	for id, ev := range map[string]string{"r-01": "01-3517-3.0.11-1+deb13u4", "r-02": "02-3517-3.4.7-1", "r-03": "", "r-04": ""} {
		for _, f := range []string{"trials.json", "haproxy.cfg", "haproxy-vv.txt"} {
			// html/template writes + as &#43; in attributes too; a browser reads +.
			has := strings.Contains(sec[id], `<a href="`+strings.ReplaceAll(ev, "+", "&#43;")+"/"+f+`">`+f+"</a>")
			if has != (ev != "") || (ev == "" && strings.Contains(sec[id], f)) {
				t.Errorf("section %s: evidence link to %s: %v, want %v", id, f, has, ev != "")
			}
		}
	}
	// The transcript is folded: polls dropped, a repeated command keeps its last answer.
	tr := between(t, sec["r-02"], "<details><summary>Runtime transcript", "</details>")
	for _, w := range []string{"03:04:05.000 worker 8&gt; @!8 show peers\npeers-poll-last\n", "@!8 show table first/marker\n# table: first/marker"} {
		if !strings.Contains(tr, w) {
			t.Errorf("transcript lacks %q:\n%s", w, tr)
		}
	}
	for _, bad := range []string{"show proc", "8 worker", "peers-poll-early"} {
		if strings.Contains(page, bad) {
			t.Errorf("page shows poll %q", bad)
		}
	}
	if strings.Contains(page, "<details open") {
		t.Error("a details block is open")
	}
	// The configuration is escaped, not interpreted.
	if !strings.Contains(sec["r-02"], "<details><summary>Configuration</summary><pre>global\n&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;</pre></details>") {
		t.Errorf("configuration not escaped:\n%s", sec["r-02"])
	}
	if strings.Contains(sec["r-03"], "<details>") {
		t.Errorf("section without vv, config or trials has details:\n%s", sec["r-03"])
	}
}

func TestHTMLSelfContained(t *testing.T) {
	page := renderHTML(t, htmlSample())
	low := strings.ToLower(page)
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "src=", "@import", "url(", "http://", "//fonts", "<base"} {
		if strings.Contains(low, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	// The only absolute URLs are links to the upstream issues.
	for _, m := range regexp.MustCompile(`.{0,9}https://[^"<\s]*`).FindAllString(page, -1) {
		if !regexp.MustCompile(`^<a href="https://github\.com/haproxy/haproxy/issues/\d+$`).MatchString(m) {
			t.Errorf("absolute URL outside an upstream-issue link: %q", m)
		}
	}
	if n := strings.Count(page, "https://"); n != 5 { // 2 matrix rows + 3 sections with an issue ref
		t.Errorf("%d absolute URLs, want 5", n)
	}
}
