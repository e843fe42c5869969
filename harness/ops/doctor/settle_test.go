package doctor

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func instances(t *testing.T, version, sit string) []Instance {
	t.Helper()
	var ins []Instance
	for _, n := range []string{"node1", "node2", "node3"} {
		in, err := Collect(context.Background(), n, n, fromCapture(filepath.Join("..", "..", "..", "fixtures", "captures", version, "cluster", sit, n)))
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	return ins
}

// A link down and entries missing at one read are read again; what clears
// is a warning, what stays is a problem that says how long it was seen,
// and a lasting problem (identity) is not read again.
func TestSettle(t *testing.T) {
	for _, v := range versions(t) {
		t.Run(v, func(t *testing.T) {
			partition, healthy := instances(t, v, "partition"), instances(t, v, "healthy")
			seq := func(rest ...[]Instance) (func(context.Context) []Instance, *int) {
				n := 0
				return func(context.Context) []Instance {
					n++
					if n > len(rest) {
						return rest[len(rest)-1]
					}
					return rest[n-1]
				}, &n
			}

			read, n := seq(partition, healthy)
			var said []string
			d := Settle(context.Background(), Diagnose(partition), time.Second, 10*time.Millisecond, read, func(s string) { said = append(said, s) })
			if !d.Healthy || d.Reads != 3 || *n != 2 || !d.Has(Settled) || d.Has(LinkDown) {
				t.Errorf("a partition that healed: healthy %v, %d reads (%d asked), cause %q\n%s", d.Healthy, d.Reads, *n, d.Cause, d.Text())
			}
			if f, ok := d.Find(Settled, "node3", ""); !ok || f.Level != Warning || !strings.Contains(f.Message, "cleared within") || len(f.Evidence) == 0 {
				t.Errorf("the cleared link's warning: %+v", f)
			}
			if len(said) != 2 || !strings.HasPrefix(said[0], "read 1: ") || !strings.Contains(said[0], "node3") {
				t.Errorf("progress: %q", said)
			}
			if !strings.Contains(d.Text(), "read 3 times over") {
				t.Errorf("the text does not say how often it read:\n%s", d.Text())
			}

			read, n = seq(partition)
			d = Settle(context.Background(), Diagnose(partition), 200*time.Millisecond, 20*time.Millisecond, read, nil)
			if d.Healthy || !d.Has(LinkDown) || d.Has(Settled) || d.Reads < 5 || *n != d.Reads-1 {
				t.Errorf("a lasting partition: healthy %v, %d reads (%d asked)\n%s", d.Healthy, d.Reads, *n, d.Text())
			}
			if f, _ := d.Find(LinkDown, "node3", ""); !strings.Contains(strings.Join(f.Evidence, "\n"), "seen in every one of") {
				t.Errorf("a lasting link down does not say it lasted: %+v", f)
			}

			for _, sit := range []string{"identity", "healthy", "user-socket"} {
				first := Diagnose(instances(t, v, sit))
				d = Settle(context.Background(), first, time.Second, 10*time.Millisecond, func(context.Context) []Instance {
					t.Errorf("%s: read again", sit)
					return nil
				}, nil)
				if d.Reads != 1 || d.Healthy != first.Healthy || d.Cause != first.Cause {
					t.Errorf("%s: %d reads, cause %q, first %q", sit, d.Reads, d.Cause, first.Cause)
				}
			}

			// A window shorter than one pause: one read, as --settle 0.
			d = Settle(context.Background(), Diagnose(partition), 0, time.Second, func(context.Context) []Instance { t.Error("read again"); return nil }, nil)
			if d.Reads != 1 || !d.Has(LinkDown) {
				t.Errorf("--settle 0: %d reads\n%s", d.Reads, d.Text())
			}
		})
	}
}
