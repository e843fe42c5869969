package remotepeer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/live/peers"
)

// Released says whether the peer closed the session within its wait.
func TestReleased(t *testing.T) {
	for _, c := range []struct {
		hold time.Duration
		want string
	}{
		{50 * time.Millisecond, ""},
		{time.Minute, "HAProxy did not release the superseded session within 200ms (its socket is still open)"},
	} {
		p, _ := fakePeer(t, c.hold, "200")
		conn, _, err := p.Dial(context.Background(), peers.Options{})
		if err != nil || conn == nil {
			t.Fatalf("dial: %v", err)
		}
		if got := Released(conn, 200*time.Millisecond); got != c.want {
			t.Errorf("held %s: %q, want %q", c.hold, got, c.want)
		}
		conn.Close()
	}
	p, _ := fakePeer(t, time.Minute, "200")
	conn, _, _ := p.Dial(context.Background(), peers.Options{})
	conn.Close()
	if got := Released(conn, 200*time.Millisecond); !strings.HasPrefix(got, "harp's client ended the superseded session itself") {
		t.Errorf("closed by harp: %q", got)
	}
}
