package node

import (
	"context"
	"time"

	"github.com/harp-project/harp/harness/cli"
)

// HalfClosed connects to one of the node's ports, sends nothing and
// half-closes: whether the node closed its side within wait (a
// connection still open then, or reset, is not closed). err is the
// dial's.
func (n *Node) HalfClosed(ctx context.Context, port string, wait time.Duration) (closed bool, err error) {
	conn, err := n.Dial(ctx, port)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	conn.CloseWrite()
	_, err = cli.ReadToClose(conn, wait)
	return err == nil, nil
}

// Poke connects to one of the node's ports, sends payload and waits at
// most wait for whatever comes first (one read), then closes: a
// connection that runs the frontend's connection rules, whose answer
// says nothing (the worker answering afterwards does). err is the dial's.
func (n *Node) Poke(ctx context.Context, port, payload string, wait time.Duration) error {
	conn, err := n.Dial(ctx, port)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.Write([]byte(payload))
	conn.SetReadDeadline(time.Now().Add(wait))
	conn.Read(make([]byte, 16)) // whatever comes, or the deadline
	return nil
}
