package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/harp-project/harp/harness/core/suite"
)

// paramList is --param NAME=VALUE (repeatable) with --params-from-env.
type paramList struct {
	pairs   []string
	fromEnv *bool
}

func (p *paramList) String() string     { return strings.Join(p.pairs, " ") }
func (p *paramList) Set(v string) error { p.pairs = append(p.pairs, v); return nil }

func paramFlags(fs *flag.FlagSet) *paramList {
	p := &paramList{}
	fs.Var(p, "param", "suite parameter NAME=VALUE (repeatable; `harp suites` lists them)")
	p.fromEnv = fs.Bool("params-from-env", false, "also read the selected suites' parameters from environment variables of the same names (as make passes NODES=5)")
	return p
}

// values are the parameters given, checked against the selected suites
// before any work: a name none of them takes, or a value one refuses, is
// an error.
func (p *paramList) values(suites []*suite.Suite) (map[string]string, error) {
	given, err := suite.ParseParams(p.pairs)
	if err != nil {
		return nil, err
	}
	if *p.fromEnv {
		for k, v := range suite.FromEnv(suites, os.LookupEnv) {
			if _, set := given[k]; !set {
				given[k] = v
			}
		}
	}
	return given, suite.CheckParams(suites, given)
}

// cmdSuites lists the registered suites, or writes README's table.
func cmdSuites(args []string) int {
	fs := flag.NewFlagSet("suites", flag.ContinueOnError)
	markdown := fs.Bool("markdown", false, "print README's suites table")
	readme := fs.String("readme", "", "rewrite the suites table of this README file")
	if !flags(fs, args) {
		return 3
	}
	all := suite.All()
	switch {
	case *readme != "":
		b, err := os.ReadFile(*readme)
		if err != nil {
			return fail("%v", err)
		}
		out, err := suite.WithTable(string(b), all)
		if err != nil {
			return fail("%s: %v", *readme, err)
		}
		if err := os.WriteFile(*readme, []byte(out), 0o644); err != nil {
			return fail("%v", err)
		}
	case *markdown:
		fmt.Print(suite.Markdown(all))
	default:
		suite.Describe(os.Stdout, all)
	}
	return 0
}
