package obs

// Map is the observation of f of o's value: the same state and reason,
// with f applied to a value seen (a refusal or a failure keeps a zero
// value, as From gives).
func Map[T, U any](o Of[T], f func(T) U) Of[U] {
	out := Of[U]{State: o.State, Why: o.Why}
	if o.State == Seen {
		out.Value = f(o.Value)
	}
	return out
}
