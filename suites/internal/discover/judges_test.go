package discover

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Where a suite's judge lives when it is not the suite's judge/ package:
// the checker is a toolkit package shared with `harp chaos` and `harp rejudge`.
var judgeElsewhere = map[string]string{"chaos": "harness/core/chaos"}

// What a judge must never compile, directly or through harp's own
// packages: Docker, testcontainers, and the toolkit parts that drive them.
var heavy = []string{"testcontainers", "docker", "moby", Module + "/harness/live/node", Module + "/harness/live/cluster",
	Module + "/harness/live/suiteenv", Module + "/harness/live/engine", Module + "/images", Module + "/suites/"}

// Every suite's judge and facts sit in a judge/ package that `make unit`
// builds, tests included, without Docker: a judge test that drags in
// testcontainers fails here, naming the import chain.
func TestJudgesNeedNoDocker(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	suites, err := Source(filepath.Join(root, "suites"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(suites), "\n") {
		i := strings.Index(line, Module+"/suites/")
		if i < 0 {
			continue
		}
		pkg := strings.Trim(line[i:], `"`)
		rel := strings.TrimPrefix(pkg, Module+"/")
		judgePkg := rel + "/judge"
		if other, ok := judgeElsewhere[filepath.Base(rel)]; ok {
			judgePkg = other
		}
		if _, err := os.Stat(filepath.Join(root, judgePkg)); err != nil {
			t.Errorf("%s: no judge package (%s): its judge and facts belong where make unit tests them without Docker", rel, judgePkg)
			continue
		}
		if chain := heavyImport(t, root, judgePkg, map[string]bool{}); chain != nil {
			t.Errorf("%s imports %s", judgePkg, strings.Join(chain, " -> "))
		}
	}
}

// heavyImport is the chain from pkg (a directory under root) to the first
// heavy import, through harp's own packages; nil when there is none.
func heavyImport(t *testing.T, root, pkg string, seen map[string]bool) []string {
	if seen[pkg] {
		return nil
	}
	seen[pkg] = true
	files, _ := filepath.Glob(filepath.Join(root, pkg, "*.go"))
	var imports []string
	for _, f := range files {
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range ast.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			imports = append(imports, p)
		}
	}
	sort.Strings(imports)
	for _, p := range imports {
		for _, h := range heavy {
			if strings.Contains(p, h) && !(strings.HasPrefix(p, Module+"/suites/") && strings.HasPrefix(p, Module+"/"+pkg)) {
				return []string{p}
			}
		}
		if strings.HasPrefix(p, Module+"/") {
			if chain := heavyImport(t, root, strings.TrimPrefix(p, Module+"/"), seen); chain != nil {
				return append([]string{p}, chain...)
			}
		}
	}
	return nil
}
