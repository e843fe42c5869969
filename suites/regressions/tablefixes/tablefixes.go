// Package tablefixes: upstream's fixed bugs of stick tables (tracking,
// counters, keys, expiry), one case file each
// (fixtures/upstream-fixes/tables), run by harness/live/fixrun. Each case is a
// named check (upstream-fixes-tables/<case>), so docs/upstream-bugs.md
// reads every fix's verdict from the same run.
package tablefixes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/live/cli"
	"github.com/harp-project/harp/harness/live/fixrun"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/suites/regressions/tablefixes/judge"
)

var Suite = suite.Register(fixrun.Suite(fixrun.Area{
	ID:       "upstream-fixes-tables",
	Upstream: "regressions: upstream's fixed stick-table bugs",
	Title:    "Stick-table tracking, counters, keys and expiry from upstream's fixed bugs behave as their fixes made them, and none kills the worker",
	Summary:  "one node; each case (connections and requests that track keys, entries filled and left to expire, an idle worker's loop rate) expects what its upstream fix made HAProxy do; cases a build is too old for are not applicable",
	Labels:   []string{"area:regressions", "area:stick-tables"},
	Cases:    judge.Cases,
	Drives: map[string]fixrun.Drive{
		"expired-entries-all-purged":           purge,
		"sc-generic-fetch-counter-above-9":     get("www", "/"),
		"idle-worker-after-entries-expired":    idleAfterExpiry,
		"idle-worker-with-entry-in-use":        idleHeld,
		"string-key-with-nul-one-entry":        nulKey,
		"expire-before-tick-wrap-purged":       expireAcrossWrap,
		"failed-entry-allocations-not-counted": failedAllocations,
	},
}))

// purge fills tpurge, blocks the worker past the entries' expiry and
// polls the table until empty.
func purge(ctx context.Context, n *node.Node) (string, error) {
	const perLine = 50 // lines of under 2 KB: 2.9.0 dropped some of 10 KB
	// The address once: the fill must end well within the expire, and a
	// slow lookup per line (Docker's port map) would outlast it.
	addr, err := n.DirectAddr(ctx, node.StatsPort)
	if err != nil {
		return "", err
	}
	for k := 0; k < judge.PurgeKeys; k += perLine {
		// No `;` after the last: 2.6 answers the empty command after it
		// with "Unknown command".
		var line []string
		for i := k; i < k+perLine; i++ {
			line = append(line, fmt.Sprintf("set table tpurge key p%d data.gpc0 1", i))
		}
		var b strings.Builder
		b.WriteString(strings.Join(line, ";") + "\n")
		// Each line's answer is whole and says nothing (every set took);
		// the count read after checks the fill as a whole.
		r, err := cli.Raw(ctx, addr, b.String(), cli.RawOptions{Name: node.StatsPort, Wait: fixrun.AnswerWait})
		if _, err = fixrun.Answer(r, err, true); err != nil {
			return "", fmt.Errorf("filling tpurge: %w", err)
		}
		if strings.TrimSpace(r.Text) != "" {
			return "", fmt.Errorf("filling tpurge: HAProxy said %q", fixrun.OneLine(r.Text))
		}
	}
	used := func() (int, error) {
		// The list of tables, never a dump of tpurge: a dump kills the
		// expired entries it walks, orphans included.
		t, err := listedTable(ctx, n, node.StatsSocket, "tpurge")
		return t.Used, err
	}
	filled, err := used()
	if err != nil {
		return "", err
	}
	if filled < judge.PurgeKeys*3/4 {
		// Filling took near the expire: too few expire together.
		return "", fmt.Errorf("tpurge holds %d entries after %d were set", filled, judge.PurgeKeys)
	}
	// The trigger: the worker blocked past the entries' expiry. Its
	// answer comes once the delay has run, so a quicker one (the command
	// refused, or not run) blocked nothing, and decides nothing.
	t0 := time.Now()
	if err := fixrun.Setup(ctx, n, "expert-mode on; debug dev delay 8500\n"); err != nil {
		return "", err
	}
	if took := time.Since(t0); took < 8*time.Second {
		return "", fmt.Errorf("debug dev delay 8500 answered after %s: the worker was not blocked", took.Round(time.Millisecond))
	}
	left, err := node.UntilErr(ctx, 10*time.Second, 200*time.Millisecond, used, func(left int) bool { return left == 0 })
	if err != nil && !errors.Is(err, node.ErrDeadline) {
		return "", fmt.Errorf("reading tpurge after the delay: %w", err)
	}
	return fmt.Sprintf("tpurge used %d -> %d within 10s after the delay", filled, left), nil
}

