package obs

import "fmt"

// Diff compares two readings of the same state, before and after
// something that should not change it: changed is "before -> after" when
// both were seen and differ; unread says what each was when either was
// not seen ("before: v; after: unknown: why").
func Diff(before, after Of[string]) (changed, unread string) {
	switch {
	case before.State != Seen || after.State != Seen:
		return "", fmt.Sprintf("before: %s; after: %s", orWhy(before), orWhy(after))
	case before.Value != after.Value:
		return before.Value + " -> " + after.Value, ""
	}
	return "", ""
}

// orWhy is a reading's value, or why it is unknown.
func orWhy(o Of[string]) string {
	if v, ok := o.Get(); ok {
		return v
	}
	return "unknown: " + o.Why
}
