package node

import (
	"context"
	"time"

	"github.com/harp-project/harp/harness/live/cli"
)

// HalfClosed connects to one of the node's ports on its own address (no
// proxy between), sends nothing and half-closes: the connection's fate
// within wait (closed by the node, still open, or reset: a reset is not
// a close, nor a connection left open). err is the dial's, or open's:
// called with harp's side of the connection (HAProxy's src) while a
// connection still open at wait is open, so HAProxy's state of it can be
// read before harp closes it.
func (n *Node) HalfClosed(ctx context.Context, port string, wait time.Duration, open func(src string) error) (cli.Fate, error) {
	addr, err := n.DirectAddr(ctx, port)
	if err != nil {
		return "", err
	}
	conn, err := cli.Dial(ctx, addr, port)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	conn.CloseWrite()
	_, err = cli.ReadToClose(conn, wait)
	fate := cli.FateOf(err)
	if fate == cli.Open && open != nil {
		return fate, open(conn.LocalAddr().String())
	}
	return fate, nil
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
