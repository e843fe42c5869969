package doctor

import (
	"context"
	"fmt"
	"time"
)

// Settled is the warning for a problem that one read showed and a later
// read no longer did.
const Settled Code = "settled"

// Passing says whether every problem in d is one that a moment can
// explain: a session being re-established (HAProxy reconnects a peer
// within seconds, and two peers that connect at once drop one session)
// or updates still in flight. Such a problem is confirmed by reading
// again, never concluded from one read.
func (d Diagnosis) Passing() bool {
	problems := 0
	for _, f := range d.Findings {
		if f.Level != Problem {
			continue
		}
		if f.Code != LinkDown && f.Code != Divergence {
			return false
		}
		problems++
	}
	return problems > 0
}

// Settle diagnoses again from new reads while the only problems are
// passing ones, every `every` until `window` has passed since the first
// read: it returns the first diagnosis that is healthy or has a lasting
// problem, else the last one. Reads and Span say how many reads it took
// and over how long. A problem that cleared is kept as a warning, so a
// flapping link is seen without failing the check; one that stayed says
// for how long it was seen.
func Settle(ctx context.Context, first Diagnosis, window, every time.Duration, read func(context.Context) []Instance, progress func(string)) Diagnosis {
	start := time.Now()
	d := first
	d.Reads = 1
	for d.Passing() && time.Since(start)+every <= window && ctx.Err() == nil {
		if progress != nil {
			progress(fmt.Sprintf("read %d: %s; reading again for up to %s", d.Reads, d.Cause, (window - time.Since(start)).Round(time.Second)))
		}
		select {
		case <-ctx.Done():
			continue // interrupted: what was read so far is the answer
		case <-time.After(every):
		}
		reads := d.Reads + 1
		d = Diagnose(read(ctx))
		d.Reads = reads
	}
	d.Span = time.Since(start).Round(10 * time.Millisecond).String()
	return settled(first, d)
}

// settled adds to last what the reads in between showed: a warning per
// passing problem of the first read that is gone, and to a problem still
// there, that it lasted.
func settled(first, last Diagnosis) Diagnosis {
	if last.Reads < 2 {
		return last
	}
	for _, f := range first.Findings {
		if f.Level != Problem {
			continue
		}
		if i := last.index(f); i >= 0 {
			last.Findings[i].Evidence = append(last.Findings[i].Evidence, fmt.Sprintf("seen in every one of %d reads over %s", last.Reads, last.Span))
			if f.Code == Divergence && f.Message != last.Findings[i].Message {
				last.Findings[i].Evidence = append(last.Findings[i].Evidence, "at the first read: "+f.Message)
			}
			continue
		}
		w := Finding{Level: Warning, Code: Settled, Instance: f.Instance, Peer: f.Peer, Table: f.Table,
			Message:  fmt.Sprintf("cleared within %s (%d reads): %s; a session being re-established or updates in flight, not a lasting fault", last.Span, last.Reads, f.Message),
			Evidence: f.Evidence}
		last.Findings = append(last.Findings, w)
	}
	return last
}

// index finds a finding about the same thing as f (code, ends, table).
func (d Diagnosis) index(f Finding) int {
	for i, g := range d.Findings {
		if g.Code == f.Code && g.Level == f.Level && g.Instance == f.Instance && g.Peer == f.Peer && g.Table == f.Table {
			return i
		}
	}
	return -1
}
