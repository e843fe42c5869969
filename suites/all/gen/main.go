// Command gen writes suites/all/suites.go: the import of every directory
// under suites/ that registers a suite. Run from the repository root.
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/harp-project/harp/suites/internal/discover"
)

const out = "suites/all/suites.go"

func main() {
	src, err := discover.Source("suites")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if old, err := os.ReadFile(out); err == nil && bytes.Equal(old, src) {
		return // unchanged: keep the file's time, so make rebuilds nothing
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
