package peerwire

// MustEncode is Encode for an update harp built to fit d (a string key of
// any length, an integer key of 4 bytes, a key of d's length otherwise):
// a suite crafting messages under a definition it chose has no other
// outcome to record when that fails, which is harp's own bug, so it
// panics.
func (u Update) MustEncode(d TableDef) Message {
	m, err := u.Encode(d)
	if err != nil {
		panic(err)
	}
	return m
}
