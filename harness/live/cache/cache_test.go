package cache

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "build.lock")
	unlock, err := Lock(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	waited := false
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path, func() { waited = true }); err == nil || !waited {
		t.Errorf("a held lock was taken again (waited %v): %v", waited, err)
	}
	unlock()
	again, err := Lock(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	again()
}
