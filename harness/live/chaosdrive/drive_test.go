package chaosdrive

import (
	"errors"
	"testing"
)

// A state never read (the run ended first) is unknown, never all clear.
func TestFaultedState(t *testing.T) {
	if o := FaultedState(nil, errors.New("never read (the run ended: context canceled)")); o.Known() {
		t.Errorf("unread: %+v", o)
	}
	if v, ok := FaultedState(nil, nil).Get(); !ok || len(v) != 0 {
		t.Errorf("read, none faulted: %v %v", v, ok)
	}
	if v, ok := FaultedState([]string{"node1->node2"}, nil).Get(); !ok || len(v) != 1 {
		t.Errorf("read, one faulted: %v %v", v, ok)
	}
}
