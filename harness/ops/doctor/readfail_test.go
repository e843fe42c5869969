package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/live/cli"
)

// A command whose answer harp could not read (timed out, reset, never
// sent) is a read that failed, said as such: never "the socket refused
// it, probably not at admin level" (#40). A refusal still is.
func TestFailedReadIsNoLevelProblem(t *testing.T) {
	node1 := fromCapture(filepath.Join("..", "..", "..", "fixtures", "captures", "3.4.7-1", "cluster", "partition", "node1"))
	timeout := fmt.Errorf("read tcp 127.0.0.1:40000->127.0.0.1:9999: %w", os.ErrDeadlineExceeded)
	reset := errors.New("read tcp 127.0.0.1:40000->127.0.0.1:9999: read: connection reset by peer")
	notSent := fmt.Errorf("%w: dial tcp 127.0.0.1:9999: connect: connection refused", cli.ErrNotSent)
	for _, c := range []struct {
		name, cmd string
		err       error
		says      string
	}{
		{"show peers timed out", "show peers", timeout, "timed out"},
		{"show peers reset", "show peers", reset, "failed"},
		{"show peers not sent", "show peers", notSent, "failed"},
		{"a table timed out", "show table cluster/tbl", timeout, "timed out"},
	} {
		q := func(ctx context.Context, cmd string) (string, error) {
			if cmd == c.cmd {
				return "", c.err
			}
			return node1(ctx, cmd)
		}
		in, err := Collect(context.Background(), "node1", "node1", q)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		d := Diagnose([]Instance{in})
		text := d.Text()
		if d.Has(SocketLevel) || strings.Contains(text, "admin level") {
			t.Errorf("%s: called a socket below admin level:\n%s", c.name, text)
		}
		f, ok := d.Find(Unreachable, "node1", "")
		if !ok || f.Level != Problem || f.Instance != "node1" || !strings.Contains(f.Message, c.cmd) || !strings.Contains(f.Message, c.says) ||
			!strings.Contains(f.Message, "not a permission problem") || len(f.Evidence) != 1 || !strings.Contains(f.Evidence[0], c.err.Error()) {
			t.Errorf("%s: no finding that the read %s: %+v\n%s", c.name, c.says, f, text)
		}
		if d.Healthy || d.Cause != f.Message {
			t.Errorf("%s: a failed read is not the likely cause: %q", c.name, d.Cause)
		}
	}

	// The socket's own refusal is still the level problem, alone.
	q := func(ctx context.Context, cmd string) (string, error) {
		if cmd == "show peers" {
			return "Permission denied\n", nil
		}
		return node1(ctx, cmd)
	}
	in, err := Collect(context.Background(), "node1", "node1", q)
	if err != nil {
		t.Fatal(err)
	}
	d := Diagnose([]Instance{in})
	if !d.Has(SocketLevel) || d.Has(Unreachable) {
		t.Errorf("a refusal: %v\n%s", d.Codes(), d.Text())
	}
}

// A socket answering some commands and failing others is both findings,
// each with its own commands.
func TestRefusedAndFailedApart(t *testing.T) {
	in := node("b", nil)
	in.Errors = map[string]string{"show peers": "read tcp 1->2: i/o timeout", "show table s/t": "Permission denied"}
	fs := socketLevel([]Instance{in})
	if len(fs) != 2 {
		t.Fatalf("%+v", fs)
	}
	for _, f := range fs {
		switch f.Code {
		case SocketLevel:
			if len(f.Evidence) != 1 || !strings.HasPrefix(f.Evidence[0], "show table s/t") {
				t.Errorf("level: %+v", f)
			}
		case Unreachable:
			if len(f.Evidence) != 1 || !strings.HasPrefix(f.Evidence[0], "show peers") || !strings.Contains(f.Message, "timed out") {
				t.Errorf("failed: %+v", f)
			}
		default:
			t.Errorf("%+v", f)
		}
	}
}
