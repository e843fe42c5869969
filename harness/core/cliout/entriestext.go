package cliout

import (
	"sort"
	"strings"
)

// EntriesText is the table's entries as "[key field=v, ...]", sorted by
// line: a reading to compare before and after a command.
func (t Table) EntriesText(field string) string {
	var es []string
	for _, e := range t.Entries {
		es = append(es, e.Key+" "+field+"="+e.Data[field])
	}
	sort.Strings(es)
	return "[" + strings.Join(es, ", ") + "]"
}
