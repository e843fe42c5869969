package images

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/moby/moby/api/types/registry"
)

// rootfs writes a tarball of the given entries (a name ending in / is a
// directory; link values are "->target" symlinks).
func rootfs(t *testing.T, entries map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, v := range entries {
		h := &tar.Header{Name: name, Mode: 0o755, Typeflag: tar.TypeReg, Size: int64(len(v))}
		switch {
		case name[len(name)-1] == '/':
			h.Typeflag, h.Size = tar.TypeDir, 0
		case len(v) > 2 && v[:2] == "->":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, v[2:], 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(v))
		}
	}
	tw.Close()
	f := filepath.Join(t.TempDir(), "rootfs.tar")
	if err := os.WriteFile(f, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFindBinaryFollowsPATHAndLinks(t *testing.T) {
	// The official image's layout: haproxy in /usr/local/sbin, on PATH;
	// a merged /usr with /sbin a link.
	official := rootfs(t, map[string]string{
		"usr/": "", "usr/local/": "", "usr/local/sbin/": "", "usr/local/sbin/haproxy": "ELF", "usr/sbin/": "", "sbin": "->usr/sbin",
	})
	idx, err := indexTar(official)
	if err != nil {
		t.Fatal(err)
	}
	if bin, _ := findBinary(idx, []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin"}); bin != "/usr/local/sbin/haproxy" {
		t.Errorf("official layout: %q", bin)
	}
	// A binary reached through a linked directory and a linked file.
	linked := rootfs(t, map[string]string{
		"opt/": "", "opt/haproxy-3.2/": "", "opt/haproxy-3.2/sbin/": "", "opt/haproxy-3.2/sbin/haproxy": "ELF",
		"usr/": "", "usr/sbin/": "", "usr/sbin/haproxy": "->/opt/current/sbin/haproxy", "opt/current": "->haproxy-3.2",
	})
	idx, _ = indexTar(linked)
	if bin, _ := findBinary(idx, nil); bin != "/opt/haproxy-3.2/sbin/haproxy" {
		t.Errorf("linked layout: %q", bin)
	}
	// None: every place looked is named.
	none := rootfs(t, map[string]string{"usr/": "", "usr/bin/": "", "usr/bin/nginx": "ELF"})
	idx, _ = indexTar(none)
	if bin, looked := findBinary(idx, []string{"PATH=/custom/bin"}); bin != "" || len(looked) != 1+len(binDirs) || looked[0] != "/custom/bin" {
		t.Errorf("no haproxy: %q, looked %v", bin, looked)
	}
	// A link loop ends.
	loop := rootfs(t, map[string]string{"usr/": "", "usr/sbin": "->/usr/sbin"})
	idx, _ = indexTar(loop)
	if _, ok := idx.resolve("/usr/sbin/haproxy"); ok {
		t.Error("a link loop resolved")
	}
}

func TestWithHarpFilesLinksTheBinary(t *testing.T) {
	src := rootfs(t, map[string]string{"usr/": "", "usr/local/": "", "usr/local/sbin/": "", "usr/local/sbin/haproxy": "ELF", "tmp/": ""})
	idx, _ := indexTar(src)
	var out bytes.Buffer
	if err := withHarpFiles(src, &out, idx, "/usr/local/sbin/haproxy"); err != nil {
		t.Fatal(err)
	}
	got := map[string]*tar.Header{}
	tr := tar.NewReader(&out)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		got[filepath.Clean("/"+h.Name)] = h
	}
	if h := got[Binary]; h == nil || h.Typeflag != tar.TypeLink || h.Linkname != "usr/local/sbin/haproxy" {
		t.Errorf("%s: %+v", Binary, h)
	}
	for _, d := range []string{"/tmp", "/run", "/etc/harp", "/var/lib/haproxy", "/usr/sbin"} {
		if got[d] == nil {
			t.Errorf("no %s", d)
		}
	}
}

func TestRegistryAuthFromDockerConfig(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DOCKER_CONFIG", dir)
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"auths":{"registry.example":{"auth":"dXNlcjpwYXNz"}}}`), 0o600) // user:pass
	if a := registryAuth(context.Background(), "registry.example/team/haproxy:3.2"); a == "" {
		t.Error("no auth for registry.example")
	}
	if a := registryAuth(context.Background(), "haproxy:3.2"); a != "" {
		t.Errorf("auth for docker.io from another registry's entry: %q", a)
	}
}

// Credential helpers as the docker CLI uses them: the registry's own
// (credHelpers), else the default store (credsStore), else auths.
func TestRegistryAuthFromCredentialHelpers(t *testing.T) {
	dir, bin := t.TempDir(), t.TempDir()
	t.Setenv("DOCKER_CONFIG", dir)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	helper := func(name, body string) {
		os.WriteFile(filepath.Join(bin, "docker-credential-"+name), []byte("#!/bin/sh\nread server\n"+body+"\n"), 0o755)
	}
	helper("team", `[ "$server" = registry.example ] && echo '{"ServerURL":"registry.example","Username":"ci","Secret":"s3cret"}' || exit 1`)
	helper("store", `echo '{"ServerURL":"'$server'","Username":"<token>","Secret":"idtoken"}'`)
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"credsStore":"store","credHelpers":{"registry.example":"team"},"auths":{"other.example":{"auth":"dXNlcjpwYXNz"}}}`), 0o600)
	decode := func(a string) registry.AuthConfig {
		var c registry.AuthConfig
		raw, err := base64.URLEncoding.DecodeString(a)
		if err != nil || json.Unmarshal(raw, &c) != nil {
			t.Fatalf("auth %q does not decode", a)
		}
		return c
	}
	if c := decode(registryAuth(context.Background(), "registry.example/team/haproxy:3.2")); c.Username != "ci" || c.Password != "s3cret" || c.ServerAddress != "registry.example" {
		t.Errorf("the registry's helper: %+v", c)
	}
	if c := decode(registryAuth(context.Background(), "third.example/haproxy:3.2")); c.IdentityToken != "idtoken" || c.Password != "" {
		t.Errorf("the default store, an identity token: %+v", c)
	}
	helper("store", "exit 1") // the store knows nothing: auths, then anonymous
	if c := decode(registryAuth(context.Background(), "other.example/haproxy:3.2")); c.Username != "user" || c.Password != "pass" {
		t.Errorf("auths after a helper that knows nothing: %+v", c)
	}
	if a := registryAuth(context.Background(), "fourth.example/haproxy:3.2"); a != "" {
		t.Errorf("anonymous when nothing knows the registry: %q", a)
	}
}

func TestRepoDigestOfTheReferencesRepository(t *testing.T) {
	const sum = "sha256:d119edd5eccdfe76332364345075723d1d30d9b7294e7c199b9333f66f2d8d15"
	digests := []string{"127.0.0.1:40209/library/haproxy@" + sum, "127.0.0.1:41321/library/haproxy@" + sum}
	if got := repoDigest("127.0.0.1:41321/library/haproxy:2.6-harp", digests); got != digests[1] {
		t.Errorf("got %q", got)
	}
	if got := repoDigest("haproxy:3.2", digests); got != "no registry digest for haproxy:3.2: a local image" {
		t.Errorf("got %q", got)
	}
}
