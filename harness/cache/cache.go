// Package cache locates harp's cache: apt state, downloads, source builds.
package cache

import (
	"os"
	"path/filepath"
)

// Dir is $HARP_CACHE, else the user's cache directory /harp.
func Dir() string {
	if d := os.Getenv("HARP_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "harp")
}
