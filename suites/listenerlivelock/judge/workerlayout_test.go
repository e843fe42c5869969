package judge

import "testing"

func TestLayoutDiffers(t *testing.T) {
	want := WorkerLayout{Threads: 4, Groups: 4, Listeners: 4}
	for _, c := range []struct {
		got  WorkerLayout
		text string
	}{
		{WorkerLayout{Version: "3.2.0", Threads: 4, Groups: 4, Listeners: 4}, ""},
		{WorkerLayout{Threads: 4, Groups: 1, Listeners: 1}, "the worker runs 1 thread groups, the config asks 4"},
		{WorkerLayout{Threads: 2, Groups: 4, Listeners: 4}, "the worker runs 2 threads, the config asks 4"},
		{WorkerLayout{Threads: 4, Groups: 4, Listeners: 1}, `the frontend has 1 listeners, the layout "groups" wants 4`},
	} {
		if got := c.got.Differs(want, "groups"); got != c.text {
			t.Errorf("%+v: %q, want %q", c.got, got, c.text)
		}
	}
}
