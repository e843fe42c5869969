package harness

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/harp-project/harp/"

// Below: what each layer may import of harp's own packages, besides its
// own layer (images/ is live, built from specs; fixtures/ is embedded data).
var below = map[string][]string{
	"core": {"fixtures"},
	"live": {"harness/core/", "images", "fixtures"},
	"ops":  {"harness/core/", "harness/live/", "images", "fixtures"},
}

// Core may import the standard library but not its network or processes,
// and of the rest only these pure packages, with why.
var (
	coreForbiddenStd = []string{"net", "net/http", "net/rpc", "net/smtp", "os/exec", "os/signal", "plugin"}
	coreThirdParty   = map[string]string{
		"github.com/onsi/ginkgo/v2/types": "the label-filter grammar the registry selects suites with (no runner, no I/O)",
	}
)

// Every package under harness/ is in a layer, imports only its own layer
// and those below, and core stays pure: verdicts, parsers and judges of
// cases compile and test with Docker stopped and no socket opened.
func TestLayers(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && below[e.Name()] == nil && e.Name() != "testdata" {
			t.Errorf("harness/%s is in no layer: the toolkit's packages live under core/, live/ or ops/ (see doc.go)", e.Name())
		}
	}
	for layer, allowed := range below {
		filepath.WalkDir(layer, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			// A core package's tests are held to the same: make unit runs them without Docker.
			if strings.HasSuffix(path, "_test.go") && layer != "core" {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range f.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				if why := refuse(layer, allowed, p); why != "" {
					t.Errorf("harness/%s imports %s: %s", path, p, why)
				}
			}
			return nil
		})
	}
}

// refuse says why a layer's package may not import p; "" when it may.
func refuse(layer string, allowed []string, p string) string {
	if own, ok := strings.CutPrefix(p, module); ok {
		if strings.HasPrefix(own, "harness/"+layer+"/") {
			return ""
		}
		for _, a := range allowed {
			if own == a || strings.HasPrefix(own, a) || strings.HasPrefix(own, a+"/") {
				return ""
			}
		}
		return "a " + layer + " package imports its own layer and those below it only (core < live < ops; suites above)"
	}
	if layer != "core" {
		return ""
	}
	if !strings.Contains(strings.SplitN(p, "/", 2)[0], ".") { // the standard library
		if slices.Contains(coreForbiddenStd, p) {
			return "core opens no socket and starts no process: that is live's"
		}
		return ""
	}
	if coreThirdParty[p] != "" {
		return ""
	}
	return "core imports no third-party package but those listed in coreThirdParty, with why"
}
