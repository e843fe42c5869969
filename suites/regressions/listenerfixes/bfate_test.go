package listenerfixes

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

func TestBFate(t *testing.T) {
	if a, err := bFate([]byte("HTTP/1.1 200 OK\r\n"), nil); !a || err != nil {
		t.Errorf("answered: %v %v", a, err)
	}
	if a, err := bFate(nil, os.ErrDeadlineExceeded); a || err != nil {
		t.Errorf("left waiting: %v %v", a, err)
	}
	if _, err := bFate(nil, syscall.ECONNRESET); err == nil {
		t.Error("a reset read as B unanswered")
	}
	if _, err := bFate(nil, nil); err == nil || !errors.Is(err, err) {
		t.Error("a close without a response read as B unanswered")
	}
}
