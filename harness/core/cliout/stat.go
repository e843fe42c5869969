package cliout

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// StatRow is one line of `show stat` (CSV): a frontend, backend, server or
// listener (with `option socket-stats`).
type StatRow struct {
	Proxy  string            `json:"pxname"`
	Server string            `json:"svname"` // FRONTEND, BACKEND, a server, or a listener name
	Fields map[string]string `json:"fields"`
}

// Int reads a numeric column (0 when empty).
func (r StatRow) Int(col string) int64 {
	n, _ := strconv.ParseInt(r.Fields[col], 10, 64)
	return n
}

// Columns is some columns of the row for a note: "slim=0 status=OPEN".
func (r StatRow) Columns(cols ...string) string {
	vs := make([]string, 0, len(cols))
	for _, c := range cols {
		vs = append(vs, c+"="+r.Fields[c])
	}
	return strings.Join(vs, " ")
}

// Type is the row type: 0 frontend, 1 backend, 2 server, 3 listener.
func (r StatRow) Type() int64 { return r.Int("type") }

// ParseStat reads `show stat`.
func ParseStat(out string) ([]StatRow, error) {
	var cols []string
	var rows []StatRow
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "# ") {
			cols = strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "# "), ","), ",")
			continue
		}
		if cols == nil {
			return nil, fmt.Errorf("not a `show stat` answer: %q", line)
		}
		vals := strings.Split(line, ",")
		r := StatRow{Fields: map[string]string{}}
		for i, c := range cols {
			if i < len(vals) {
				r.Fields[c] = vals[i]
			}
		}
		r.Proxy, r.Server = r.Fields["pxname"], r.Fields["svname"]
		rows = append(rows, r)
	}
	if cols == nil {
		return nil, fmt.Errorf("not a `show stat` answer: %q", firstLine(out))
	}
	return rows, nil
}

// FindStat returns a row by proxy and server name (FRONTEND, BACKEND...).
func FindStat(rows []StatRow, proxy, server string) (StatRow, bool) {
	for _, r := range rows {
		if r.Proxy == proxy && r.Server == server {
			return r, true
		}
	}
	return StatRow{}, false
}

// Listeners counts a proxy's listener rows (`option socket-stats`).
func Listeners(rows []StatRow, proxy string) int {
	n := 0
	for _, r := range rows {
		if r.Proxy == proxy && r.Type() == 3 {
			n++
		}
	}
	return n
}

var threadGroupRe = regexp.MustCompile(`(?m)^\s+(\d+)/(\d+)\s`)

// ThreadGroups counts the distinct thread groups `show threads` lists
// (its "group/thread" column, 2.7 and later); 0 when the build shows none.
func ThreadGroups(out string) int {
	groups := map[string]bool{}
	for _, m := range threadGroupRe.FindAllStringSubmatch(out, -1) {
		groups[m[1]] = true
	}
	return len(groups)
}
