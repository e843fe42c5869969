package images

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/harp-project/harp/harness/core/spec"
)

func TestDownloadChecksAndCaches(t *testing.T) {
	body := []byte("not really a tarball, but bytes with a sum")
	sum := sha256.Sum256(body)
	good := hex.EncodeToString(sum[:])
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/haproxy-3.2.9.tar.gz" {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		w.Write(body)
	}))
	defer srv.Close()
	b := &Builder{Cache: t.TempDir()}
	ctx := context.Background()
	parse := func(raw string) spec.Spec {
		t.Helper()
		s, err := spec.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	url := srv.URL + "/haproxy-3.2.9.tar.gz"

	// A sum that does not match: refused, nothing kept.
	bad := strings.Repeat("0", 64)
	if _, err := b.download(ctx, parse("src:"+url+",sha256="+bad)); err == nil || !strings.Contains(err.Error(), "sha256 mismatch: the download is "+good) {
		t.Fatalf("mismatch: %v", err)
	}
	if files, _ := filepath.Glob(filepath.Join(b.Cache, "downloads", "*", "*")); len(files) != 0 {
		t.Errorf("a refused download was kept: %v", files)
	}
	// The right sum: downloaded once, then reused.
	path, err := b.download(ctx, parse("src:"+url+",sha256="+good))
	if err != nil || filepath.Base(path) != "haproxy-3.2.9.tar.gz" {
		t.Fatalf("download = %s, %v", path, err)
	}
	if data, _ := os.ReadFile(path); string(data) != string(body) {
		t.Errorf("content %q", data)
	}
	if _, err := b.download(ctx, parse("src:"+url)); err != nil || hits.Load() != 2 {
		t.Errorf("second download: %v, %d requests (want the cached file, 2 in all)", err, hits.Load())
	}
	// Errors name the problem.
	if _, err := b.download(ctx, parse("src:"+srv.URL+"/missing.tar.gz")); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("missing: %v", err)
	}
	srv.Close()
	if _, err := b.download(ctx, parse("src:http://127.0.0.1:1/x.tar.gz")); err == nil || !strings.Contains(err.Error(), "downloading http://127.0.0.1:1/x.tar.gz") {
		t.Errorf("server down: %v", err)
	}
}
