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
		"facts-3.1.0-f2b97918e.json": {"listener-shards-close-ids-distinct"},
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
