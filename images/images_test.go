package images

import (
	"context"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/spec"
)

func TestVersionOf(t *testing.T) {
	for vv, want := range map[string]string{
		"HAProxy version 3.4.7-1 2026/10/14 - https://haproxy.org/\nStatus: ...": "3.4.7-1",
		"HA-Proxy version 2.0.33 2023/07/14":                                     "2.0.33",
		"garbage":                                                                "unknown",
	} {
		if got := VersionOf(vv); got != want {
			t.Errorf("VersionOf(%q) = %q, want %q", vv, got, want)
		}
	}
}

func TestTagsFollowInputs(t *testing.T) {
	a := tagFor("deb", "3.0.11-1+deb13u4", "x")
	if a != tagFor("deb", "3.0.11-1+deb13u4", "x") {
		t.Error("same inputs, different tags")
	}
	if a == tagFor("deb", "3.0.11-1+deb13u4", "y") {
		t.Error("different inputs, same tag")
	}
	if !strings.HasPrefix(a, Repository+":deb-3.0.11-1_deb13u4-") {
		t.Errorf("tag %q", a)
	}
}

func TestDisplayName(t *testing.T) {
	s, _ := spec.Parse("src:/x.tar.gz,patch=/p/fix-a.diff,patch=b.diff")
	if got := displayName(s, "3.0.11"); got != "3.0.11+fix-a.diff+b.diff" {
		t.Errorf("displayName = %q", got)
	}
	s, _ = spec.Parse("src:deb:3.0.11,flavor=asan,patch=uaf.diff")
	if got := displayName(s, "3.0.11"); got != "3.0.11-asan+uaf.diff" {
		t.Errorf("displayName with a flavour = %q", got)
	}
	if s, _ = spec.Parse("src:deb:3.0.11,flavor=minimal"); displayName(s, "3.0.11") != "3.0.11" || s.String() != "src:deb:3.0.11" {
		t.Errorf("flavor=minimal is the default build: %q, %q", displayName(s, "3.0.11"), s.String())
	}
}

func TestFlavorMake(t *testing.T) {
	if FlavorMake(spec.Minimal) != nil {
		t.Error("minimal adds nothing to make")
	}
	asan := strings.Join(FlavorMake(spec.ASan), " ")
	for _, want := range []string{"-fsanitize=address", "DEBUG_STRICT=2", "OPT_CFLAGS=-O1"} {
		if !strings.Contains(asan, want) {
			t.Errorf("asan lacks %s: %s", want, asan)
		}
	}
	if full := strings.Join(FlavorMake(spec.Full), " "); !strings.Contains(full, "USE_OPENSSL=1") || !strings.Contains(full, "USE_LUA=1") {
		t.Errorf("full: %s", full)
	}
}

// A binary that is not HAProxy is named as such, with what it printed
// or its exit status, never "<nil>" (it exited 0 and printed nothing).
func TestNotHAProxy(t *testing.T) {
	b := &Builder{Cache: t.TempDir()}
	for path, want := range map[string]string{"/bin/true": "printed no HAProxy version line", "/bin/false": "exit status 1"} {
		s, _ := spec.Parse("bin:" + path)
		_, err := b.Ensure(context.Background(), s)
		if err == nil || !strings.Contains(err.Error(), "does not look like HAProxy") || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "<nil>") {
			t.Errorf("bin:%s: %v, want %q", path, err, want)
		}
	}
}
