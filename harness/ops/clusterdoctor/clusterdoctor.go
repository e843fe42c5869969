// Package clusterdoctor runs harp's doctor on a cluster harp started: on
// its members' admin sockets, through the nodes, so the doctor's commands
// are in the trial's transcript. The cluster suites read their cluster's
// health with it; the doctor itself knows nothing of clusters.
package clusterdoctor

import (
	"context"
	"errors"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/ops/doctor"
)

// Diagnose runs the doctor on the members' admin sockets (all of them when
// none is named), through the nodes so its commands are in the transcript.
func Diagnose(ctx context.Context, c *cluster.Cluster, members ...*cluster.Member) (doctor.Diagnosis, error) {
	if len(members) == 0 {
		members = c.Members
	}
	var ins []doctor.Instance
	for _, m := range members {
		in, err := doctor.Collect(ctx, m.Name, m.Name+" admin socket", m.Node.Stats)
		if err != nil {
			return doctor.Diagnosis{}, err
		}
		ins = append(ins, in)
	}
	return doctor.Diagnose(ins), nil
}

// Show is Diagnose, its text shown in the trial under title when
// every node could be read.
func Show(ctx context.Context, c *cluster.Cluster, t *verdict.Trial, title string) (doctor.Diagnosis, error) {
	d, err := Diagnose(ctx, c)
	if err == nil {
		t.Show(title, d.Text())
	}
	return d, err
}

// Until runs the doctor every interval until done holds or timeout
// passed, and gives the last diagnosis either way; a diagnosis that fails
// ends the wait with its error.
func Until(ctx context.Context, c *cluster.Cluster, timeout, every time.Duration, done func(doctor.Diagnosis) bool) (doctor.Diagnosis, error) {
	var last doctor.Diagnosis
	err := node.Poll(ctx, timeout, every, func() (bool, error) {
		d, err := Diagnose(ctx, c)
		last = d
		return err == nil && done(d), err
	})
	if err != nil && !errors.Is(err, node.ErrDeadline) {
		return last, err
	}
	return last, nil
}
