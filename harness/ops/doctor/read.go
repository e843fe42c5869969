package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/live/cli"
)

// RunBudget bounds the bytes that the answers of one doctor run hold in
// memory, every socket and read together (each answer is also capped at
// cli.MaxAnswer): sockets that stream without end must not exhaust harp.
const RunBudget = 256 << 20

// Budget is the memory a run's answers may hold; safe for concurrent use.
// Once an answer was refused for it, every later one is too: sockets that
// stream would otherwise take turns at what a refused one gave back.
type Budget struct {
	mu         sync.Mutex
	left, size int64
	spent      bool
}

// errTooLarge marks an answer refused for its size or the run's budget.
var errTooLarge = errors.New("not read")

// NewBudget makes a budget of n bytes.
func NewBudget(n int64) *Budget { return &Budget{left: n, size: n} }

// Held is what the budget's answers hold now.
func (b *Budget) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.size - b.left
}

func (b *Budget) take(n int64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spent || n > b.left {
		b.spent = true
		return fmt.Errorf("the answers of this run would hold more than its memory budget of %s: %w", bytesText(b.size), errTooLarge)
	}
	b.left -= n
	return nil
}

func (b *Budget) give(n int64) {
	if b != nil {
		b.mu.Lock()
		b.left += n
		b.mu.Unlock()
	}
}

// CheckSocket refuses a path that exists and is no socket: dialing a
// regular file or a directory says "connection refused", which reads as
// an HAProxy that is down. A host:port, or a path not there (yet), passes.
func CheckSocket(addr string) error {
	netw, path := network(addr)
	if netw != "unix" {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode()&os.ModeSocket != 0 {
		return nil
	}
	what := "a regular file"
	if st.IsDir() {
		what = "a directory"
	} else if !st.Mode().IsRegular() {
		what = "a " + st.Mode().Type().String() + " file"
	}
	return fmt.Errorf("%s is %s, %w (give the runtime socket's path, or host:port)", path, what, errNotSocket)
}

var errNotSocket = errors.New("not a socket")

// network tells a UNIX socket (a path, or unix@path) from host:port
// (ipv4@ prefix allowed).
func network(addr string) (string, string) {
	if p, ok := strings.CutPrefix(addr, "unix@"); ok {
		return "unix", p
	}
	if _, err := os.Stat(addr); err == nil || strings.Contains(addr, "/") || !strings.Contains(addr, ":") {
		return "unix", addr // a socket file (admin.sock, /run/haproxy/admin.sock)
	}
	return "tcp", strings.TrimPrefix(addr, "ipv4@")
}

// Dial makes a Query for a socket address: a path (or unix@path) for a
// UNIX socket, else host:port (ipv4@ prefix allowed). Its answers are
// bounded by cli.MaxAnswer each, by no budget.
func Dial(addr string) Query { return dialIn(addr, nil, nil) }

// dialIn makes a Query whose answers are charged to b; held adds up what
// the answers kept hold.
func dialIn(addr string, b *Budget, held *round) Query {
	netw, a := network(addr)
	return func(ctx context.Context, cmd string) (string, error) {
		if err := CheckSocket(addr); err != nil {
			return "", err
		}
		return cli.AskWith(ctx, netw, a, cmd, func(r io.Reader) (string, error) {
			out, err := readAnswer(r, cli.MaxAnswer, b)
			held.add(int64(len(out)))
			if errors.Is(err, errTooLarge) {
				err = fmt.Errorf("the answer to %q: %w", cmd, err)
			}
			return out, err
		})
	}
}

// readAnswer reads r to its end, at most max bytes, in chunks charged to
// b as they are made, then joins them once into the answer, which stays
// charged. A doubling buffer would hold up to three times the answer, and
// turning it into a string once more.
func readAnswer(r io.Reader, max int64, b *Budget) (string, error) {
	var chunks [][]byte
	var n, charged int64
	defer func() { b.give(charged) }()
	size := int64(4 << 10)
	for {
		if n > max {
			return "", fmt.Errorf("larger than %s: %w", bytesText(max), errTooLarge)
		}
		size = min(size, max+1-n)
		if err := b.take(size); err != nil {
			return "", err
		}
		charged += size
		c := make([]byte, size)
		k, err := io.ReadFull(r, c)
		chunks, n = append(chunks, c[:k]), n+int64(k)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil { // a deadline, a reset: what came, and why it stopped
			out, jerr := join(chunks, n, b)
			if jerr != nil {
				return "", jerr
			}
			return out, err
		}
		size = min(2*size, 1<<20)
	}
	if n > max {
		return "", fmt.Errorf("larger than %s: %w", bytesText(max), errTooLarge)
	}
	return join(chunks, n, b)
}

// join makes one string of the chunks, charged to b (the chunks' charge
// is given back by the caller).
func join(chunks [][]byte, n int64, b *Budget) (string, error) {
	if err := b.take(n); err != nil {
		return "", err
	}
	var sb strings.Builder
	sb.Grow(int(n))
	for _, c := range chunks {
		sb.Write(c)
	}
	return sb.String(), nil
}

// bytesText names a size in the largest unit it is a whole number of.
func bytesText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// round is what one read of every socket holds of the budget.
type round struct {
	mu   sync.Mutex
	b    *Budget
	held int64
}

func (r *round) add(n int64) {
	if r != nil {
		r.mu.Lock()
		r.held += n
		r.mu.Unlock()
	}
}

func (r *round) release() {
	r.mu.Lock()
	r.b.give(r.held)
	r.held = 0
	r.mu.Unlock()
}

// Reader reads every socket once per call, within timeout, all calls
// sharing the budget b. Settle keeps the first read and the latest: a
// read's answers are given back once the read after it is done (the
// first read's never), so the run holds at most b whatever the reads.
// Table contents are streamed into digests as --watch reads them
// (CollectDigests): a dump is not one answer under cli.MaxAnswer, so a
// table of any size the budget holds is compared, and the one-shot
// doctor and --watch agree on it.
func Reader(timeout time.Duration, names, sockets []string, b *Budget) func(context.Context) []Instance {
	var first, prev *round
	return func(ctx context.Context) []Instance {
		r := &round{b: b}
		ins := collectAll(ctx, timeout, names, sockets, func(ctx context.Context, name, s string) (Instance, error) {
			return collectDigests(ctx, name, s, dialIn(s, b, r), DialDump(s), b, r)
		})
		switch {
		case first == nil:
			first = r
		case prev != nil:
			prev.release()
			fallthrough
		default:
			prev = r
		}
		return ins
	}
}
