// Package clilevels reads the runtime CLI level tables harp ships
// (fixtures/cli-levels/<version>.tsv, described in its README): for each
// command, the level the documentation gives it and the one the code
// checks.
package clilevels

import (
	"bufio"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/harp-project/harp/fixtures"
)

// Row is one command of a level table.
type Row struct {
	Command, DocLevel, CodeLevel, Kind, Doc string
}

// Above says whether the command's documented level is above level (a
// socket's: user, operator, admin).
func (r Row) Above(level string) bool { return rank[r.DocLevel] > rank[level] }

var rank = map[string]int{"user": 0, "operator": 1, "admin": 2}

// Table reads the level table of a HAProxy version ("3.2.26-1" uses
// 3.2.*.tsv): the file of the same major.minor.
func Table(version string) (string, []Row, error) {
	mm := regexp.MustCompile(`^(\d+\.\d+)[.-]`).FindStringSubmatch(version) // 3.2.26-1, 3.5-dev5-50872daa6
	if mm == nil {
		return "", nil, fmt.Errorf("version %q has no major.minor", version)
	}
	files, _ := fixtures.CLILevels.ReadDir("cli-levels")
	var have []string
	for _, f := range files {
		name := f.Name()
		have = append(have, strings.TrimSuffix(name, ".tsv"))
		if !strings.HasPrefix(name, mm[1]+".") {
			continue
		}
		raw, err := fixtures.CLILevels.ReadFile("cli-levels/" + name)
		if err != nil {
			return "", nil, err
		}
		rows, err := parse(string(raw))
		return name, rows, err
	}
	return "", nil, fmt.Errorf("no CLI level table for HAProxy %s (tables: %s)", mm[1], strings.Join(have, ", "))
}

// UserRule is the rows a `level user` socket is checked with on a version
// without a level table: every state-changing command of every table.
// configuration.txt's `level user` ("no change can be done") is the same
// in every version, so none of them may change anything there; a command
// the version lacks is refused as unknown, which the rule allows.
func UserRule() ([]Row, error) {
	files, err := fixtures.CLILevels.ReadDir("cli-levels")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []Row
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".tsv") {
			continue
		}
		raw, err := fixtures.CLILevels.ReadFile("cli-levels/" + f.Name())
		if err != nil {
			return nil, err
		}
		rows, err := parse(string(raw))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name(), err)
		}
		for _, r := range rows {
			if r.Kind == "change" && r.Above("user") && !seen[r.Command] {
				seen[r.Command] = true
				r.CodeLevel = "" // another version's code
				out = append(out, r)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Command < out[j].Command })
	return out, nil
}

func parse(raw string) ([]Row, error) {
	var rows []Row
	sc := bufio.NewScanner(strings.NewReader(raw))
	for i := 0; sc.Scan(); i++ {
		f := strings.Split(sc.Text(), "\t")
		if i == 0 || strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		if len(f) != 5 {
			return nil, fmt.Errorf("line %d: %d columns, want 5", i+1, len(f))
		}
		r := Row{f[0], f[1], f[2], f[3], f[4]}
		if _, ok := rank[r.DocLevel]; !ok {
			return nil, fmt.Errorf("line %d: level %q", i+1, r.DocLevel)
		}
		rows = append(rows, r)
	}
	return rows, nil
}
