package cliout

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Pool is one line of `show pools`: a memory pool (pools of one size may
// be merged and show under one of their names).
type Pool struct {
	Name      string `json:"name"`
	Size      int    `json:"size"`
	Allocated int    `json:"allocated"`
	Used      int    `json:"used"`
}

// From 2.6 to 3.4 a pool line reads, with words added after "used" over
// the versions:
//
//   - Pool trash (16416 bytes) : 2 allocated (32832 bytes), 1 used, needed_avg 1, ...
//   - Pool trash (16408 bytes/16416) : 2 allocated (32832 bytes), 1 used (~0 by thread caches), ...
var poolRe = regexp.MustCompile(`^\s*- Pool (\S+) \((\d+) bytes[^)]*\)\s*:\s*(\d+) allocated \(\d+ bytes\), (\d+) used`)

// ParsePools reads `show pools`. An answer without a pool line is no
// answer of that command.
func ParsePools(out string) ([]Pool, error) {
	var ps []Pool
	for _, line := range strings.Split(out, "\n") {
		m := poolRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		p := Pool{Name: m[1]}
		p.Size, _ = strconv.Atoi(m[2])
		p.Allocated, _ = strconv.Atoi(m[3])
		p.Used, _ = strconv.Atoi(m[4])
		ps = append(ps, p)
	}
	if ps == nil {
		return nil, fmt.Errorf("not a `show pools` answer: %q", firstLine(out))
	}
	return ps, nil
}

// FindPool returns the pool of that name.
func FindPool(ps []Pool, name string) (Pool, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p, true
		}
	}
	return Pool{}, false
}
