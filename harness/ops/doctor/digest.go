package doctor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/live/cli"
)

// Comparing a table across instances needs, of each entry, only whether
// its key is there and whether its data agree. A digest keeps 16 bytes an
// entry (64-bit FNV-1a hashes of the key and of the data as dataOf renders
// it), so a monitor compares tables of any size without holding their
// dumps: each dump is read line by line into its digest. Two distinct
// keys share a hash with odds of about n²/2⁶⁵ (1 in 10⁸ at 10⁶ keys),
// which would make one count off by one.

// entryDigest is one entry: the hashes of its key and of its data.
type entryDigest struct{ key, data uint64 }

// TableDigest is one instance's copy of a table as the comparison sees it.
type TableDigest struct {
	// Stores are the data types its first entry stores ("gpc0,http_req_cnt").
	Stores  string
	entries []entryDigest // sorted by key hash
}

// Len is the number of entries digested.
func (d *TableDigest) Len() int { return len(d.entries) }

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvAdd(h uint64, s []byte) uint64 {
	for _, c := range s {
		h = fnvByte(h, c)
	}
	return h
}

// dataHash hashes data fields, sorted by name, as "k=v k=v" (dataOf's form).
func dataHash(fields [][2][]byte) uint64 {
	h := uint64(fnvOffset)
	for i, f := range fields {
		if i > 0 {
			h = fnvByte(h, ' ')
		}
		h = fnvAdd(fnvByte(fnvAdd(h, f[0]), '='), f[1])
	}
	return h
}

func fnvByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * fnvPrime }

// digestEntries digests entries read whole (the one-shot doctor's path).
func digestEntries(es []cliout.Entry) *TableDigest {
	d := &TableDigest{entries: make([]entryDigest, 0, len(es))}
	if len(es) > 0 {
		d.Stores = strings.Join(sortedKeys(es[0].Data), ",")
	}
	for _, e := range es {
		d.entries = append(d.entries, entryDigest{fnvAdd(fnvOffset, []byte(e.Key)), fnvAdd(fnvOffset, []byte(dataOf(e)))})
	}
	d.sort()
	return d
}

