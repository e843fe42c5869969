package images

import (
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/spec"
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
}
