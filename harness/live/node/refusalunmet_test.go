package node

import (
	"errors"
	"fmt"
	"testing"
)

func TestRefusalUnmet(t *testing.T) {
	var unmet string
	refused := fmt.Errorf("writing: %w", &Refused{Command: "set table t key k data.gpc0 1", Answer: "Unknown table"})
	if err := RefusalUnmet(refused, &unmet); err != nil || unmet != refused.Error() {
		t.Errorf("a refusal: err %v, unmet %q", err, unmet)
	}
	unmet = ""
	harp := errors.New("connection refused")
	if err := RefusalUnmet(harp, &unmet); err != harp || unmet != "" {
		t.Errorf("harp's error: err %v, unmet %q", err, unmet)
	}
	if err := RefusalUnmet(nil, &unmet); err != nil || unmet != "" {
		t.Errorf("no error: err %v, unmet %q", err, unmet)
	}
}
