package issue3519

import (
	"testing"
	"time"
)

// How a trial's window is judged; the facts are those real runs record
// (3.4.7: the replacement closed by HAProxy about 1 s after the first
// socket, show peers no longer established).
func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name              string
		f                 Facts
		violation, unmet string
	}{
		{"replacement kept: held", Facts{Replace: true, EstablishedAfter: true}, "", ""},
		{"replacement closed by HAProxy, show peers agrees: the issue",
			Facts{Replace: true, Closed: true, ClosedByPeer: true, ClosedAfter: 1043 * time.Millisecond, Why: "EOF"},
			"replacement closed by HAProxy within 2.5s", ""},
		{"the control closed by HAProxy is a violation of the control",
			Facts{Closed: true, ClosedByPeer: true, Why: "EOF"}, "control connection closed by HAProxy within 2.5s", ""},
		{"harp's client ended it: never HAProxy's fault",
			Facts{Replace: true, Closed: true, Why: "decoding: unknown message class 9"}, "", "harp's client ended the replacement session itself: decoding: unknown message class 9"},
		{"socket closed while show peers says established",
			Facts{Replace: true, Closed: true, ClosedByPeer: true, EstablishedAfter: true}, "", "the replacement socket closed but show peers still shows the peer established"},
		{"socket open while show peers says not established",
			Facts{Replace: true}, "", "the replacement socket is open but show peers shows the peer not established"},
	} {
		v, u := Judge(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
}