// get sends one request to the node's named port: its status line.
func get(port, path string) fixrun.Drive {
	return func(ctx context.Context, n *node.Node) (string, error) {
		resp, err := n.Get(ctx, fixrun.Port(port), path, 5*time.Second)
		if err != nil {
			// Unknown, unless run then finds the worker dead: a slow
			// answer is never the bug's.
			return "", fmt.Errorf("the request: %w", err)
		}
		return strconv.Itoa(resp.StatusCode), nil
	}
}

// loopRate: show activity's loop count 2s apart, per second.
func loopRate(ctx context.Context, n *node.Node) (string, error) {
	r, err := n.LoopsPerSecond(ctx, node.StatsSocket, 2*time.Second)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d loops/s", r), nil
}

// idleAfterExpiry waits for the worker's clock to wrap, lets an entry
// expire, then measures the loop rate.
func idleAfterExpiry(ctx context.Context, n *node.Node) (string, error) {
	err := node.Poll(ctx, (judge.Wrapped+10)*time.Second, 500*time.Millisecond, func() (bool, error) {
		info, err := n.Info(ctx, node.StatsSocket)
		return err == nil && info.Int("Uptime_sec") >= judge.Wrapped, err
	})
	if err != nil {
		return "", fmt.Errorf("waiting for the worker to be up %ds: %w", judge.Wrapped, err)
	}
	// Read back at once: the entry is the trigger (expire 1s).
	if err := fixrun.Setup(ctx, n, "set table tshort key gone data.gpc0 1\n"); err != nil {
		return "", err
	}
	if err := n.WaitTableUsed(ctx, node.StatsSocket, "tshort", 0, 10*time.Second); err != nil {
		return "", fmt.Errorf("waiting for tshort to be empty: %w", err)
	}
	return loopRate(ctx, n)
}

