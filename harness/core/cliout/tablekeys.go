package cliout

// Keys are the keys of the table's entries, in its order.
func (t Table) Keys() []string {
	var ks []string
	for _, e := range t.Entries {
		ks = append(ks, e.Key)
	}
	return ks
}

// Added are the entries whose keys an earlier reading of the table
// lacked, in the table's order.
func (t Table) Added(before Table) []Entry {
	had := map[string]bool{}
	for _, e := range before.Entries {
		had[e.Key] = true
	}
	var added []Entry
	for _, e := range t.Entries {
		if !had[e.Key] {
			added = append(added, e)
		}
	}
	return added
}
