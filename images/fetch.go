package images

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/live/cache"
	"github.com/harp-project/harp/harness/live/gitsrc"
)

// git builds a commit of a local clone: its tree exported once as a
// tarball (the tarballs bisect makes), compiled as a src: build.
func (b *Builder) git(ctx context.Context, s spec.Spec) (*Image, error) {
	if _, _, ok := s.Range(); ok {
		return nil, fmt.Errorf("build spec %q names a range of releases: give it to harp matrix --haproxy, which runs each", s.Raw)
	}
	c, err := gitsrc.Resolve(ctx, s.Repo, s.Ref)
	if err != nil {
		return nil, fmt.Errorf("build spec %q: %w", s.Raw, err)
	}
	tarball, err := gitsrc.Export(ctx, s.Repo, filepath.Join(b.Cache, "bisect"), c.ID)
	if err != nil {
		return nil, fmt.Errorf("build spec %q: %w", s.Raw, err)
	}
	src := spec.Spec{Scheme: spec.Src, Target: tarball, Patches: s.Patches, Make: s.Make, Flavor: s.Flavor}
	src.Raw = src.String()
	img, err := b.src(ctx, src)
	if err != nil {
		return nil, err
	}
	img.Spec, img.Origin, img.Commit = s, c.Origin(s.Repo), c.ID
	return img, nil
}

// download fetches a source tarball once into the cache, with progress,
// and checks its sha256 when one is given: a tarball that does not match
// is refused and not kept. Without one, the sum is printed to pin it.
func (b *Builder) download(ctx context.Context, s spec.Spec) (string, error) {
	u, err := url.Parse(s.Target)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("build spec %q: %s is not a URL", s.Raw, s.Target)
	}
	name := path.Base(u.Path)
	if name == "" || name == "/" || name == "." {
		name = "source.tar"
	}
	dir := filepath.Join(b.Cache, "downloads", inputsHash(s.Target))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	file := filepath.Join(dir, name)
	unlock, err := cache.Lock(ctx, dir+".lock", func() { progress.Printf("waiting for another harp downloading %s", s.Target) })
	if err != nil {
		return "", err
	}
	defer unlock()
	if sum, err := fileSum(file); err == nil {
		if s.SHA256 == "" || sum == s.SHA256 {
			return file, nil
		}
		os.Remove(file) // the URL now serves something else: fetch it again
	}
	var got atomic.Int64
	var size int64 = -1
	done := progress.StartWith(func() string {
		if size > 0 {
			return fmt.Sprintf("%d of %d KiB", got.Load()/1024, size/1024)
		}
		return fmt.Sprintf("%d KiB", got.Load()/1024)
	}, "downloading %s", s.Target)
	sum, n, err := fetchTo(ctx, s.Target, file+".part", &got, &size)
	if err == nil && s.SHA256 != "" && sum != s.SHA256 {
		err = fmt.Errorf("sha256 mismatch: the download is %s, the spec wants %s: refused", sum, s.SHA256)
	}
	done(err)
	if err != nil {
		os.Remove(file + ".part")
		return "", fmt.Errorf("build spec %q: %w", s.Raw, err)
	}
	if err := os.Rename(file+".part", file); err != nil {
		return "", err
	}
	if s.SHA256 == "" {
		progress.Printf("downloaded %s (%d bytes, sha256 %s): add ,sha256=%s to the spec to pin it", s.Target, n, sum, sum)
	}
	return file, nil
}

// fetchTo downloads url into file, counting bytes into got, and returns
// the content's sha256 and size.
func fetchTo(ctx context.Context, rawURL, file string, got *atomic.Int64, size *int64) (string, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return "", 0, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("downloading %s: %w", rawURL, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("downloading %s: %s", rawURL, res.Status)
	}
	*size = res.ContentLength
	f, err := os.Create(file)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h, counter{got}), res.Body)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		return "", n, fmt.Errorf("downloading %s: %w", rawURL, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

type counter struct{ n *atomic.Int64 }

func (c counter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }
