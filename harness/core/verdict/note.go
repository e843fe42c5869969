package verdict

// Note adds observations to the report, one note each, as Notef("%s", ...)
// would: a toolkit's ready-made notes (node.Reload's Notes).
func (t *Trial) Note(notes ...string) {
	t.Notes = append(t.Notes, notes...)
}
