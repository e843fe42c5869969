// Package all registers every suite: importing it is how harp, the
// self-tests and the benchmark see them. Its import list (suites.go) is
// generated from the directories under suites/ that register a suite
// (`make generate`, run by every build of harp), so adding a suite is
// adding a directory, with no list to edit; a test fails when the list is
// stale.
package all
