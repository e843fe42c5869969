package config

import (
	"slices"
	"testing"
)

func TestSeq(t *testing.T) {
	if got := Seq(3); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("Seq(3) = %v", got)
	}
	if got := Seq(0); len(got) != 0 {
		t.Errorf("Seq(0) = %v", got)
	}
}
