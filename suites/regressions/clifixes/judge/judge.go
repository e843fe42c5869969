// Package judge holds upstream-fixes-cli's cases (fixtures/upstream-fixes/cli)
// and the Go judges of those whose file says `want go`; pure, so that
// `make unit` tests them alone on facts captured from real builds.
package judge

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/harp-project/harp/fixtures"
	"github.com/harp-project/harp/harness/core/fixcase"
	"github.com/harp-project/harp/harness/core/text"
)

// Cases in their files' order.
var Cases = fixcase.MustLoadJudged(fixtures.UpstreamFixes, "upstream-fixes/cli", goWants)

var goWants = fixcase.GoWants{
	"cli-httpclient-wait-no-spin": func(a string) (bool, string, error) {
		var idle, waiting int64
		if _, err := fmt.Sscanf(a, "loops per second: %d idle, %d with the request waiting after the half-close", &idle, &waiting); err != nil {
			return false, "", fmt.Errorf("no loop rates in %q", text.OneLine(a, 200))
		}
		return waiting <= max(10*idle, spinFloor), fmt.Sprintf("the worker looped %d times a second while the CLI's command waited after the client's half-close (%d idle): the CLI was woken in a loop", waiting, idle), nil
	},
	"cli-old-worker-idle-after-reload": func(a string) (bool, string, error) {
		if strings.HasPrefix(a, "the old worker died") {
			return false, a, nil
		}
		var rate int64
		if _, err := fmt.Sscanf(a, "the old worker looped %d times a second after the reload", &rate); err != nil {
			return false, "", fmt.Errorf("no loop rate in %q", text.OneLine(a, 200))
		}
		return rate <= spinFloor, fmt.Sprintf("the old worker looped %d times a second with nothing to do but wait for a held session: it was woken in a loop", rate), nil
	},
	"cli-immediate-abort-released": func(a string) (bool, string, error) {
		// Only sessions born with the case count: one an earlier case
		// left (2.7.0 kept a 30s-old one) is not this bug's.
		young := 0
		for _, l := range strings.Split(fixcase.Then(a), "\n") {
			if m := sessAge.FindStringSubmatch(l); m != nil && strings.Contains(l, " fe=GLOBAL ") {
				if age, err := strconv.Atoi(m[1]); err == nil && age < 20 {
					young++
				}
			}
		}
		return young <= 1, "aborted CLI connections left their sessions behind", nil
	},
	"cli-pipelined-then-close-all-run": func(a string) (bool, string, error) {
		// Captures from before the attempts were five have one, and no count.
		attempts := 1
		fmt.Sscanf(a, "%d connections", &attempts)
		var ran []string
		ok := true
		for i := 1; i <= attempts; i++ {
			k := strings.Count(fixcase.Then(a), fmt.Sprintf(" key=10.%d.0.", i))
			ok = ok && k == Pipes
			ran = append(ran, strconv.Itoa(k))
		}
		return ok, fmt.Sprintf("a close right after pipelined commands stopped them: of %d, %s ran (each attempt)", Pipes, strings.Join(ran, ", ")), nil
	},
	"cli-error-ends-with-empty-line": func(a string) (bool, string, error) {
		return strings.HasSuffix(a, "\n\n"), fmt.Sprintf("the error %q lacks its line feed, so no empty line ends the answer (a prompt-mode client waits for ever)", a), nil
	},
	"cli-quit-releases-its-buffer": func(a string) (bool, string, error) {
		before, after, ok := fixcase.Arrow(a, "trash used")
		if !ok {
			return false, "", fmt.Errorf("no trash counts before and after in %q", a)
		}
		return after-before < Quits/2, fmt.Sprintf("each `quit` kept a buffer (%s)", a), nil
	},
	"show-fd-type-then-number": shownFD,
	"show-fd-any-group-form":   shownFD,
}

// sessAge is a show sess line's age in whole seconds under a minute
// ("age=12s"; older ones show minutes, hours or days).
var sessAge = regexp.MustCompile(`\bage=(\d+)s\b`)

// Quits: the connections that send only quit.
const Quits = 200

// Pipes: commands in one line (cli-pipelined-then-close-all-run's
// attempts): the client closes before their answers.
const Pipes = 50

// shownFD: the answer to `show fd ...<fd>` has that fd's line (the drive
// answers "fd N", a line feed, then HAProxy's answer).
func shownFD(a string) (bool, string, error) {
	fd, out, _ := strings.Cut(a, "\n")
	fd = strings.TrimPrefix(fd, "fd ")
	ok := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(fd) + `\s*:`).MatchString(out)
	return ok, fmt.Sprintf("fd %s was asked for, the answer was %q", fd, text.OneLine(out, 200)), nil
}

// spinFloor: loops per second no idle worker reaches (an idle one loops a
// few times a second, its stats readers aside); one woken in a loop runs
// hundreds of thousands.
const spinFloor = 5000
