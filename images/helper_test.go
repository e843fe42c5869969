package images

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/harp-project/harp/harness/live/helper"
)

// The link proxy's image was compiled with `go build` of the module's
// package in the current directory: outside the checkout (or from a `go
// install`ed harp) that fails with "go.mod file not found". A binary that
// carries the helpers is its own helper, from any directory, with no Go.
func TestHelperImageIsTheBinaryItself(t *testing.T) {
	helper.Run() // this test binary was not started as a helper: it carries them now
	t.Chdir(t.TempDir())
	t.Setenv("GOFLAGS", "-mod=nonexistent") // a go build would fail at once
	b := &Builder{Cache: t.TempDir()}
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	for name, dst := range map[string]string{"linkproxy": LinkProxyBinary, "slowbackend": SlowHTTPBinary} {
		files, inputs, err := b.helperFiles(context.Background(), name, "the "+name, "github.com/harp-project/harp/cmd/"+name, dst)
		if err != nil {
			t.Fatalf("%s from outside the checkout: %v", name, err)
		}
		if files[exe] != dst || len(inputs) < 4 || inputs[1] != "self" {
			t.Errorf("%s: files %v, inputs %v: want this binary at %s", name, files, inputs, dst)
		}
		if _, err := os.Stat(filepath.Join(b.Cache, name)); err == nil {
			t.Errorf("%s: compiled into %s", name, b.Cache)
		}
	}
}
