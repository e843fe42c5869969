package main

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/live/nemesis"
)

// harnessFaults is the --harness-faults flag: a nemesis seed, or off.
type harnessFaults struct{ v string }

func harnessFaultsFlag(fs *flag.FlagSet) *harnessFaults {
	h := &harnessFaults{}
	fs.StringVar(&h.v, "harness-faults", "", "inject faults into harp's own side with this seed (CLI timeouts, early closes and late answers, slow Docker calls, failing toxiproxy calls and HTTP probes, a starved CPU); also "+nemesis.Env)
	return h
}

// apply turns the nemesis on from the flag, or else from the environment.
func (h *harnessFaults) apply() error {
	if h.v == "" {
		on, err := nemesis.FromEnv()
		if on {
			seed, _ := nemesis.Seed()
			progress.Printf("harness faults on (nemesis seed %d, from %s): a verdict must hold under them", seed, nemesis.Env)
		}
		return err
	}
	seed, err := strconv.ParseInt(h.v, 10, 64)
	if err != nil {
		return fmt.Errorf("--harness-faults %q: want an integer seed", h.v)
	}
	nemesis.Enable(seed)
	progress.Printf("harness faults on (nemesis seed %d): a verdict must hold under them", seed)
	return nil
}
