// Command slowbackend is harp's slow HTTP backend (harness/live/helper) as a
// command of its own: what test binaries, which do not carry the helpers,
// build.
package main

import "github.com/harp-project/harp/harness/live/helper"

func main() { helper.Main(helper.SlowBackend) }
