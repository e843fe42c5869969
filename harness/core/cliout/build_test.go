package cliout

import (
	"os"
	"path/filepath"
	"testing"
)

// Every supported Debian build has the library dump and threads; a musl
// build and one made with USE_DL= lack the dump, and say why.
func TestParseBuildOnCaptures(t *testing.T) {
	for v, b := range capturedBuilds(t) {
		for _, c := range []string{"dump-libs", "threads", "openssl", "lua", "pcre"} {
			if ok, why := b.Has(c); !ok {
				t.Errorf("%s: no %s: %s", v, c, why)
			}
		}
	}
}

func TestBuildLacks(t *testing.T) {
	for _, tc := range []struct{ name, vv, capability, why string }{
		{"USE_DL=", "  TARGET  = linux-glibc\nFeature list : +EPOLL -DL +THREAD\n", "dump-libs", "built without DL (-DL)"},
		{"musl", "  TARGET  = linux-musl\nFeature list : +DL +THREAD\n", "dump-libs", `target "linux-musl" is not a glibc one (the dump needs glibc's dl_iterate_phdr)`},
		{"USE_THREAD=", "  TARGET  = linux-glibc\nFeature list : +DL -THREAD\n", "threads", "built without THREAD (-THREAD)"},
		{"unlisted", "  TARGET  = linux-glibc\nFeature list : +EPOLL\n", "lua", "the feature list does not name LUA"},
	} {
		b, err := ParseBuild(tc.vv)
		if err != nil {
			t.Fatal(err)
		}
		if ok, why := b.Has(tc.capability); ok || why != tc.why {
			t.Errorf("%s: %v %q, want false %q", tc.name, ok, why, tc.why)
		}
	}
	if _, err := ParseBuild("HAProxy version 1.8\n"); err == nil {
		t.Error("a -vv without a feature list parsed")
	}
}

// The asan flavour's -vv (captured from harp's asan build of v2.6.0)
// names the sanitizer among its CFLAGS; no Debian build does.
func TestBuildASan(t *testing.T) {
	vv, err := os.ReadFile("testdata/haproxy-vv-2.6.0-asan.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseBuild(string(vv))
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := b.Has("asan"); !ok {
		t.Errorf("the asan build: no asan: %s", why)
	}
	for v, b := range capturedBuilds(t) {
		if ok, _ := b.Has("asan"); ok {
			t.Errorf("%s: a Debian build read as sanitized", v)
		}
	}
}

// capturedBuilds are the builds of every supported Debian capture's -vv.
func capturedBuilds(t *testing.T) map[string]Build {
	out := map[string]Build{}
	for v, dir := range captures(t) {
		vv, err := os.ReadFile(filepath.Join(dir, "haproxy-vv.txt"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseBuild(string(vv))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		out[v] = b
	}
	return out
}
