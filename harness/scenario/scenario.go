// Package scenario is the registry of suites: each suite is a plain value
// (name, upstream issue, labels, shape, run function), one per upstream
// issue, selected by ginkgo label filters.
package scenario

import (
	"context"
	"fmt"
	"sort"

	"github.com/moby/moby/client"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/images"
)

// Scenario is one suite.
type Scenario struct {
	ID       string   // stable id, e.g. "3517"
	Upstream string   // upstream issue reference
	Title    string   // upstream issue title
	Owner    string   // who to ask about it
	Labels   []string // ginkgo labels: issue:3517, area:peers, slow
	Trials   int      // default number of trials
	Noun     string   // what a trial is called in verdicts: "reloads"
	// Steps describe setup, trigger and expectation, for reports.
	Steps []string
	Run   func(ctx context.Context, env *Env) verdict.Outcome
}

// Env is what a run function gets.
type Env struct {
	Image *images.Image
	// Docker and Builder serve suites that need more than HAProxy nodes
	// (a backend container, a network).
	Docker  *client.Client
	Builder *images.Builder
	// Start starts a node of Image: a container, or for baselines a local
	// process. Suites start every node through it.
	Start  func(ctx context.Context, o node.Options) (*node.Node, error)
	RunID  string
	Trials int
	// Config is set by the run function to the config it rendered.
	Config string
	// Logf prints progress.
	Logf func(format string, args ...any)
}

var registry = map[string]*Scenario{}

// Register adds a suite; ids must be unique.
func Register(s *Scenario) *Scenario {
	if _, dup := registry[s.ID]; dup {
		panic("scenario: duplicate id " + s.ID)
	}
	registry[s.ID] = s
	return s
}

// All lists the registered suites by id.
func All() []*Scenario {
	var out []*Scenario
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Select returns the suites whose labels match a ginkgo label filter
// (e.g. "issue:3517", "area:peers && !slow").
func Select(filter string) ([]*Scenario, error) {
	match, err := types.ParseLabelFilter(filter)
	if err != nil {
		return nil, fmt.Errorf("label filter %q: %w", filter, err)
	}
	var out []*Scenario
	for _, s := range All() {
		if match(s.Labels) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		var known []string
		for _, s := range All() {
			known = append(known, s.Labels...)
		}
		return nil, fmt.Errorf("label filter %q selects no suite; labels in use: %v", filter, known)
	}
	return out, nil
}
