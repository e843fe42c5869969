package discover

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// A field of a suite's Facts that is a string or an error (or a list or
// map of them) can carry harp's failure to a judge as if HAProxy had said
// it: an empty one reads as "nothing wrong" when harp never filled it.
// Observations are obs.Of and obs.Optional. What a string field may hold
// instead, each listed with its kind:
const (
	// chosen: a value harp chose before the trial (a parameter, a name,
	// a label): never observed, so never unknown.
	chosen = "chosen by harp, not observed"
	// unmetOnly: the text of a precondition that failed; non-empty only
	// makes the trial INCONCLUSIVE (the judge never reads it as HAProxy's
	// answer). Older suites; a new field of this kind is an obs.Of.
	unmetOnly = "a failed precondition's text: INCONCLUSIVE only"
)

// The string fields allowed, by package (relative to the repository) and
// field. The upstream-fixes case family (harness/core/fixcase) has only its
// case's name, its fix and why it does not apply: its answer is an
// obs.Of[string].
var stringFields = map[string]string{
	"harness/core/fixcase.Case": chosen, "harness/core/fixcase.Fix": chosen, "harness/core/fixcase.Skip": chosen,

	"suites/issue3517/judge.Tables":                    chosen,
	"suites/cluster/convergence/judge.Keys":            chosen,
	"suites/cluster/identity/judge.How":                chosen,
	"suites/cluster/identity/judge.Ghost":              chosen,
	"suites/cluster/identity/judge.Control":            chosen,
	"suites/cluster/partition/judge.Cut":               chosen,
	"suites/cluster/reloads/judge.How":                 chosen,
	"suites/cluster/tables/judge.Odd":                  chosen,
	"suites/cluster/tables/judge.Control":              chosen,
	"suites/cluster/tables/judge.Marker":               chosen,
	"suites/conformance/clipermissions/judge.Socket":   chosen,
	"suites/conformance/failedreload/judge.Break":      chosen,
	"suites/conformance/failedreload/judge.BreakID":    chosen,
	"suites/conformance/failedreload/judge.Recovery":   chosen,
	"suites/conformance/failedreload/judge.EntryWant":  chosen,
	"suites/conformance/manytables/judge.Kind":         chosen,
	"suites/conformance/reloadkeepsentries/judge.Kind": chosen,
	"suites/conformance/runtimelimits/judge.Kind":      chosen,
	"suites/conformance/updatesbothways/judge.Kind":    chosen,
	"suites/conformance/updatesbothways/judge.KindID":  chosen,
	"suites/conformance/updatesbothways/judge.Before":  chosen,

	"suites/listenerlivelock/judge.Undrained":                  unmetOnly,
	"suites/cluster/partition/judge.MeshBefore":                unmetOnly,
	"suites/cluster/partition/judge.LinksBack":                 unmetOnly,
	"suites/cluster/reloads/judge.Problems":                    unmetOnly,
	"suites/cluster/reloads/judge.MeshAfter":                   unmetOnly,
	"suites/conformance/clipermissions/judge.Setup":            unmetOnly,
	"suites/conformance/clipermissions/judge.Unprobed":         unmetOnly,
	"suites/conformance/failedreload/judge.Setup":              unmetOnly,
	"suites/conformance/failedreload/judge.HarnessErr":         unmetOnly,
	"suites/conformance/failedreload/judge.RecoveryErr":        unmetOnly,
	"suites/conformance/manytables/judge.Setup":                unmetOnly,
	"suites/conformance/reloadkeepsentries/judge.Setup":        unmetOnly,
	"suites/conformance/reloadkeepsentries/judge.RemoteBefore": unmetOnly,
	"suites/conformance/reloadkeepsentries/judge.ResyncBefore": unmetOnly,
	"suites/conformance/reloadkeepsentries/judge.ReloadErr":    unmetOnly,
	"suites/conformance/reloadkeepsentries/judge.OldCrash":     unmetOnly,
	"suites/conformance/runtimelimits/judge.Setup":             unmetOnly,
	"suites/conformance/runtimelimits/judge.NotApplied":        unmetOnly,
	"suites/conformance/updatesbothways/judge.MeshBefore":      unmetOnly,
	"suites/conformance/updatesbothways/judge.WriteErr":        unmetOnly,
	"suites/conformance/updatesbothways/judge.BeforeErr":       unmetOnly,
}

// Every suite's Facts (its judge package's, and the case family's) is
// walked: a string or error field not listed above fails, naming it.
func TestFactsCarryNoHarpFailureAsText(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	dirs, _ := filepath.Glob(filepath.Join(root, "suites", "*", "judge"))
	more, _ := filepath.Glob(filepath.Join(root, "suites", "*", "*", "judge"))
	dirs = append(append(dirs, more...), filepath.Join(root, "harness", "core", "fixcase"))
	seen := map[string]bool{}
	for _, d := range dirs {
		rel, _ := filepath.Rel(root, d)
		for field, typ := range factsFields(t, d) {
			if !textual(typ) {
				continue
			}
			key := filepath.ToSlash(rel) + "." + field
			seen[key] = true
			if _, ok := stringFields[key]; !ok {
				t.Errorf("%s is %s: an observation is an obs.Of (harp's failure unknown, never text); a value harp chose is listed in stringFields", key, typ)
			}
		}
	}
	var stale []string
	for k := range stringFields {
		if !seen[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("listed but no such string field: %v", stale)
	}
}

// textual: a string or an error, or a list or map of them.
func textual(typ string) bool {
	typ = strings.TrimLeft(typ, "[]*")
	if _, v, ok := strings.Cut(typ, "]"); ok && strings.HasPrefix(typ, "map[") {
		typ = strings.TrimLeft(v, "[]*")
	}
	return typ == "string" || typ == "error"
}

// factsFields are the fields of the struct type Facts in the package at
// dir (tests aside), with their types as written.
func factsFields(t *testing.T, dir string) map[string]string {
	fset := token.NewFileSet()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	out := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != "Facts" {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, fl := range st.Fields.List {
				var b bytes.Buffer
				printer.Fprint(&b, fset, fl.Type)
				for _, n := range fl.Names {
					out[n.Name] = b.String()
				}
			}
			return false
		})
	}
	return out
}

func TestTextual(t *testing.T) {
	for typ, want := range map[string]bool{"string": true, "error": true, "[]string": true, "map[string]string": true, "map[string][]string": true,
		"obs.Of[string]": false, "int": false, "[]Call": false, "map[string]obs.Of[Marker]": false} {
		if textual(typ) != want {
			t.Errorf("%s: %v", typ, !want)
		}
	}
}
