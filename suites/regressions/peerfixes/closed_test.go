package peerfixes

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// HAProxy's close after harp was starved for 6 s is no answer (f084f4d:
// REPRODUCED "closed by haproxy after 6s"); after harp kept its pace, it
// is the case's answer.
func TestClosedAnswer(t *testing.T) {
	if a, err := closedAnswer(true, nil, 6*time.Second, 6*time.Second); err == nil || !strings.Contains(err.Error(), "harp sent nothing for 6s") {
		t.Errorf("starved: %q %v", a, err)
	}
	if a, err := closedAnswer(true, nil, time.Second, 7*time.Second); err != nil || a != "closed by haproxy after 7s" {
		t.Errorf("kept pace: %q %v", a, err)
	}
	if _, err := closedAnswer(false, errors.New("decoding: bad class"), time.Second, time.Second); err == nil {
		t.Error("harp's own end read as HAProxy's")
	}
}
