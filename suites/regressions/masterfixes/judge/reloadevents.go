package judge

import (
	"regexp"
	"strings"
)

// reloadEventRe is one of the master's lines about a reload: it begins
// one, starts its new worker, or reports that worker loaded.
var reloadEventRe = regexp.MustCompile(`(?m)^\[NOTICE\]\s+\(\d+\) : (Reloading HAProxy|Initializing new worker \((\d+)\)|Loading success\.)`)

// ReloadEvents are the master's reload lines in output, in order, as
// "reload", "worker <pid>" and "loaded" (3.1 and later: the worker parses
// the config after the fork, and the master logs its loading success).
func ReloadEvents(out string) []string {
	var ev []string
	for _, m := range reloadEventRe.FindAllStringSubmatch(out, -1) {
		switch {
		case m[1] == "Reloading HAProxy":
			ev = append(ev, "reload")
		case strings.HasPrefix(m[1], "Initializing"):
			ev = append(ev, "worker "+m[2])
		default:
			ev = append(ev, "loaded")
		}
	}
	return ev
}
