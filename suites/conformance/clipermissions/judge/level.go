package judge

import "strings"

// CutLevel reads the answer to `<cmd>; show cli level` on a socket of
// level: when its last line is the level, the rest is HAProxy's whole
// answer to cmd (an empty one a silent success, not a connection that
// closed early), and ok.
func CutLevel(out, level string) (answer string, ok bool) {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == level {
		return strings.Join(lines[:len(lines)-1], "\n"), true
	}
	return "", false
}

// Denied says whether an answer is a refusal instead of the command's
// output: "Permission denied", a command hidden from the socket's level
// ("Unknown command"), or "insufficient privileges".
func Denied(out string) bool {
	for _, r := range []string{"Permission denied", "Unknown command", "insufficient privileges"} {
		if strings.Contains(out, r) {
			return true
		}
	}
	return false
}

// Listed is the lines of `show map` or `show acl` as "[a, b]", each
// without its entry pointer (which differs between readings): a reading
// to compare before and after a command.
func Listed(out string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if _, rest, ok := strings.Cut(l, " "); ok && strings.HasPrefix(l, "0x") {
			l = rest
		}
		lines = append(lines, l)
	}
	return "[" + strings.Join(lines, ", ") + "]"
}
