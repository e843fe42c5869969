package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/harp-project/harp/harness/ops/regtest"
)

// The reg-tests in the repo are what the cases export now: a case changed
// without `make reg-tests-export` fails here, not in upstream's hands.
func TestRegTestsCurrent(t *testing.T) {
	tests, refused, err := exportAll()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join("..", "..", regtestsDir)
	m, err := regtest.Load(filepath.Join(root, manifestName))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tests) != len(tests) || len(m.Refused) != len(refused) {
		t.Errorf("the manifest lists %d tests and %d refusals, the cases export %d and %d: run make reg-tests-export", len(m.Tests), len(m.Refused), len(tests), len(refused))
	}
	for _, tt := range tests {
		body, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(tt.File)))
		if err != nil || string(body) != tt.Text {
			t.Errorf("%s is not what %s exports now (%v): run make reg-tests-export", tt.File, tt.Check, err)
		}
		if e := m.Entry(tt.File); e == nil || e.Check != tt.Check || e.Fix != tt.Fix {
			t.Errorf("%s: manifest entry %+v", tt.File, e)
		}
	}
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.vtc"))
	if len(files) != len(tests) {
		t.Errorf("%d .vtc files in %s, %d exported: a file no case writes", len(files), root, len(tests))
	}
}
