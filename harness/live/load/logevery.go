package load

import "time"

// LogEvery is a Progress that logs the responses so far, named what,
// whenever the attack's elapsed whole seconds are a multiple of seconds.
func LogEvery(seconds int, what string, logf func(format string, args ...any)) func(done uint64, elapsed time.Duration) {
	return func(done uint64, el time.Duration) {
		if int(el.Seconds())%seconds == 0 {
			logf("  %s %s: %d responses so far", what, el.Round(time.Second), done)
		}
	}
}
