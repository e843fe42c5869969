package regtest

import (
	"errors"
	"strings"
	"testing"
)

const findingVTC = `varnishtest "mworker: a master in recovery mode serves its CLI"

# Why it matters.
#REGTEST_TYPE=bug

feature ignore_unknown_macro
feature cmd "$HAPROXY_PROGRAM -cc 'version_atleast(3.1-dev0)'"

haproxy h1 -W -S -conf {
    global
        nbthread 1

    defaults
        mode http
        timeout client  1s

    frontend fe
        bind "fd@${fe}"
        http-request return status 200
} -start

# The worker is up.
haproxy h1 -cli {
    send "show info"
    expect ~ "Name: HAProxy"
}

shell {
    printf 'unterminated\n' >> "${h1_name}/cfg"
}
haproxy h1 -mcli {
    send "reload"
    expect ~ "Success=0"
}
haproxy h1 -mcli {
    send "show proc"
    expect ~ "worker"
}
`

// A fake pair of builds: the bad one crashes when the master reloads a
// config with the unterminated line and is then asked anything; both
// need a haproxy started with the master CLI.
func fakeOracle(runs *int) Oracle {
	return func(vtc string) (Outcome, Outcome, error) {
		*runs++
		started := strings.Contains(vtc, "haproxy h1 -W -S -conf {") && strings.Contains(vtc, "} -start")
		if !started {
			return Outcome{Result: Error, Why: "no haproxy"}, Outcome{Result: Error, Why: "no haproxy"}, nil
		}
		crash := strings.Contains(vtc, "unterminated") && strings.Contains(vtc, `send "reload"`) && strings.Contains(vtc, `send "show proc"`)
		bad := Outcome{Result: Passed}
		if crash {
			bad = Outcome{Result: Failed, Why: "a process died: h1 exited with code 139 (pid 4242)"}
		}
		return bad, Outcome{Result: Passed}, nil
	}
}

func TestMinimize(t *testing.T) {
	runs := 0
	m, err := Minimize(findingVTC, fakeOracle(&runs), 500)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`send "reload"`, `send "show proc"`, "unterminated", "#REGTEST_TYPE=bug", `varnishtest "mworker`, "feature cmd", "feature ignore_unknown_macro", `expect ~ "Success=0"`} {
		if !strings.Contains(m.VTC, want) {
			t.Errorf("minimized lost %q:\n%s", want, m.VTC)
		}
	}
	for _, gone := range []string{"# The worker is up.", `send "show info"`, "nbthread 1", "http-request return"} {
		if strings.Contains(m.VTC, gone) {
			t.Errorf("minimized kept %q:\n%s", gone, m.VTC)
		}
	}
	if m.Runs != runs || m.LinesTo >= m.LinesFrom || m.Removed == 0 {
		t.Errorf("%+v after %d runs", m, runs)
	}
	// 1-minimal: no single unit of the result can go.
	lines := strings.Split(strings.TrimRight(m.VTC, "\n"), "\n")
	for _, u := range Units(lines) {
		b, g, _ := fakeOracle(new(int))(strings.Join(Without(lines, u), "\n") + "\n")
		if Distinguishes(b, g, m.BadWhy) {
			t.Errorf("lines %d-%d could still go:\n%s", u.From, u.To, m.VTC)
		}
	}
	// The bound is kept.
	runs = 0
	if m, err := Minimize(findingVTC, fakeOracle(&runs), 5); err != nil || m.Runs != 5 || runs != 5 {
		t.Errorf("bounded: %+v %v after %d runs", m, err, runs)
	}
}

func TestMinimizeRefuses(t *testing.T) {
	passes := func(string) (Outcome, Outcome, error) { return Outcome{Result: Passed}, Outcome{Result: Passed}, nil }
	if _, err := Minimize(findingVTC, passes, 10); err == nil || !strings.Contains(err.Error(), "does not show the finding to begin with: passed on the bad build") {
		t.Errorf("a test that passes on the bad build: %v", err)
	}
	broken := func(string) (Outcome, Outcome, error) { return Outcome{}, Outcome{}, errors.New("docker: gone") }
	if _, err := Minimize(findingVTC, broken, 10); err == nil || err.Error() != "docker: gone" {
		t.Errorf("harp's failure: %v", err)
	}
	// Another failure on the bad build is not the finding.
	other := Outcome{Result: Failed, Why: "CLI expect failed ~ \"worker\""}
	if Distinguishes(other, Outcome{Result: Passed}, "a process died: h1 exited with code 139") {
		t.Error("another reason was taken for the finding")
	}
	if !Distinguishes(Outcome{Result: Failed, Why: "a process died: h1 exited with code 139 (pid 12)"}, Outcome{Result: Passed}, "a process died: h1 exited with code 139 (pid 4242)") {
		t.Error("the same reason with another pid was not")
	}
}

func TestUnits(t *testing.T) {
	lines := strings.Split(strings.TrimRight(findingVTC, "\n"), "\n")
	var blocks, inner int
	for _, u := range Units(lines) {
		if u.Block {
			blocks++
			first := strings.TrimSpace(lines[u.From])
			if strings.HasPrefix(first, "#") || first == "" || strings.HasPrefix(first, "varnishtest") || strings.HasPrefix(first, "feature") {
				t.Errorf("a block starts at %q", first)
			}
		} else {
			inner++
		}
	}
	// haproxy -conf, -cli, shell, -mcli x2 (the feature lines stay); inner:
	// 8 config lines (section headers included), and the sends and the
	// printf (a CLI block's only expect stays with it).
	if blocks != 5 || inner != 12 {
		t.Errorf("%d blocks, %d inner lines", blocks, inner)
	}
}
