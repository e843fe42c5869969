package main

import (
	"flag"
	"fmt"
	"os"
)

// One flag name per thing across run, matrix, nightly and bisect: the
// builds are --haproxy, the suite filter --suites. renamed keeps an old
// name working for a while: it sets the same value and says, on stderr,
// the name to use.
func renamed(fs *flag.FlagSet, old, now string, p *string) {
	fs.Func(old, fmt.Sprintf("the old name of --%s (works for a while, with a warning)", now), func(v string) error {
		fmt.Fprintf(os.Stderr, "harp %s: --%s is now --%s; the old name will go away\n", fs.Name(), old, now)
		*p = v
		return nil
	})
}
