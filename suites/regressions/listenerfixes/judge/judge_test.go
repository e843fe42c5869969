package judge

import (
	"testing"

	"github.com/harp-project/harp/harness/core/fixcase"
)

// The judge on facts captured from the nine release tags (v2.6.0 to
// v3.4.0): the cases each release fails are those whose fix it predates
// (or whose bug it alone had).
func TestJudgeOnCaptures(t *testing.T) {
	err := fixcase.DiffCaptured("../../../../fixtures/upstream-fixes/captures", Cases, map[string][]string{
		"facts-2.6.0-a1efc048b.json": {"frontend-full-then-rate-limited-resumes", "listener-shards-close-ids-distinct", "listener-shards-distinct-ids"},
		"facts-2.7.0-437fd289f.json": {"frontend-full-then-rate-limited-resumes", "listener-shards-close-ids-distinct", "listener-shards-distinct-ids"},
		"facts-2.8.0-fdd8154ed.json": {"frontend-full-then-rate-limited-resumes", "listener-shards-close-ids-distinct", "listener-shards-distinct-ids"},
		"facts-2.9.0-fddb8c13b.json": {"frontend-full-then-rate-limited-resumes", "listener-shards-close-ids-distinct", "listener-shards-distinct-ids"},
		"facts-3.0.0-5590ada47.json": {"listener-shards-close-ids-distinct"},
		"facts-3.1.0-f2b97918e.json": {"listener-shards-close-ids-distinct", "old-worker-no-accept-wakeups", "single-shard-groups-keeps-accepting"},
		"facts-3.2.0-e134140d2.json": {"listener-shards-close-ids-distinct"},
		"facts-3.3.0-7832fb21f.json": {},
		"facts-3.4.0-64a335366.json": {},
	})
	if err != nil {
		t.Error(err)
	}
}

// Output harp cannot read is unknown (an error), never a violation
// (f084f4d failed the check on it).
func TestUnreadableListenerShardsDistinctIds(t *testing.T) {
	for _, c := range Cases {
		if c.ID == "listener-shards-distinct-ids" {
			if ok, why, err := c.Want("Unknown command, but the 'show stat' command exists in this mode.\n"); err == nil {
				t.Errorf("judged: %v %q", ok, why)
			}
			return
		}
	}
	t.Fatal("no case")
}

// A show stat without the proxy says nothing of its listeners.
func TestStatWithoutTheProxyIsUnknown(t *testing.T) {
	for _, c := range Cases {
		if c.ID == "listener-shards-distinct-ids" {
			if ok, why, err := c.Want("# pxname,svname,sid,type,\nother,FRONTEND,0,0,\n"); err == nil {
				t.Errorf("judged: %v %q", ok, why)
			}
		}
	}
}

// The old worker's dropped events against the new worker's connections:
// none (a fixed build) holds, one for each fails, and an answer without
// the count is unknown, never a pass.
func TestFewWakeups(t *testing.T) {
	for a, want := range map[string]bool{
		"poll_drop_fd of the old worker: +0 over 200 connections served by the new worker (0 before)":                         true,
		"poll_drop_fd of the old worker: +49 over 200 connections served by the new worker (3 before)":                        true,
		"poll_drop_fd of the old worker: +200 over 200 connections served by the new worker (0 before)":                       false,
		"the old worker died after the reload: [WARNING]  (1) : Former worker (8) exited with code 132 (Illegal instruction)": false,
	} {
		if ok, _, err := fewWakeups(a); err != nil || ok != want {
			t.Errorf("%q: %v, %v; want %v", a, ok, err, want)
		}
	}
	if _, _, err := fewWakeups("Unknown command"); err == nil {
		t.Error("no count judged")
	}
}
