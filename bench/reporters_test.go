package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/harp-project/harp/images"
)

// reporter is the script a reporter attached to an upstream issue (read
// where the project keeps them, ../shared/anchors/seed-<issue>, or under
// HARP_ANCHORS: the reporters' code, not harp's, so not copied into the
// repository), how it runs and what its output concludes.
type reporter struct {
	dir, script string
	args        []string
	// conclude reads the script's output and exit status: REPRODUCED or
	// PASS and why, or "" when the script came to no conclusion (it
	// failed, or printed less than its rounds).
	conclude func(out string, code int) (verdict, why string)
}

var reporters = map[string]reporter{
	// python3 reproduce.py /path/to/haproxy haproxy.log, in the directory
	// holding haproxy.cfg: three reloads, each round's two marker tables
	// printed after it.
	"3517": {dir: "seed-3517", script: "reproduce.py", args: []string{images.Binary, "haproxy.log"}, conclude: conclude3517},
	// python3 repro-collision.py /path/to/haproxy: five trials, SURVIVED
	// or PREMATURE_CLOSE each.
	"3519": {dir: "seed-3519", script: "repro-collision.py", args: []string{images.Binary}, conclude: conclude3519},
}

// The marker the #3517 script sets in both tables before each reload.
var marker3517 = regexp.MustCompile(`key=192\.0\.2\.1 .*gpc0=1\b`)

// conclude3517: the script prints, after each reload, "Round N" and both
// tables; a round whose table lacks the marker (gpc0=1) lost it, which
// is the issue. All three rounds holding both markers is a pass.
func conclude3517(out string, code int) (string, string) {
	if code != 0 {
		return "", fmt.Sprintf("exited %d", code)
	}
	rounds := regexp.MustCompile(`(?m)^Round \d+$`).Split(out, -1)[1:]
	if len(rounds) != 3 {
		return "", fmt.Sprintf("printed %d of 3 rounds", len(rounds))
	}
	lost := 0
	for _, r := range rounds {
		for _, t := range []string{"first/marker", "second/marker"} {
			if dump, ok := tableDump(r, t); !ok || !marker3517.MatchString(dump) {
				lost++
				break
			}
		}
	}
	if lost > 0 {
		return "REPRODUCED", fmt.Sprintf("a marker lost in %d of 3 rounds", lost)
	}
	return "PASS", "both markers held in 3 of 3 rounds"
}

// tableDump is one `show table` answer in a round's output: from its
// "# table: <name>," header to the blank line that ends it.
func tableDump(round, table string) (string, bool) {
	i := strings.Index(round, "# table: "+table+",")
	if i < 0 {
		return "", false
	}
	dump := round[i:]
	if j := strings.Index(dump, "\n\n"); j >= 0 {
		dump = dump[:j]
	}
	return dump, true
}

// conclude3519: a trial printing PREMATURE_CLOSE saw HAProxy close the
// replacement, which is the issue; five SURVIVED is a pass.
func conclude3519(out string, code int) (string, string) {
	closed := len(regexp.MustCompile(`(?m)^PREMATURE_CLOSE `).FindAllString(out, -1))
	survived := len(regexp.MustCompile(`(?m)^SURVIVED `).FindAllString(out, -1))
	switch {
	case code != 0:
		return "", fmt.Sprintf("exited %d after %d trials", code, closed+survived)
	case closed > 0:
		return "REPRODUCED", fmt.Sprintf("PREMATURE_CLOSE in %d of %d trials", closed, closed+survived)
	case survived == 5:
		return "PASS", "SURVIVED in 5 of 5 trials"
	}
	return "", fmt.Sprintf("printed %d of 5 trials", survived)
}

// script runs the issue's reporter script in py's image and times it (the
// container's creation to its removal, as a user's `docker run` would).
func (x *bench) script(issue string, py images.Python) (verdict, why string, took time.Duration) {
	r := reporters[issue]
	dir := filepath.Join(anchors(), r.dir)
	if _, err := os.Stat(filepath.Join(dir, r.script)); err != nil {
		x.b.Fatalf("the #%s reporter's script, the baseline: %v (set HARP_ANCHORS to the directory holding seed-%s/)", issue, err, issue)
	}
	t0 := time.Now()
	out, code, err := x.builder.RunScript(x.ctx, py, dir, r.script, r.args, 5*time.Minute)
	took = time.Since(t0)
	if err != nil {
		x.b.Errorf("%s's reporter script in %s could not run: %v", issue, py.Image, err)
		return "", err.Error(), took
	}
	if verdict, why = r.conclude(out, code); verdict == "" {
		x.b.Errorf("%s's reporter script in %s came to no conclusion (%s):\n%s", issue, py.Image, why, lastLines(out, 30))
	}
	progress("reporter's script for #%s: %s (%s) (%.1f s)", issue, verdict, why, took.Seconds())
	return verdict, why, took
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// anchors is the directory holding the reporters' scripts.
func anchors() string {
	if d := os.Getenv("HARP_ANCHORS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "anchors")
}