// idleHeld holds a connection tracked in tshort past the entry's expire.
func idleHeld(ctx context.Context, n *node.Node) (string, error) {
	conn, err := n.Dial(ctx, fixrun.Port("held"))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := n.WaitTableUsed(ctx, node.StatsSocket, "theld", 1, 5*time.Second); err != nil {
		return "", fmt.Errorf("the held connection was never tracked: %w", err)
	}
	// The trigger: the entry's expire reached while the connection holds
	// it. show table shows it at once: exp=0 (2.6), or exp set again by
	// the expiry task that found the entry in use (3.x), higher than the
	// reading before. The measure that follows lasts 2 s.
	prev := int64(-1)
	err = node.Poll(ctx, 5*time.Second, 100*time.Millisecond, func() (bool, error) {
		t, err := n.Table(ctx, node.StatsSocket, "theld")
		if err != nil || len(t.Entries) != 1 {
			return false, nil // a failed reading decides nothing
		}
		exp := t.Entries[0].Exp
		reached := exp <= 0 || (prev >= 0 && exp > prev)
		prev = exp
		return reached, nil
	})
	if err != nil {
		return "", fmt.Errorf("the held connection's entry never showed its expire reached (exp=0, or set again) within 5s: %w", err)
	}
	rate, err := loopRate(ctx, n)
	if err != nil {
		return "", err
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := conn.Read(make([]byte, 1)); err == io.EOF {
		return "", fmt.Errorf("HAProxy closed the held connection before the measure ended")
	}
	return rate, nil
}

// nulKeys: with 3.0's 16 buckets a key and the same with a NUL and more
// bytes after it land apart 15 times in 16; four keys make a miss rare.
var nulKeys = []string{"AB", "CD", "EF", "GH"}

// nulKey: each key with an embedded NUL, then without it.
func nulKey(ctx context.Context, n *node.Node) (string, error) {
	for _, k := range nulKeys {
		for _, p := range []string{"/?q=" + k + "%00zz", "/?q=" + k} {
			if _, err := n.Get(ctx, fixrun.Port("nul"), p, 5*time.Second); err != nil {
				return "", fmt.Errorf("GET %s: %w", p, err)
			}
		}
	}
	t, err := n.Table(ctx, node.StatsSocket, "tnul")
	if err != nil {
		return "", err
	}
	seen := map[string]int{}
	for _, e := range t.Entries {
		seen[e.Key]++
	}
	var twice []string
	for _, k := range nulKeys {
		if seen[k] == 0 {
			return "", fmt.Errorf("key %s was never tracked in tnul", k)
		}
		if seen[k] > 1 {
			twice = append(twice, k)
		}
	}
	return fmt.Sprintf("keys listed more than once: %d %v", len(twice), twice), nil
}

// The internal clock wraps this long after HAProxy starts (it is set so,
// to show wrapping bugs early).
const tickWrap = 20 * time.Second

// expireAcrossWrap sets entries due before the clock's wrap in tshort and
// entries due after it in tlong, and watches tshort until it is empty or
// 30 s after the node's start. The node's age is the master's uptime in
// show proc (the worker starts right after it, so its clock wraps no
// earlier).
func expireAcrossWrap(ctx context.Context, n *node.Node) (string, error) {
	age := func() (time.Duration, error) {
		p, err := n.Procs(ctx)
		return p.Master.Uptime, err
	}
	a, err := age()
	if err != nil {
		return "", err
	}
	if a > 9*time.Second {
		return "", fmt.Errorf("the node was already %s old: its entries due in 5 s would be due after the clock's wrap", a)
	}
	select {
	case <-time.After(9*time.Second - a):
	case <-ctx.Done():
		return "", ctx.Err()
	}
	for _, table := range []string{"tshort", "tlong"} {
		var cmds []string
		for i := range 64 {
			cmds = append(cmds, fmt.Sprintf("set table %s key k%d data.gpc0 1", table, i))
		}
		out, err := n.Stats(ctx, strings.Join(cmds, ";"))
		if err == nil && strings.TrimSpace(out) != "" {
			err = fmt.Errorf("set table answered %q", text.OneLine(out, 200))
		}
		if err != nil {
			return "", fmt.Errorf("setting %s's keys: %w", table, err)
		}
	}
	set, err := age()
	if err != nil {
		return "", err
	}
	if set+5*time.Second > tickWrap-2*time.Second {
		return "", fmt.Errorf("the keys were set %s after the start: their expiry is too close to the clock's wrap to tell", set)
	}
	due := set + 5*time.Second
	// Offsets from the node's start, by harp's clock from the reading of
	// set. A reading that shows entries proves they were there when it
	// began, so the last such start is the figure: harp's own slowness
	// can only make it earlier, never later (a slow machine cannot turn
	// a purge on time into a late one).
	t0 := time.Now()
	at := func(t time.Time) time.Duration { return set + t.Sub(t0) }
	var used int
	held := set
	err = node.Poll(ctx, 30*time.Second-set, 250*time.Millisecond, func() (bool, error) {
		start := time.Now()
		// The list of tables, never a dump: a dump kills the expired
		// entries it walks, and would empty tshort itself.
		t, err := listedTable(ctx, n, node.StatsSocket, "tshort")
		if err != nil {
			return false, err
		}
		if used = t.Used; used > 0 {
			held = at(start)
		}
		return used == 0, nil
	})
	switch {
	case err == nil:
		return fmt.Sprintf("tshort last held entries %.1f s after they were due, then emptied (set at %.1f s, due at %.1f s, the wrap at %.0f s)", (held - due).Seconds(), set.Seconds(), due.Seconds(), tickWrap.Seconds()), nil
	case errors.Is(err, node.ErrDeadline):
		return fmt.Sprintf("tshort still held %d entries %.1f s after they were due (set at %.1f s, due at %.1f s, the wrap at %.0f s)", used, (held - due).Seconds(), set.Seconds(), due.Seconds(), tickWrap.Seconds()), nil
	}
	return "", err
}

// failedAllocations sets keys in tfail on a node where 1% of allocations
// fail, then reads the used count before and after clear table, which
// removes every entry no stream holds. Every exchange is retried a few times: the failures hit
// the CLI's own allocations too, and a lost answer is no reading.
func failedAllocations(ctx context.Context, n *node.Node) (string, error) {
	retry := func(what string, f func() error) error {
		var err error
		for range 8 {
			if err = f(); err == nil {
				return nil
			}
		}
		return fmt.Errorf("%s, 8 times: %w", what, err)
	}
	for b := range 20 {
		var cmds []string
		for i := range 100 {
			cmds = append(cmds, fmt.Sprintf("set table tfail key k%d data.gpc0 1", b*100+i))
		}
		if err := retry("setting keys", func() error { _, err := n.Stats(ctx, strings.Join(cmds, ";")); return err }); err != nil {
			return "", err
		}
	}
	// The list of tables only: its used count, a line that a failed
	// allocation cuts whole or not at all. A dump cut by one would list
	// fewer entries than there are, which is what the bug looks like.
	read := func() (used int, err error) {
		err = retry("reading the list of tables", func() error {
			head, err := listedTable(ctx, n, node.StatsSocket, "tfail")
			used = head.Used
			return err
		})
		return used, err
	}
	u1, err := read()
	if err != nil {
		return "", err
	}
	if err := retry("clear table tfail", func() error { _, err := n.Stats(ctx, "clear table tfail"); return err }); err != nil {
		return "", err
	}
	u2, err := read()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("used after the sets: %d of 2000 keys; after clear table: %d", u1, u2), nil
}
