package listenerfixes

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/live/fixrun"
	"github.com/harp-project/harp/harness/live/node"
)

// The single-shard case's traffic: enough connections for a count that
// drifts by one now and then to reach a maxconn of 4.
const (
	groupRequests = 400
	groupParallel = 20
	groupLater    = 10
	groupWait     = 5 * time.Second
)

// singleShardGroups sends groupRequests requests on fresh connections,
// groupParallel at a time, then groupLater one after another, and says how
// many of each were answered.
func singleShardGroups(ctx context.Context, n *node.Node) (string, error) {
	addr, err := n.Addr(ctx, fixrun.Port("fe"))
	if err != nil {
		return "", err
	}
	if !answered(ctx, addr) {
		return "", fmt.Errorf("the first request on %s was not answered: the frontend never served", addr)
	}
	var mu sync.Mutex
	first := 0
	sem := make(chan struct{}, groupParallel)
	var wg sync.WaitGroup
	for range groupRequests {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if answered(ctx, addr) {
				mu.Lock()
				first++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	later := 0
	for range groupLater {
		if answered(ctx, addr) {
			later++
		}
	}
	// A worker too starved to answer is the machine's doing, not a
	// listener that stopped accepting: its stats socket must answer fast.
	t0 := time.Now()
	if _, err := n.Stats(ctx, "show info"); err != nil {
		return "", fmt.Errorf("show info after the requests: %w", err)
	}
	return fmt.Sprintf("answered: %d of %d requests %d at a time, then %d of %d one after another; show info answered in %s", first, groupRequests, groupParallel, later, groupLater, time.Since(t0).Round(time.Millisecond)), nil
}

// answered sends one HTTP/1.0 request on a fresh connection and says
// whether a 200 came back within groupWait.
func answered(ctx context.Context, addr string) bool {
	d := net.Dialer{Timeout: groupWait}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(groupWait))
	if _, err := c.Write([]byte("GET / HTTP/1.0\r\n\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.Contains(line, " 200 ")
}
