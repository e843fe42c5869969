// Command linkproxy is harp's link proxy (harness/live/helper) as a command of
// its own: what test binaries, which do not carry the helpers, build.
package main

import "github.com/harp-project/harp/harness/live/helper"

func main() { helper.Main(helper.LinkProxy) }
