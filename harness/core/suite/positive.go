package suite

import (
	"fmt"
	"strconv"
)

// Positive checks a whole number of 1 or more: for a Text parameter whose
// default ("") the suite derives from other values.
func Positive(v string) error {
	if n, err := strconv.Atoi(v); err != nil || n < 1 {
		return fmt.Errorf("want a whole number of 1 or more")
	}
	return nil
}
