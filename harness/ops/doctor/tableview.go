package doctor

// Table is the view of the table named name, if the doctor compared one.
func (d Diagnosis) Table(name string) (TableView, bool) {
	for _, tv := range d.Tables {
		if tv.Name == name {
			return tv, true
		}
	}
	return TableView{}, false
}
