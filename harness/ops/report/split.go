package report

// SplitFrom names, for each suite made of part of another suite's checks,
// the suite those checks belonged to before the split. The check IDs did
// not change, so runs recorded before it still answer for them: harp
// history reads releases run long ago, a nightly compares with the night
// before.
var SplitFrom = map[string]string{
	"upstream-fixes-cli":       "upstream-fixes",
	"upstream-fixes-master":    "upstream-fixes",
	"upstream-fixes-config":    "upstream-fixes",
	"upstream-fixes-tables":    "upstream-fixes",
	"upstream-fixes-listeners": "upstream-fixes",
	"upstream-fixes-peers":     "upstream-fixes",
}

// Answers says whether a result of suite resultSuite answers for suite's
// checks: it is that suite, or the one suite was split from.
func Answers(resultSuite, suite string) bool {
	return resultSuite == suite || (SplitFrom[suite] != "" && SplitFrom[suite] == resultSuite)
}
