package node

import (
	"context"
	"net/http"
	"time"

	"github.com/harp-project/harp/harness/live/nemesis"
)

// Get sends one GET for path to the node's port, bounded by timeout: the
// response with its body closed unread (its status and headers).
func (n *Node) Get(ctx context.Context, port, path string, timeout time.Duration) (*http.Response, error) {
	addr, err := n.Addr(ctx, port)
	if err != nil {
		return nil, err
	}
	if err := nemesis.HTTP(addr + path); err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return resp, nil
}
