package text

import "testing"

func TestDistinctKeys(t *testing.T) {
	if n := DistinctKeys(map[string][]string{"node1": {"a"}, "node2": {"a", "b"}}); n != 2 {
		t.Errorf("DistinctKeys: %d, want 2", n)
	}
	if n := DistinctKeys(nil); n != 0 {
		t.Errorf("DistinctKeys(nil): %d, want 0", n)
	}
}

func TestSumAndCounts(t *testing.T) {
	m := map[string]int{"cluster/t3": 1, "cluster/t1": 2, "cluster/t2": 3}
	if s := Sum(m); s != 6 {
		t.Errorf("Sum: %d, want 6", s)
	}
	for _, c := range []struct {
		prefix string
		max    int
		want   string
	}{
		{"", 0, "cluster/t1 2, cluster/t2 3, cluster/t3 1"},
		{"cluster/", 0, "t1 2, t2 3, t3 1"},
		{"cluster/", 2, "t1 2, t2 3, and 1 more tables"},
		{"cluster/", 3, "t1 2, t2 3, t3 1"},
	} {
		if got := Counts(m, c.prefix, c.max, "tables"); got != c.want {
			t.Errorf("Counts(%q, %d): %q, want %q", c.prefix, c.max, got, c.want)
		}
	}
	if got := Counts(nil, "", 5, "tables"); got != "" {
		t.Errorf("Counts(nil): %q, want empty", got)
	}
}
