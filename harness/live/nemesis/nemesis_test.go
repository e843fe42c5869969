package nemesis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/live/cli"
)

func TestOffInjectsNothing(t *testing.T) {
	Disable()
	out, err := CLI(context.Background(), "stats", "show info", func() (string, error) { return "ok\n", nil })
	if out != "ok\n" || err != nil || Faults() != nil || Toxiproxy("clear") != nil || HTTP("x") != nil {
		t.Fatal("the nemesis is off")
	}
}

func TestFaultsAreInjectedAndRecorded(t *testing.T) {
	Enable(7)
	defer Disable()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	injected, answered, ran := 0, 0, 0
	for range 300 {
		out, err := CLI(ctx, "stats", "show info", func() (string, error) { ran++; return "ok\n", nil })
		switch {
		case errors.Is(err, ErrInjected):
			injected++
		case err == nil && out == "ok\n":
			answered++
		default:
			t.Fatalf("%q %v", out, err)
		}
	}
	kinds := map[string]int{}
	for _, f := range Faults() {
		kinds[f.Kind]++
	}
	if injected == 0 || answered < 200 || kinds["cli-timeout"] == 0 || kinds["cli-close"] == 0 || kinds["cli-lost"] == 0 || kinds["cli-late"] == 0 {
		t.Fatalf("injected %d answered %d kinds %v", injected, answered, kinds)
	}
	if got := kinds["cli-timeout"] + kinds["cli-close"] + kinds["cli-lost"]; got != injected {
		t.Fatalf("every failed exchange is recorded: %d recorded, %d failed", got, injected)
	}
	// A lost answer's command ran: HAProxy saw it, and it is not marked
	// as never sent.
	if ran != answered+kinds["cli-lost"] {
		t.Fatalf("ran %d, answered %d, lost %d", ran, answered, kinds["cli-lost"])
	}
	m := Mark()
	for range 100 {
		Toxiproxy("clear node1->node2")
	}
	if len(Since(m)) == 0 {
		t.Fatal("no toxiproxy call failed in 100")
	}
}

func TestSeedFromTheEnvironment(t *testing.T) {
	defer Disable()
	t.Setenv(Env, "nine")
	if _, err := FromEnv(); err == nil {
		t.Fatal("a seed that is no number is an error, not a run without faults")
	}
	t.Setenv(Env, "9")
	if on, err := FromEnv(); !on || err != nil {
		t.Fatal(on, err)
	}
	if s, ok := Seed(); !ok || s != 9 {
		t.Fatal(s, ok)
	}
}

// A starved CPU that began before a trial and lasts into it is one of the
// trial's faults: its record must not hide what slowed the trial.
func TestSinceKeepsALastingFault(t *testing.T) {
	s := &state{stop: make(chan struct{})}
	on.Store(s)
	defer on.Store(nil)
	s.lasting("cpu-starve", "harp", "burning", time.Hour)
	s.record("cli-late", "stats", "before")
	m := Mark()
	s.record("docker-slow", "port", "after")
	var got []string
	for _, f := range Since(m) {
		got = append(got, f.Kind)
	}
	if strings.Join(got, " ") != "cpu-starve docker-slow" {
		t.Errorf("faults of the trial: %v", got)
	}
}

// Enabled, the nemesis reaches every exchange path: raw exchanges,
// dials, reads to a close and the peers client, each fault recorded.
func TestExchangePathsReached(t *testing.T) {
	Enable(11)
	defer Disable()
	if cli.Fault == nil || cli.SendFault == nil {
		t.Fatal("the hooks are not set")
	}
	for range 400 {
		cli.Fault(context.Background(), "raw", "9998/tcp")
		cli.Fault(context.Background(), "dial", "9998/tcp")
		cli.Fault(context.Background(), "read-to-close", "10000/tcp")
		cli.SendFault("send")
	}
	kinds := map[string]int{}
	for _, f := range Faults() {
		kinds[f.Kind]++
	}
	for _, k := range []string{"raw-close", "raw-late", "raw-cut", "dial-fail", "read-end", "read-late", "peer-stall", "peer-end"} {
		if kinds[k] == 0 {
			t.Errorf("no %s in %v", k, kinds)
		}
	}
	Disable()
	if cli.Fault != nil || cli.SendFault != nil {
		t.Error("Disable leaves the hooks set")
	}
}

// Only reads lose their answer after HAProxy ran them: a write whose
// outcome harp lost would stop the run (ERROR) and prove nothing more.
func TestIsRead(t *testing.T) {
	for cmd, want := range map[string]bool{"show info": true, "@1 show table t": true, "@!8 show peers": true,
		"@!8 set table second/marker key 192.0.2.1 data.gpc0 1": false, "set table t key k data.gpc0 1": false, "reload": false} {
		if isRead(cmd) != want {
			t.Errorf("%q: %v", cmd, !want)
		}
	}
}
