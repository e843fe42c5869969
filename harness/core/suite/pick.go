package suite

import (
	"fmt"
	"strings"
)

// Pick is the variants of a suite a parameter names, in the suite's own
// order: "" or "all" for every one, else ids separated by commas. An id
// no variant has is an error naming the ones there are (noun says what a
// variant is: "break", "kind of reload").
func Pick[T any](v string, all []T, id func(T) string, noun string) ([]T, error) {
	if v == "" || v == "all" {
		return all, nil
	}
	want := map[string]bool{}
	for _, w := range strings.Split(v, ",") {
		want[strings.TrimSpace(w)] = true
	}
	var out []T
	for _, x := range all {
		if want[id(x)] {
			out = append(out, x)
			delete(want, id(x))
		}
	}
	for w := range want {
		return nil, fmt.Errorf("no %s %q: want %s or all", noun, w, IDs(all, id))
	}
	return out, nil
}

// Variants declares a parameter that picks some of a suite's variants.
func Variants[T any](name, doc string, all []T, id func(T) string, noun string) Param {
	return Text(name, "all", doc+" (all, or some of "+IDs(all, id)+", comma-separated)", func(v string) error {
		_, err := Pick(v, all, id, noun)
		return err
	})
}

// IDs lists the variants' ids.
func IDs[T any](all []T, id func(T) string) string {
	var ids []string
	for _, x := range all {
		ids = append(ids, id(x))
	}
	return strings.Join(ids, ", ")
}
