package harness

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// listed is one package as go list gives it.
type listed struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
	Standard                bool
}

// usersOf type-checks harp's packages (tests excluded) and gives, for each
// exported toolkit identifier (harness/...: a package-level func, type,
// var or const, or a method of an exported type), the other packages of
// harp that use it.
func usersOf(t *testing.T) map[string]map[string]bool {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-export", "-json=ImportPath,Dir,Export,GoFiles,Standard", "../...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]listed{}
	var own []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
		if strings.HasPrefix(p.ImportPath, module) {
			own = append(own, p.ImportPath)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(pkgs[path].Export) })
	users := map[string]map[string]bool{}
	// Identifiers no other package uses at all are declared, and counted at zero.
	declare := func(path string, f *ast.File) {
		if !strings.HasPrefix(path, module+"harness/") {
			return
		}
		for _, d := range f.Decls {
			for _, id := range declared(d) {
				if key := strings.TrimPrefix(path, module) + "." + id; users[key] == nil {
					users[key] = map[string]bool{}
				}
			}
		}
	}
	for _, path := range own {
		p := pkgs[path]
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
			declare(path, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
		if _, err := (&types.Config{Importer: imp}).Check(path, fset, files, info); err != nil {
			t.Fatalf("type-checking %s: %v", path, err)
		}
		use := func(o types.Object) {
			if o == nil || o.Pkg() == nil || o.Pkg().Path() == path || !o.Exported() {
				return
			}
			id := toolkitID(o)
			if id == "" {
				return
			}
			if users[id] == nil {
				users[id] = map[string]bool{}
			}
			users[id][strings.TrimPrefix(path, module)] = true
		}
		for _, o := range info.Uses {
			use(o)
		}
		for _, s := range info.Selections {
			use(s.Obj())
			// A field read or a method called uses the type it belongs to,
			// though the user never names it.
			rt := s.Recv()
			if p, ok := rt.(*types.Pointer); ok {
				rt = p.Elem()
			}
			if n, ok := rt.(*types.Named); ok {
				use(n.Obj())
			}
		}
	}
	return users
}

// toolkitID names an object of a toolkit package: harness/live/node.Poll,
// harness/live/node.Node.Stats; "" for what is not a toolkit identifier (a
// field, a method of an unexported type, anything outside harness/).
func toolkitID(o types.Object) string {
	pkg := strings.TrimPrefix(o.Pkg().Path(), module)
	if !strings.HasPrefix(pkg, "harness/") {
		return ""
	}
	switch o := o.(type) {
	case *types.Func:
		sig := o.Type().(*types.Signature)
		if sig.Recv() == nil {
			return pkg + "." + o.Name()
		}
		rt := sig.Recv().Type()
		if p, ok := rt.(*types.Pointer); ok {
			rt = p.Elem()
		}
		n, ok := rt.(*types.Named)
		if !ok || !n.Obj().Exported() || n.Obj().Pkg() != o.Pkg() {
			return ""
		}
		return pkg + "." + n.Obj().Name() + "." + o.Name()
	case *types.Var:
		if o.IsField() || o.Parent() != o.Pkg().Scope() {
			return ""
		}
		return pkg + "." + o.Name()
	case *types.TypeName, *types.Const:
		if o.Parent() != o.Pkg().Scope() {
			return ""
		}
		return pkg + "." + o.Name()
	}
	return ""
}

// declared are a declaration's exported names, as toolkitID writes them.
func declared(d ast.Decl) []string {
	var out []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return nil
		}
		if d.Recv == nil {
			return []string{d.Name.Name}
		}
		rt := d.Recv.List[0].Type
		if s, ok := rt.(*ast.StarExpr); ok {
			rt = s.X
		}
		if ix, ok := rt.(*ast.IndexExpr); ok {
			rt = ix.X
		}
		if id, ok := rt.(*ast.Ident); ok && id.IsExported() {
			out = append(out, id.Name+"."+d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					out = append(out, s.Name.Name)
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	return out
}

// What a method must be named to satisfy an interface harp does not own
// (fmt.Stringer, error, json, sort): its users are not harp's packages.
var interfaceMethods = map[string]bool{"String": true, "Error": true, "Unwrap": true, "Is": true, "MarshalJSON": true, "UnmarshalJSON": true,
	"MarshalText": true, "UnmarshalText": true, "Len": true, "Less": true, "Swap": true, "Format": true, "GoString": true, "ServeHTTP": true,
	"Describe": true, "Collect": true, "Write": true, "Read": true, "Close": true}

// owner is who a using package belongs to: a suite (its package, judge
// and whatever lies under it are one owner), a command, or the package
// itself elsewhere (a toolkit package, images, bench).
func owner(pkg string) string {
	parts := strings.Split(pkg, "/")
	switch {
	case parts[0] == "suites" && len(parts) >= 2 && (parts[1] == "cluster" || parts[1] == "conformance" || parts[1] == "regressions") && len(parts) >= 3:
		return strings.Join(parts[:3], "/")
	case parts[0] == "suites" && len(parts) >= 2:
		return strings.Join(parts[:2], "/")
	}
	return pkg
}

// A toolkit identifier that only one suite uses is that suite's code: it
// goes back to the suite (its judge/ when pure). The toolkit holds what
// several owners share; what only other toolkit packages or a command use
// is the toolkit's own API or the command's operation, and stays. An
// identifier one suite uses today that is general (a parser of a whole
// output, a primitive of a node) is listed in singleUserAllowed with why.
func TestToolkitHasNoSingleUserCode(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks every package of harp")
	}
	users := usersOf(t)
	var ids []string
	for id := range users {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	seenAllowed := map[string]bool{}
	for _, id := range ids {
		if interfaceMethods[id[strings.LastIndex(id, ".")+1:]] {
			continue
		}
		owners := map[string]bool{}
		for u := range users[id] {
			owners[owner(u)] = true
		}
		var suite string
		for o := range owners {
			suite = o
		}
		single := len(owners) == 1 && strings.HasPrefix(suite, "suites/")
		why, ok := singleUserAllowed[id]
		if ok {
			seenAllowed[id] = true
			if !single {
				t.Errorf("%s is used by %d owners now, not one suite: take it off singleUserAllowed", id, len(owners))
			}
			if why == "" || strings.HasPrefix(why, "PENDING") {
				t.Errorf("%s: singleUserAllowed must say why it is general; code one suite needs moves there", id)
			}
			continue
		}
		if single {
			t.Errorf("%s is used by %s only: move it there (its judge/ when pure), or list it in singleUserAllowed with why it is general", id, suite)
		}
	}
	for id := range singleUserAllowed {
		if !seenAllowed[id] {
			t.Errorf("singleUserAllowed lists %s, which is not a toolkit identifier any more: take it off", id)
		}
	}
}
