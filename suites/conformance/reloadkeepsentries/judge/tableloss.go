package judge

import "github.com/harp-project/harp/harness/core/cliout"

// TableLoss is what tables lack of the entries they should hold: per
// table, how many entries are absent (Lost) and present with other data
// (Wrong), and a sample of them (the table's name and Differ's text, at
// most 3 of each per table).
type TableLoss struct {
	Lost   map[string]int `json:"lost,omitempty"`
	Wrong  map[string]int `json:"wrong,omitempty"`
	Sample []string       `json:"sample,omitempty"`
}

// Add compares table t, read as name, with keys and their values of field.
func (l *TableLoss) Add(name string, t cliout.Table, field string, keys, values []string) {
	if l.Lost == nil {
		l.Lost = map[string]int{}
	}
	if l.Wrong == nil {
		l.Wrong = map[string]int{}
	}
	lost, wrong := t.Differ(field, keys, values)
	if len(lost) > 0 {
		l.Lost[name] = len(lost)
	}
	if len(wrong) > 0 {
		l.Wrong[name] = len(wrong)
	}
	l.Sample = append(l.Sample, append(lossSample(name, lost), lossSample(name, wrong)...)...)
}

func lossSample(table string, keys []string) []string {
	var s []string
	for _, k := range keys[:min(3, len(keys))] {
		s = append(s, table+" "+k)
	}
	return s
}
