package masterfixes

import "testing"

// Wait channels read from /proc/<pid>/wchan: a worker in its loop on this
// kernel (6.18) and on older ones, and what a starting one shows (running,
// taking its listeners over a socket pair, asleep).
func TestInEventLoop(t *testing.T) {
	for wchan, want := range map[string]bool{
		"do_epoll_wait":            true,
		"ep_poll":                  true,
		"0":                        false,
		"":                         false,
		"unix_stream_read_generic": false,
		"hrtimer_nanosleep":        false,
	} {
		if got := inEventLoop(wchan); got != want {
			t.Errorf("inEventLoop(%q) = %v, want %v", wchan, got, want)
		}
	}
}
