package debmirror

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// Real `apt-cache madison haproxy` output from this project's mirror.
const madison = `   haproxy |    3.4.7-1 | http://deb.debian.org/debian experimental/main amd64 Packages
   haproxy |   3.2.26-1 | http://deb.debian.org/debian sid/main amd64 Packages
   haproxy | 3.0.11-1+deb13u4 | http://deb.debian.org/debian trixie/main amd64 Packages
   haproxy | 2.6.12-1+deb12u4 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
   haproxy | 2.6.12-1+deb12u3 | http://deb.debian.org/debian bookworm/main amd64 Packages
   haproxy | 2.6.12-1+deb12u3 | http://deb.debian.org/debian bookworm/main Sources
   haproxy |    3.4.4-1 | http://deb.debian.org/debian experimental/main Sources
`

func TestParseMadison(t *testing.T) {
	got := parseMadison(madison, "Packages")
	want := []Build{{"3.4.7-1", "experimental", ""}, {"3.2.26-1", "sid", ""}, {"3.0.11-1+deb13u4", "trixie", ""},
		{"2.6.12-1+deb12u4", "bookworm", "bookworm-security"}, {"2.6.12-1+deb12u3", "bookworm", ""}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseMadison = %+v", got)
	}
	if src := parseMadison(madison, "Sources"); len(src) != 2 || src[1].Version != "3.4.4-1" {
		t.Errorf("sources = %+v", src)
	}
}

func TestUpstream(t *testing.T) {
	for in, want := range map[string]string{"3.0.11-1+deb13u4": "3.0.11", "1:2.6.12-1": "2.6.12", "3.4.7": "3.4.7"} {
		if got := Upstream(in); got != want {
			t.Errorf("Upstream(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVersionOrder(t *testing.T) {
	// Debian's ordering, not string ordering: 3.10 > 3.9, ~ sorts first.
	bs, err := sortBuilds(context.Background(), []Build{{"3.9.1-1", "a", ""}, {"3.10.0~rc1-1", "b", ""}, {"3.10.0-1", "c", ""}, {"2.6.12-1+deb12u3", "d", ""}})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, b := range bs {
		order = append(order, b.Version)
	}
	want := []string{"3.10.0-1", "3.10.0~rc1-1", "3.9.1-1", "2.6.12-1+deb12u3"}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("order = %v, want %v", order, want)
	}
}

// apt-get update exits 0 when every fetch failed: its words decide.
func TestUpdateFailed(t *testing.T) {
	down := `Err:1 http://deb.example.invalid/debian bookworm InRelease
  Could not resolve 'deb.example.invalid'
Reading package lists...
W: Failed to fetch http://deb.example.invalid/debian/dists/bookworm/InRelease  Could not resolve 'deb.example.invalid'
W: Some index files failed to download. They have been ignored, or old ones used instead.
`
	if got, _ := updateFailed([]byte(down)); !strings.Contains(got, "Could not resolve") && !strings.Contains(got, "Err:1") {
		t.Errorf("a failed refresh: %q", got)
	}
	ok := "Hit:1 http://deb.debian.org/debian bookworm InRelease\nGet:2 http://deb.debian.org/debian sid InRelease [198 kB]\nFetched 198 kB in 1s (198 kB/s)\nReading package lists...\n"
	if got, pockets := updateFailed([]byte(ok)); got != "" || pockets != "" {
		t.Errorf("a good refresh: %q %q", got, pockets)
	}
	// A snapshot mirror without the pockets: usable, with a warning.
	noPockets := `Hit:1 http://snapshot.example/debian bookworm InRelease
Err:2 http://snapshot.example/debian-security bookworm-security InRelease
  404  Not Found [IP: 192.0.2.1 80]
W: Failed to fetch http://snapshot.example/debian-security/dists/bookworm-security/InRelease  404  Not Found
W: Some index files failed to download. They have been ignored, or old ones used instead.
`
	if got, pockets := updateFailed([]byte(noPockets)); got != "" || !strings.Contains(pockets, "bookworm-security") {
		t.Errorf("pockets missing: %q %q", got, pockets)
	}
}

func TestResolveInTakesThePockets(t *testing.T) {
	bs := parseMadison(madison, "Packages") // newest first, as Builds gives them
	for target, want := range map[string]Build{
		"bookworm":         {"2.6.12-1+deb12u4", "bookworm", "bookworm-security"}, // what apt on bookworm installs
		"2.6.12":           {"2.6.12-1+deb12u4", "bookworm", "bookworm-security"},
		"2.6.12-1+deb12u3": {"2.6.12-1+deb12u3", "bookworm", ""}, // an exact version stays reachable
		"latest":           {"3.4.7-1", "experimental", ""},
	} {
		if got, ok := resolveIn(bs, target); !ok || got != want {
			t.Errorf("resolveIn(%q) = %+v, %v; want %+v", target, got, ok, want)
		}
	}
	if _, ok := resolveIn(bs, "buster"); ok {
		t.Error("buster resolved")
	}
}

func TestOrigOfASecurityUpdateFallsBackToTheMainPool(t *testing.T) {
	m := &Mirror{URL: "http://deb.debian.org/debian", Security: "http://deb.debian.org/debian-security"}
	got := m.origURLs("http://deb.debian.org/debian-security/pool/updates/main/h/haproxy/haproxy_2.6.12.orig.tar.gz")
	want := []string{"http://deb.debian.org/debian-security/pool/updates/main/h/haproxy/haproxy_2.6.12.orig.tar.gz",
		"http://deb.debian.org/debian/pool/main/h/haproxy/haproxy_2.6.12.orig.tar.gz"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("origURLs = %v", got)
	}
	if got := m.origURLs("http://deb.debian.org/debian/pool/main/h/haproxy/haproxy_3.4.7.orig.tar.gz"); len(got) != 1 {
		t.Errorf("a main-pool URL: %v", got)
	}
}
