package issue3517

import (
	"reflect"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/live/node"
)

func TestReloadNotes(t *testing.T) {
	r := node.Reload{OldPID: 8, NewPID: 9, NewUp: 1234567 * time.Microsecond, OldExited: true, OldGone: 2345678 * time.Microsecond}
	if got, want := reloadNotes(r, node.BySignal, 20*time.Second), []string{"new worker 9 listed 1.235s after SIGUSR2", "old worker 8 gone 2.346s after SIGUSR2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("old worker gone: %q, want %q", got, want)
	}
	r.OldExited = false
	if got, want := reloadNotes(r, node.BySignal, 20*time.Second)[1], "old worker 8 still listed 20s after SIGUSR2"; got != want {
		t.Errorf("old worker still there: %q, want %q", got, want)
	}
}
