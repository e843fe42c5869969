package cliout

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Table is one table of `show table <name>`.
type Table struct {
	Name    string  `json:"name"`
	Type    string  `json:"type"`
	Size    int     `json:"size"`
	Used    int     `json:"used"`
	Entries []Entry `json:"entries"`
}

// Entry is one stick-table entry.
type Entry struct {
	Key  string            `json:"key"`
	Use  int               `json:"use"`
	Exp  int64             `json:"exp_ms"`
	Data map[string]string `json:"data"` // stored data types: gpc0, conn_cnt, ...
}

// Lookup finds an entry by key.
func (t Table) Lookup(key string) (Entry, bool) {
	for _, e := range t.Entries {
		if e.Key == key {
			return e, true
		}
	}
	return Entry{}, false
}

// Differ compares the table with the entries it should hold (key i with
// field values[i]): the keys it lacks, and those it holds with another
// value ("key field=got (want v)"), in keys' order.
func (t Table) Differ(field string, keys, values []string) (lost, wrong []string) {
	have := make(map[string]string, len(t.Entries))
	for _, e := range t.Entries {
		have[e.Key] = e.Data[field]
	}
	for i, k := range keys {
		switch v, ok := have[k]; {
		case !ok:
			lost = append(lost, k)
		case v != values[i]:
			wrong = append(wrong, fmt.Sprintf("%s %s=%s (want %s)", k, field, v, values[i]))
		}
	}
	return lost, wrong
}

var tableHeadRe = regexp.MustCompile(`^# table: ([^,]+), type: ([^,]+), size:(\d+), used:(\d+)`)

// Keys of an entry line that are not stored data.
var entryMeta = map[string]bool{"key": true, "use": true, "exp": true, "shard": true}

// ParseTables reads `show table` with or without a table name.
//
//	# table: first/marker, type: ip, size:100, used:1
//	0x7f45b87acdc8: key=192.0.2.1 use=0 exp=3593937 shard=0 gpc0=1
func ParseTables(out string) ([]Table, error) {
	var ts []Table
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if m := tableHeadRe.FindStringSubmatch(t); m != nil {
			size, _ := strconv.Atoi(m[3])
			used, _ := strconv.Atoi(m[4])
			ts = append(ts, Table{Name: m[1], Type: m[2], Size: size, Used: used})
			continue
		}
		if strings.HasPrefix(t, "0x") && strings.Contains(t, " key=") && len(ts) > 0 {
			f := kv(t)
			e := Entry{Key: f["key"], Data: map[string]string{}}
			e.Use, _ = strconv.Atoi(f["use"])
			e.Exp, _ = strconv.ParseInt(f["exp"], 10, 64)
			for k, v := range f {
				if !entryMeta[k] {
					e.Data[k] = v
				}
			}
			ts[len(ts)-1].Entries = append(ts[len(ts)-1].Entries, e)
			continue
		}
		if len(ts) == 0 {
			return nil, fmt.Errorf("show table: %s", t)
		}
	}
	return ts, nil
}

// ParseTable reads `show table <name>` and returns that one table.
func ParseTable(out string) (Table, error) {
	ts, err := ParseTables(out)
	if err != nil {
		return Table{}, err
	}
	if len(ts) != 1 {
		return Table{}, fmt.Errorf("show table: want one table, got %d: %q", len(ts), firstLine(out))
	}
	return ts[0], nil
}
