package cliout

import (
	"os"
	"testing"
)

// Real show fd output of 2.6.12 and 3.4.7: a frontend with maxconn 1
// holding one connection while a second waits is limited (LIM).
func TestListenerStates(t *testing.T) {
	raw, err := os.ReadFile("testdata/show-fd-listeners.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ListenerStates(string(raw))
	if err != nil || got["limited"] != "LIM" || got["GLOBAL"] != "RDY" {
		t.Errorf("%v %v", got, err)
	}
	if _, err := ListenerStates("Unknown command\n"); err == nil {
		t.Error("an answer without listeners read")
	}
}
