package cliout

import (
	"strings"
	"testing"
)

// Only the parser's alert on a keyword is a refused keyword; a crash
// whose log merely mentions the word is not.
func TestRefusedKeyword(t *testing.T) {
	refused := "node1 on 2.2.0 did not become ready: the master exited with code 1\nlast log lines:\n[ALERT]    (1) : config : parsing [/etc/harp/haproxy.cfg:4] : unknown keyword 'thread-groups' in 'global' section\n[ALERT]    (1) : config : Fatal errors found in configuration."
	if got := RefusedKeyword(refused, "thread-group"); !strings.Contains(got, "unknown keyword 'thread-groups'") {
		t.Fatalf("%q", got)
	}
	named := "[ALERT]    (1) : config : parsing [/etc/harp/haproxy.cfg:9] : 'bind' : 'thread' 2/all: thread-group 2 out of range\n"
	if got := RefusedKeyword(named, "thread-group"); got == "" {
		t.Fatal("an alert naming the word is a refusal")
	}
	if got := RefusedKeyword(named); got != "" {
		t.Fatalf("no words: only an unknown keyword counts: %q", got)
	}
	crashed := "node1 on 3.4.7 did not become ready: the master exited with code 139\nlast log lines:\n[NOTICE]   (1) : haproxy version is 3.4.7 with thread-groups 2\nSegmentation fault"
	if got := RefusedKeyword(crashed, "thread-group"); got != "" {
		t.Fatalf("a crash whose log mentions thread-groups is not a refused keyword: %q", got)
	}
}
