package harness

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// A config template one suite uses lives beside that suite (embedded by
// it); fixtures/templates keeps the shared blocks (_*.tmpl) and what the
// toolkit renders or several suites share. A template nobody renders is
// an error too.
func TestTemplatesLiveWithTheirSuite(t *testing.T) {
	root := ".."
	shared, _ := filepath.Glob(filepath.Join(root, "fixtures", "templates", "*.tmpl"))
	users := map[string]map[string]bool{} // template -> owners that name it
	for _, s := range shared {
		if name := filepath.Base(s); !strings.HasPrefix(name, "_") {
			users[name] = map[string]bool{}
		}
	}
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == ".cache" || d.Name() == "reports") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		for name := range users {
			if strings.Contains(string(text), `"`+name+`"`) {
				users[name][owner(filepath.ToSlash(filepath.Dir(rel)))] = true
			}
		}
		return nil
	})
	var names []string
	for name := range users {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var os []string
		for o := range users[name] {
			os = append(os, o)
		}
		switch {
		case len(os) == 0:
			t.Errorf("fixtures/templates/%s: no code renders it", name)
		case len(os) == 1 && strings.HasPrefix(os[0], "suites/"):
			t.Errorf("fixtures/templates/%s: only %s renders it: it lives beside that suite, embedded (config.RenderText)", name, os[0])
		}
	}
}
