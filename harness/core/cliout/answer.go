package cliout

import "strings"

// Succeeded says whether a state-changing command's answer is a success:
// empty, or "Done". A refusal ("Permission denied", "Unknown command")
// or any other answer (an argument error) is not.
func Succeeded(answer string) bool {
	a := strings.TrimSpace(answer)
	return a == "" || strings.HasPrefix(a, "Done")
}
