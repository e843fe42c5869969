package config

import (
	"slices"
	"testing"
)

func TestSections(t *testing.T) {
	if got, want := Sections([]string{"s1", "s2", "s3"}, 10000), []Section{{"s1", 10000}, {"s2", 10001}, {"s3", 10002}}; !slices.Equal(got, want) {
		t.Errorf("Sections = %v, want %v", got, want)
	}
	if got := Sections(nil, 10000); len(got) != 0 {
		t.Errorf("Sections(nil) = %v", got)
	}
}