func (d *TableDigest) sort() {
	slices.SortFunc(d.entries, func(a, b entryDigest) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
}

// scanEntry reads one entry line of show table ("0x...: key=k use=0
// exp=3599 shard=0 gpc0=1 http_req_cnt=2") as cliout does, into fields
// (reused between lines): the key, the data fields sorted by name. It
// allocates nothing once fields has room: a dump of a million lines makes
// no garbage.
func scanEntry(line []byte, fields [][2][]byte) (key []byte, _ [][2][]byte, ok bool) {
	fields = fields[:0]
	for len(line) > 0 {
		i := bytes.IndexByte(line, ' ')
		tok := line
		if i >= 0 {
			tok, line = line[:i], line[i+1:]
		} else {
			line = nil
		}
		eq := bytes.IndexByte(tok, '=')
		if eq <= 0 || eq == len(tok)-1 {
			continue
		}
		k, v := tok[:eq], tok[eq+1:]
		switch string(k) { // no allocation: the compiler compares in place
		case "key":
			key, ok = v, true
		case "use", "exp", "shard":
		default:
			fields = append(fields, [2][]byte{k, v})
		}
	}
	// Insertion sort: a few fields, usually in order already.
	for i := 1; i < len(fields); i++ {
		for j := i; j > 0 && bytes.Compare(fields[j-1][0], fields[j][0]) > 0; j-- {
			fields[j-1], fields[j] = fields[j], fields[j-1]
		}
	}
	return key, fields, ok
}

// Dump sends one command and hands its answer to line one line at a time
// (without its end of line): nothing but the current line is held.
type Dump func(ctx context.Context, cmd string, line func([]byte) error) error

// maxLine bounds one line of a dump: entry lines are some hundred bytes.
const maxLine = 64 << 10

// DialDump makes a Dump for a socket address (see Dial).
func DialDump(addr string) Dump {
	netw, a := network(addr)
	return func(ctx context.Context, cmd string, line func([]byte) error) error {
		if err := CheckSocket(addr); err != nil {
			return err
		}
		_, err := cli.AskWith(ctx, netw, a, cmd, func(r io.Reader) (string, error) {
			return "", eachLine(r, line)
		})
		return err
	}
}

// eachLine calls line for every line of r, refusing one over maxLine.
func eachLine(r io.Reader, line func([]byte) error) error {
	br := bufio.NewReaderSize(r, maxLine)
	for {
		l, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("a line longer than %d KiB: %w", maxLine>>10, errTooLarge)
		}
		if len(l) > 0 {
			if lerr := line(bytes.TrimRight(l, "\r\n")); lerr != nil {
				return lerr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// errRefused stops reading a dump that says the socket refuses it.
var errRefused = errors.New("refused")

// digestTable reads one table's dump line by line into a digest charged
// to b (a digest kept is added to held, one given up is given back);
// what the socket said instead of a table goes to Errors, as ask does for
// answers read whole.
func (in *Instance) digestTable(ctx context.Context, dump Dump, b *Budget, held *round, t cliout.Table) cliout.Table {
	cmd := "show table " + t.Name
	d := &TableDigest{}
	var (
		heads   int
		text    strings.Builder // what came before a header: a refusal, an error
		fields  [][2][]byte
		charged int
		refused string
	)
	err := dump(ctx, cmd, func(line []byte) error {
		l := bytes.TrimSpace(line)
		switch {
		case len(l) == 0:
		case bytes.HasPrefix(l, []byte("# table: ")):
			ts, err := cliout.ParseTables(string(l))
			if err != nil || len(ts) != 1 {
				return fmt.Errorf("show table: %q", l)
			}
			if heads++; heads > 1 {
				return fmt.Errorf("show table: want one table, got more (%q)", l)
			}
			t = ts[0]
			// The header says how many entries follow: room for them at once.
			n := max(t.Used, 0) + 16
			if err := b.take(int64(16 * n)); err != nil {
				return err
			}
			charged, d.entries = n, make([]entryDigest, 0, n)
		case heads == 1 && bytes.HasPrefix(l, []byte("0x")) && bytes.Contains(l, []byte(" key=")):
			key, fs, ok := scanEntry(l, fields)
			if fields = fs; !ok {
				return nil
			}
			if len(d.entries) == 0 {
				var names []string
				for _, f := range fs {
					names = append(names, string(f[0]))
				}
				d.Stores = strings.Join(names, ",")
			}
			if len(d.entries) == charged { // more than the header said: entries added while dumping
				if err := b.take(int64(16 * charged)); err != nil {
					return err
				}
				charged *= 2
				d.entries = slices.Grow(d.entries, charged-len(d.entries))
			}
			d.entries = append(d.entries, entryDigest{fnvAdd(fnvOffset, key), dataHash(fs)})
		case denied(string(l)): // "# contents not dumped due to insufficient privileges" follows the header
			refused = strings.TrimSpace(strings.TrimPrefix(string(l), "#"))
			return errRefused
		case heads == 0 && text.Len() < 4<<10:
			text.Write(l)
			text.WriteByte('\n')
		}
		return nil
	})
	if err != nil || heads == 0 {
		b.give(int64(16 * charged))
	} else {
		held.add(int64(16 * charged))
	}
	switch {
	case errors.Is(err, errRefused):
		in.Errors[cmd] = refused
	case err != nil:
		if errors.Is(err, errTooLarge) {
			in.tooLarge(cmd)
			err = fmt.Errorf("the answer to %q: %w", cmd, err)
		}
		in.Errors[cmd] = err.Error()
	case heads == 0:
		in.Errors[cmd] = refusal(text.String())
		if !denied(text.String()) && strings.TrimSpace(text.String()) != "" {
			in.Errors[cmd] = "show table: " + strings.TrimSpace(firstLine(text.String()))
		}
	default:
		d.sort()
		if in.Digests == nil {
			in.Digests = map[string]*TableDigest{}
		}
		in.Digests[t.Name] = d
	}
	return t
}

// CollectDigests is Collect with each table's contents read line by line
// into a digest (Instance.Digests, no Entries): what a monitor reads
// every interval, whatever the tables' size. Every answer and digest is
// charged to b.
func CollectDigests(ctx context.Context, name, socket string, q Query, dump Dump, b *Budget) (Instance, error) {
	return collectDigests(ctx, name, socket, q, dump, b, nil)
}

// collectDigests is CollectDigests with the digests kept added to held.
func collectDigests(ctx context.Context, name, socket string, q Query, dump Dump, b *Budget, held *round) (Instance, error) {
	return collect(ctx, name, socket, q, func(in *Instance, t cliout.Table) cliout.Table {
		return in.digestTable(ctx, dump, b, held, t)
	})
}

// DigestReader reads every socket once per call, within timeout, with
// table contents digested (CollectDigests); each call has a memory budget
// of its own of budget bytes, so that one read refused for its size does
// not refuse the next.
func DigestReader(timeout time.Duration, names, sockets []string, budget int64) func(context.Context) []Instance {
	return func(ctx context.Context) []Instance {
		b := NewBudget(budget)
		return collectAll(ctx, timeout, names, sockets, func(ctx context.Context, name, s string) (Instance, error) {
			return CollectDigests(ctx, name, s, dialIn(s, b, nil), DialDump(s), b)
		})
	}
}
