package node

import (
	"context"
	"syscall"

	"github.com/harp-project/harp/harness/live/nemesis"
)

// slowed is a container runtime whose Docker calls the nemesis may slow
// (a no-op unless harp runs with --harness-faults).
type slowed struct{ runtime }

func (s slowed) addr(ctx context.Context, port string) (string, error) {
	nemesis.Docker(ctx, "port "+port)
	return s.runtime.addr(ctx, port)
}

func (s slowed) signal(ctx context.Context, sig syscall.Signal) error {
	nemesis.Docker(ctx, "kill -"+sig.String())
	return s.runtime.signal(ctx, sig)
}

func (s slowed) state(ctx context.Context) (bool, int, error) {
	nemesis.Docker(ctx, "inspect")
	return s.runtime.state(ctx)
}

func (s slowed) logs(ctx context.Context) (string, error) {
	nemesis.Docker(ctx, "logs")
	return s.runtime.logs(ctx)
}

func (s slowed) kill(ctx context.Context, pid int, sig syscall.Signal) error {
	nemesis.Docker(ctx, "top")
	return s.runtime.kill(ctx, pid, sig)
}

func (s slowed) restart(ctx context.Context) error {
	nemesis.Docker(ctx, "restart")
	return s.runtime.restart(ctx)
}

func (s slowed) writeFile(ctx context.Context, path string, data []byte) error {
	nemesis.Docker(ctx, "copy "+path)
	return s.runtime.writeFile(ctx, path, data)
}

func (s slowed) exec(ctx context.Context, argv ...string) (int, string, error) {
	nemesis.Docker(ctx, "exec")
	return s.runtime.exec(ctx, argv...)
}

func (s slowed) execEnv(ctx context.Context, env []string, argv ...string) (int, string, error) {
	nemesis.Docker(ctx, "exec")
	return s.runtime.execEnv(ctx, env, argv...)
}
