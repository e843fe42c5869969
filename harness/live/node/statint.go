package node

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
)

// StatInt is one counter of show stat (col of proxy's row server:
// "FRONTEND", "BACKEND" or a server's name), read within bound. A row or
// column that is missing or empty is an error.
func (n *Node) StatInt(ctx context.Context, pid int, proxy, server, col string, bound time.Duration) (int64, error) {
	cctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	rows, err := n.Stat(cctx, pid)
	if err != nil {
		return 0, err
	}
	r, ok := cliout.FindStat(rows, proxy, server)
	if !ok || r.Fields[col] == "" {
		return 0, fmt.Errorf("show stat has no %s for %s", col, statRowName(proxy, server))
	}
	return r.Int(col), nil
}

// statRowName says a row of show stat: "frontend web", "server be/s1".
func statRowName(proxy, server string) string {
	switch server {
	case "FRONTEND", "BACKEND":
		return strings.ToLower(server) + " " + proxy
	}
	return "server " + proxy + "/" + server
}
