package fixcase

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Rule is what a case's answer must be: every term holds.
type Rule struct {
	Terms []Term
	Why   string // what a failure means; {answer} is replaced by the answer
	Go    bool   // judged by Go code that knows the case, not by Terms
}

// Term is one condition on the answer.
type Term struct {
	Op  string
	Arg string
	re  *regexp.Regexp
}

// The terms, each a test of the answer a against Arg.
var ops = map[string]func(t Term, a string) bool{
	"anything":        func(Term, string) bool { return true }, // only a death fails it
	"is":              func(t Term, a string) bool { return a == t.Arg },
	"contains":        func(t Term, a string) bool { return strings.Contains(a, t.Arg) },
	"lacks":           func(t Term, a string) bool { return !strings.Contains(a, t.Arg) },
	"starts-with":     func(t Term, a string) bool { return strings.HasPrefix(a, t.Arg) },
	"not-starts-with": func(t Term, a string) bool { return !strings.HasPrefix(a, t.Arg) },
	"matches":         func(t Term, a string) bool { return t.re.MatchString(a) },
	"once":            func(t Term, a string) bool { return strings.Count(a, t.Arg) == 1 },
	// then-lacks: the answer to Then (after ThenMark) lacks Arg.
	"then-lacks": func(t Term, a string) bool { return !strings.Contains(Then(a), t.Arg) },
	// then-matches: the answer to Then matches the regular expression Arg.
	"then-matches": func(t Term, a string) bool { return t.re.MatchString(Then(a)) },
	// no-line: no line of the answer is Arg, spaces around it aside.
	"no-line": func(t Term, a string) bool {
		for _, l := range strings.Split(a, "\n") {
			if strings.TrimSpace(l) == t.Arg {
				return false
			}
		}
		return true
	},
}

// parseTerm reads `OP` or `OP "arg"`.
func parseTerm(val string) (Term, error) {
	op, arg, _ := strings.Cut(val, " ")
	t := Term{Op: op}
	if op == "go" || op == "anything" {
		if arg != "" {
			return t, fmt.Errorf("%s takes no argument", op)
		}
		return t, nil
	}
	if ops[op] == nil {
		return t, fmt.Errorf("no term %q", op)
	}
	s, err := strconv.Unquote(strings.TrimSpace(arg))
	if err != nil {
		return t, fmt.Errorf("%s: want one Go-quoted argument, got %q", op, arg)
	}
	t.Arg = s
	if op == "matches" || op == "then-matches" {
		if t.re, err = regexp.Compile(s); err != nil {
			return t, fmt.Errorf("%s: %v", op, err)
		}
	}
	return t, nil
}

// Eval judges an answer: whether every term holds, and the why (with
// each once term's count after it). An error says the answer decides
// nothing: a once term's text never printed at all means the case's
// trigger did not happen (a build without what prints it is a case not
// applicable there, never the double print it checks).
func (r Rule) Eval(answer string) (bool, string, error) {
	ok := true
	why := strings.ReplaceAll(r.Why, "{answer}", answer)
	for _, t := range r.Terms {
		ok = ok && ops[t.Op](t, answer)
		if t.Op == "once" {
			k := strings.Count(answer, t.Arg)
			if k == 0 {
				return false, "", fmt.Errorf("%q was never printed: nothing says whether it prints twice", t.Arg)
			}
			why += fmt.Sprintf(" (%q printed %d times)", t.Arg, k)
		}
	}
	return ok, why, nil
}
