package judge

import "github.com/harp-project/harp/harness/core/cliout"

// ListenerStalls are the stalls over overMs that count against the
// listener or proxy path: those whose evidence points there, or every
// one when the build prints no lock history to tell (cliout.Stall.Where); on is
// how many pointed there.
func ListenerStalls(stalls []cliout.Stall, overMs int) (counted []cliout.Stall, on int) {
	for _, s := range stalls {
		if s.Ms <= overMs {
			continue
		}
		listener, known := s.Where()
		if listener {
			on++
		}
		if listener || !known {
			counted = append(counted, s)
		}
	}
	return counted, on
}
