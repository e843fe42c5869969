package config

// Seq is 1 to n, for a template's range (one line per thread or group).
func Seq(n int) []int {
	out := make([]int, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, i)
	}
	return out
}
