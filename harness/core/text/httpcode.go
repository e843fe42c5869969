package text

import "fmt"

// HTTPCode is an HTTP status for a message, where 0 is no answer (as
// node.HTTPStatus gives a worker that answered nothing): "200", "no
// answer". Judges and notes of every suite that reads a worker's HTTP
// answer word it so.
func HTTPCode(code int) string {
	if code == 0 {
		return "no answer"
	}
	return fmt.Sprint(code)
}
