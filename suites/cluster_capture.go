package suites

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/cluster"
	"github.com/harp-project/harp/harness/doctor"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/images"
)

// ClusterSituations are the situations `harp capture` records from real
// clusters, for the doctor's tests: what each node's runtime socket says.
var ClusterSituations = []string{"healthy", "identity", "partition", "tables", "user-socket"}

// CaptureFile names the file a command's answer is kept in.
func CaptureFile(cmd string) string {
	b := []byte(cmd)
	for i, c := range b {
		if c == ' ' || c == '/' {
			b[i] = '_'
		}
	}
	return string(b) + ".txt"
}

// CaptureCluster makes each situation on a 3-node cluster of img and
// records every node's answers to the doctor's commands under
// dir/cluster/<situation>/<node>/.
func CaptureCluster(ctx context.Context, docker *client.Client, img *images.Image, runID, dir string) error {
	env := &scenario.Env{Image: img, Docker: docker, RunID: runID, Logf: func(string, ...any) {}}
	for _, sit := range ClusterSituations {
		o := cluster.Options{}
		switch sit {
		case "identity":
			o.Nodes = cluster.Nodes(3)
			o.Nodes[2].As = "ghost"
		case "tables":
			same := cluster.DefaultTables[0]
			o.Tables = []cluster.Table{same, {Name: "keytype", Type: "string len 32", Store: "gpc0"}}
			o.Nodes = cluster.Nodes(3)
			o.Nodes[2].Tables = []cluster.Table{same, {Name: "keytype", Type: "ip", Store: "gpc0"}}
		}
		c, out, ok := startCluster(ctx, env, o, sit != "identity")
		if !ok {
			if out.Err != nil {
				return fmt.Errorf("%s: %w", sit, out.Err)
			}
			return fmt.Errorf("%s: %s", sit, out.Unmet)
		}
		err := captureSituation(ctx, c, sit, filepath.Join(dir, "cluster", sit))
		c.Stop(context.WithoutCancel(ctx))
		if err != nil {
			return fmt.Errorf("%s: %w", sit, err)
		}
	}
	return nil
}

func captureSituation(ctx context.Context, c *cluster.Cluster, sit, dir string) error {
	a, b, third := c.Members[0], c.Members[1], c.Members[2]
	ks := keys("cap-", 10)
	if sit == "partition" {
		if err := c.Cut(ctx, third); err != nil {
			return err
		}
		defer c.Heal(context.WithoutCancel(ctx), third)
	}
	if err := setKeys(ctx, a, clusterTable, ks, "data.gpc0 1"); err != nil {
		return err
	}
	if sit == "tables" {
		ips := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}
		if err := setKeys(ctx, a, "cluster/keytype", ips, "data.gpc0 1"); err != nil {
			return err
		}
	}
	spread(ctx, []*cluster.Member{a, b}, clusterTable, ks, convergeTimeout)
	switch sit {
	case "healthy", "user-socket":
		// Until the doctor, on admin sockets, finds nothing to say.
		node.Poll(ctx, convergeTimeout, 200*time.Millisecond, func() (bool, error) {
			d, err := diagnose(ctx, c)
			return err == nil && d.Healthy, nil
		})
	case "tables":
		spread(ctx, c.Members, clusterTable, ks, convergeTimeout)
	case "partition":
		// Until HAProxy has noticed the cut (no heartbeat).
		node.Poll(ctx, partitionSeen, 500*time.Millisecond, func() (bool, error) {
			d, err := diagnose(ctx, c)
			return err == nil && linkDownTo(d, third.Name), nil
		})
	}
	for _, m := range c.Members {
		q := doctor.Query(m.Node.Stats)
		if sit == "user-socket" && m == third {
			addr, err := m.Node.Addr(ctx, cluster.UserSocket)
			if err != nil {
				return err
			}
			q = doctor.Dial(addr)
		}
		in, err := doctor.Collect(ctx, m.Name, m.Name, q)
		if err != nil {
			return err
		}
		nd := filepath.Join(dir, m.Name)
		if err := os.MkdirAll(nd, 0o755); err != nil {
			return err
		}
		for cmd, raw := range in.Raw {
			if err := os.WriteFile(filepath.Join(nd, CaptureFile(cmd)), []byte(raw), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
