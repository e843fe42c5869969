package cliout

import (
	"slices"
	"testing"
)

func TestAllResynced(t *testing.T) {
	done := PeersSection{Name: "a", Flags: PeersResyncLocalFinished | PeersResyncRemoteFinished}
	half := PeersSection{Name: "b", Flags: PeersResyncLocalFinished}
	for _, c := range []struct {
		secs []PeersSection
		want bool
	}{
		{nil, false},
		{[]PeersSection{done}, true},
		{[]PeersSection{done, half}, false},
	} {
		if got := AllResynced(c.secs); got != c.want {
			t.Errorf("AllResynced(%+v) = %v", c.secs, got)
		}
	}
}

func TestWorkerExitTexts(t *testing.T) {
	exits := ParseWorkerExits("[WARNING]  (1) : Former worker (8) exited with code 0 (Exit)\n" +
		"[ALERT]    (1) : Current worker (9) exited with code 134 (Aborted)\n")
	if len(exits) != 2 {
		t.Fatalf("exits = %+v", exits)
	}
	if got := exits[1].Ended(); got != "exited with code 134 (Aborted)" {
		t.Errorf("Ended = %q", got)
	}
	if got := FailedExits(exits); !slices.Equal(got, []string{"[ALERT]    (1) : Current worker (9) exited with code 134 (Aborted)"}) {
		t.Errorf("FailedExits = %q", got)
	}
	if got := FailedExits(exits[:1]); got != nil {
		t.Errorf("FailedExits of clean exits = %q, want nil", got)
	}
}

func TestDiffer(t *testing.T) {
	tb, err := ParseTable("# table: s1/t, type: string, size:100, used:2\n" +
		"0x1: key=k0 use=0 exp=3600000 shard=0 gpc0=1\n0x2: key=k2 use=0 exp=3600000 shard=0 gpc0=9\n")
	if err != nil {
		t.Fatal(err)
	}
	lost, wrong := tb.Differ("gpc0", []string{"k0", "k1", "k2"}, []string{"1", "2", "3"})
	if !slices.Equal(lost, []string{"k1"}) || !slices.Equal(wrong, []string{"k2 gpc0=9 (want 3)"}) {
		t.Errorf("lost %q, wrong %q", lost, wrong)
	}
	if lost, wrong := tb.Differ("gpc0", []string{"k0"}, []string{"1"}); lost != nil || wrong != nil {
		t.Errorf("a table holding every entry: lost %q, wrong %q", lost, wrong)
	}
}

func TestStatColumns(t *testing.T) {
	r := StatRow{Fields: map[string]string{"slim": "0", "status": "OPEN"}}
	if got := r.Columns("slim", "status", "absent"); got != "slim=0 status=OPEN absent=" {
		t.Errorf("Columns = %q", got)
	}
}
