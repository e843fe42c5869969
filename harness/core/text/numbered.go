package text

import "fmt"

// Numbered is format filled with 1 to n, one string each: Numbered("s%d",
// 3) is s1, s2, s3. A config numbers its sections and tables so, and the
// suite that reads them names them the same way from the same count.
func Numbered(format string, n int) []string {
	out := make([]string, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf(format, i))
	}
	return out
}
