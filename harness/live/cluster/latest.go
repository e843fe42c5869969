package cluster

import "time"

// Latest is the last of the times (what Spread gives: key -> when it was
// on every member), the zero time when there is none.
func Latest(at map[string]time.Time) time.Time {
	var last time.Time
	for _, x := range at {
		if x.After(last) {
			last = x
		}
	}
	return last
}
