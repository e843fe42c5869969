package capture

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/ops/clusterdoctor"
	"github.com/harp-project/harp/harness/ops/doctor"
	"github.com/harp-project/harp/images"
)

// Situations are the situations `harp capture` records from real
// clusters, for the doctor's tests: what each node's runtime socket says.
var Situations = []string{"healthy", "identity", "partition", "tables", "user-socket"}

// File names the file a command's answer is kept in.
func File(cmd string) string {
	b := []byte(cmd)
	for i, c := range b {
		if c == ' ' || c == '/' {
			b[i] = '_'
		}
	}
	return string(b) + ".txt"
}

// Clusters makes each situation on a 3-node cluster of img and
// records every node's answers to the doctor's commands under
// dir/cluster/<situation>/<node>/.
func Clusters(ctx context.Context, docker *client.Client, img *images.Image, runID, dir string) error {
	for _, sit := range Situations {
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
		o.Image, o.RunID = img, runID
		c, err := startCluster(ctx, docker, o, sit != "identity")
		if err != nil {
			return fmt.Errorf("%s: %w", sit, err)
		}
		err = captureSituation(ctx, c, sit, filepath.Join(dir, "cluster", sit))
		c.Stop(context.WithoutCancel(ctx))
		if err != nil {
			return fmt.Errorf("%s: %w", sit, err)
		}
	}
	return nil
}

func captureSituation(ctx context.Context, c *cluster.Cluster, sit, dir string) error {
	a, b, third := c.Members[0], c.Members[1], c.Members[2]
	ks := cluster.Keys("cap-", 10)
	if sit == "partition" {
		if err := c.Cut(ctx, third); err != nil {
			return err
		}
		defer c.Heal(context.WithoutCancel(ctx), third)
	}
	if err := a.SetKeys(ctx, cluster.DefaultTable, ks, "data.gpc0 1"); err != nil {
		return err
	}
	if sit == "tables" {
		ips := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}
		if err := a.SetKeys(ctx, "cluster/keytype", ips, "data.gpc0 1"); err != nil {
			return err
		}
	}
	cluster.Spread(ctx, []*cluster.Member{a, b}, cluster.DefaultTable, ks, cluster.ConvergeTimeout)
	switch sit {
	case "healthy", "user-socket":
		// Until the doctor, on admin sockets, finds nothing to say.
		node.Poll(ctx, cluster.ConvergeTimeout, 200*time.Millisecond, func() (bool, error) {
			d, err := clusterdoctor.Diagnose(ctx, c)
			return err == nil && d.Healthy, nil
		})
	case "tables":
		cluster.Spread(ctx, c.Members, cluster.DefaultTable, ks, cluster.ConvergeTimeout)
	case "partition":
		// Until HAProxy has noticed the cut (no heartbeat).
		node.Poll(ctx, 20*time.Second, 500*time.Millisecond, func() (bool, error) {
			d, err := clusterdoctor.Diagnose(ctx, c)
			_, down := d.Find(doctor.LinkDown, third.Name, "")
			return err == nil && down, nil
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
			if err := os.WriteFile(filepath.Join(nd, File(cmd)), []byte(raw), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// startCluster starts a cluster and waits for its sockets, and with mesh
// for every link and resync; on failure nothing is left running.
func startCluster(ctx context.Context, docker *client.Client, o cluster.Options, mesh bool) (*cluster.Cluster, error) {
	c, err := cluster.Start(ctx, docker, o)
	if err != nil {
		return nil, err
	}
	err = c.WaitSockets(ctx, 15*time.Second)
	if err == nil && mesh {
		if unmet := c.WaitMesh(ctx, cluster.MeshTimeout); unmet != "" {
			err = fmt.Errorf("%s", unmet)
		}
	}
	if err != nil {
		c.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	return c, nil
}
