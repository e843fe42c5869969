package config

// Section is one peers section for a template's range: its name and the
// port its local peer binds.
type Section struct {
	Name string
	Port int
}

// Sections are the peers sections named names, the local peer of each on
// its own port counting up from port: the list a config with several
// sections ranges over (3517.cfg.tmpl, conf-reload-keeps-entries.cfg.tmpl).
func Sections(names []string, port int) []Section {
	ss := make([]Section, 0, len(names))
	for i, name := range names {
		ss = append(ss, Section{Name: name, Port: port + i})
	}
	return ss
}
