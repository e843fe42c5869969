package spec

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := map[string]Spec{
		"deb:latest":            {Scheme: Deb, Target: "latest"},
		"deb:bookworm":          {Scheme: Deb, Target: "bookworm"},
		"deb:3.0.11-1+deb13u4":  {Scheme: Deb, Target: "3.0.11-1+deb13u4"},
		"bin:/usr/sbin/haproxy": {Scheme: Bin, Target: "/usr/sbin/haproxy"},
		"src:/x/haproxy-3.0.11.tar.gz,patch=a.diff,patch=b.diff,make=USE_OPENSSL=1": {
			Scheme: Src, Target: "/x/haproxy-3.0.11.tar.gz", Patches: []string{"a.diff", "b.diff"}, Make: []string{"USE_OPENSSL=1"}},
		"src:deb:3.0.11": {Scheme: Src, Target: "deb:3.0.11"},
	}
	for raw, want := range good {
		got, err := Parse(raw)
		if err != nil {
			t.Errorf("Parse(%q): %v", raw, err)
			continue
		}
		want.Raw = raw
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%q) = %+v, want %+v", raw, got, want)
		}
		if got.String() != raw {
			t.Errorf("String() = %q, want %q", got.String(), raw)
		}
	}
	bad := map[string]string{
		"rpm:3.0":              `unknown scheme "rpm"`,
		"3.0.11":               "want deb:",
		"deb:":                 "want deb:",
		"src:/x,patch=":        "unknown src option",
		"src:/x,frobnicate=1":  "unknown src option",
		"bin:/x,patch=a.diff":  "bin takes a path",
		"deb:3.0,patch=x.diff": "a deb spec is a suite",
	}
	for raw, msg := range bad {
		_, err := Parse(raw)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("Parse(%q) error = %v, want it to mention %q", raw, err, msg)
		}
	}
}

func TestParseList(t *testing.T) {
	got, err := ParseList(" deb:bookworm;deb:trixie  src:/a,patch=p.diff ")
	if err != nil || len(got) != 3 || got[2].Patches[0] != "p.diff" {
		t.Fatalf("ParseList = %+v, %v", got, err)
	}
	if _, err := ParseList("  "); err == nil {
		t.Error("empty list accepted")
	}
	if IsSuite := (Spec{Scheme: Deb, Target: "sid"}).IsSuite(); !IsSuite {
		t.Error("sid is a suite")
	}
}
