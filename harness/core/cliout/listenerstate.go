package cliout

import (
	"fmt"
	"regexp"
)

var listenerStateRe = regexp.MustCompile(`\bl\.st=([A-Z]+) fe=(\S+)`)

// ListenerStates reads `show fd`'s listener lines: each frontend's
// listener state (RDY accepting, LIM limited by a rate or a global
// limit, FUL at its maxconn, PAU paused, ...). An answer naming no
// listener state is an error: nothing can be said of any listener then.
func ListenerStates(showFD string) (map[string]string, error) {
	ms := listenerStateRe.FindAllStringSubmatch(showFD, -1)
	if ms == nil {
		return nil, fmt.Errorf("show fd names no listener state (l.st=)")
	}
	out := map[string]string{}
	for _, m := range ms {
		out[m[2]] = m[1]
	}
	return out, nil
}
