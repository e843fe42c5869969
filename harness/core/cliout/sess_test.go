package cliout

import "testing"

// Streams of show sess (lines as 3.4.7 prints them, abridged), and words
// matched whole.
func TestParseSess(t *testing.T) {
	out := "0x7f20b2c77a00: proto=? ts=00 epoch=0 age=0s calls=3 rate=1 cpu=0 lat=0 scb=[3,8001h,fd=-1,rex=,wex=] exp=0s rc=1 c_exp=0s\n" +
		"0x7f20b2c78900: proto=tcpv4 src=172.17.0.1:59874 fe=web be=be srv=<none> ts=00 epoch=0 age=0s calls=1\n" +
		"0x7f20b2c78e00: proto=sockpair src=unix:1 fe=GLOBAL be=<NONE> srv=<none> ts=00 epoch=0 age=0s calls=1\n\n"
	ss := ParseSess(out)
	if len(ss) != 3 || ss[1].Ptr != "0x7f20b2c78900" || ss[0].Line[:7] != "proto=?" {
		t.Fatalf("streams %+v", ss)
	}
	for w, want := range map[string]bool{"proto=?": true, "fe=web": true, "fe=we": false, "src=172.17.0.1:59874": true, "src=172.17.0.1:5987": false} {
		if got := ss[0].Has(w) || ss[1].Has(w); got != want {
			t.Errorf("Has(%q) = %v", w, got)
		}
	}
	if ss := ParseSess("Permission denied\n"); ss != nil {
		t.Errorf("an error answer: %+v", ss)
	}
}
