package judge

import (
	"strings"
	"testing"
)

// The master's lines of two reloads, the second SIGUSR2 sent while the
// first new worker parsed a big map: 3.2.0 re-executes at once (worker
// 10 never loads), 3.3.0 waits for it (output captured from both tags).
func TestReloadEvents(t *testing.T) {
	bad := `[NOTICE]   (1) : Initializing new worker (8)
[NOTICE]   (1) : Loading success.
[NOTICE]   (1) : Reloading HAProxy
[NOTICE]   (1) : Initializing new worker (10)
[NOTICE]   (1) : Reloading HAProxy
[NOTICE]   (1) : Initializing new worker (12)
[NOTICE]   (1) : Loading success.
[WARNING]  (10) : Proxy fe stopped (cumulated conns: FE: 0, BE: 0).
[WARNING]  (1) : Former worker (10) exited with code 0 (Exit)
`
	good := `[NOTICE]   (1) : Reloading HAProxy
[NOTICE]   (1) : Initializing new worker (10)
[NOTICE]   (10) : haproxy version is 3.3.0-7832fb21f
[NOTICE]   (1) : Loading success.
[NOTICE]   (1) : Reloading HAProxy
[WARNING]  (8) : Proxy fe stopped (cumulated conns: FE: 0, BE: 0).
[NOTICE]   (1) : Initializing new worker (12)
[NOTICE]   (1) : Loading success.
`
	for out, want := range map[string]string{
		bad:  "worker 8, loaded, reload, worker 10, reload, worker 12, loaded",
		good: "reload, worker 10, loaded, reload, worker 12, loaded",
		"":   "",
	} {
		if got := strings.Join(ReloadEvents(out), ", "); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
