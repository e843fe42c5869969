package cliout

import "strings"

// Stream is one stream of `show sess`.
type Stream struct {
	Ptr  string `json:"ptr"`  // its pointer, what `shutdown session` takes
	Line string `json:"line"` // the rest of its line: "proto=tcpv4 src=... fe=web ..."
}

// Has says whether the stream's line holds the word w ("fe=web",
// "src=192.0.2.1:4000", "proto=?"): a whole field, never a part of one.
func (s Stream) Has(w string) bool { return strings.Contains(" "+s.Line+" ", " "+w+" ") }

// ParseSess reads `show sess`, one stream a line:
//
//	0x7f20b2c78900: proto=tcpv4 src=172.17.0.1:59874 fe=local be=local srv=<none> ts=00 ...
//
// Other lines are skipped. No stream is no error: the answer lists at
// least the CLI's own, so a caller looking for one finds none in an
// error answer too.
func ParseSess(out string) []Stream {
	var ss []Stream
	for _, line := range strings.Split(out, "\n") {
		ptr, rest, ok := strings.Cut(line, ": ")
		if ok && strings.HasPrefix(ptr, "0x") {
			ss = append(ss, Stream{Ptr: ptr, Line: rest})
		}
	}
	return ss
}
