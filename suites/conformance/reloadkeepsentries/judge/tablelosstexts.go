package judge

import (
	"fmt"

	"github.com/harp-project/harp/harness/core/text"
)

// Bad is how many entries the tables lack or hold with other data: what
// a caller that wrote them counts as not there.
func (l TableLoss) Bad() int { return text.Sum(l.Lost) + text.Sum(l.Wrong) }

// Texts say what the tables lack, of want entries written in all, for a
// violation: "40 of 100 entries lost (s1/t 40)", then "2 of 100 entries
// hold other data (s1/t 2)"; nothing for what is not short. Every judge
// that reads a TableLoss says it in the same words.
func (l TableLoss) Texts(want int) []string {
	var ts []string
	if lost := text.Sum(l.Lost); lost > 0 {
		ts = append(ts, fmt.Sprintf("%d of %d entries lost (%s)", lost, want, text.Counts(l.Lost, "", 0, "")))
	}
	if wrong := text.Sum(l.Wrong); wrong > 0 {
		ts = append(ts, fmt.Sprintf("%d of %d entries hold other data (%s)", wrong, want, text.Counts(l.Wrong, "", 0, "")))
	}
	return ts
}
