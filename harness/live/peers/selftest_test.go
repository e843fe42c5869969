//go:build selftest

// selftest: together

package peers_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/config"
	"github.com/harp-project/harp/harness/core/peerwire"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peers"
	"github.com/harp-project/harp/harness/ops/selftest"
)

// harp's peers client against real HAProxy builds: handshake, heartbeats
// kept for 10 s, and an update made with `set table` seen by the client.
var _ = Describe("the peers protocol client", Label("area:peers", "peers-client"), func() {
	for _, build := range []string{"deb:bookworm", "deb:experimental"} {
		Context("against "+build, Ordered, func() {
			var n *node.Node
			var addr string
			BeforeAll(func(ctx context.Context) {
				cfg, err := config.Render("peer.cfg.tmpl", map[string]any{"Threads": 1, "LocalPeer": "local", "Section": "sync",
					"PeerPort": 10000, "Remote": "remote", "DeadPort": 10999, "Table": "marker", "Store": "gpc0,conn_cnt,http_req_rate(10s)"})
				Expect(err).NotTo(HaveOccurred())
				n, err = node.Start(ctx, selftest.Docker, node.Options{Image: selftest.Image(ctx, build), Config: cfg, RunID: selftest.RunID, Name: "peer-client", Ports: []string{"10000/tcp"}})
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(func() { n.Stop(context.Background()) })
				addr, err = n.Addr(ctx, "10000/tcp")
				Expect(err).NotTo(HaveOccurred())
			})

			It("is refused with the status codes of the protocol for wrong names", func(ctx context.Context) {
				_, status, err := peers.Dial(ctx, addr, peers.Hello{Remote: "nobody", Local: "remote", PID: 4242}, peers.DefaultOptions)
				Expect(err).NotTo(HaveOccurred())
				Expect(status).To(Equal(peers.StatusLocalMismatch))
				_, status, err = peers.Dial(ctx, addr, peers.Hello{Remote: "local", Local: "stranger", PID: 4242}, peers.DefaultOptions)
				Expect(err).NotTo(HaveOccurred())
				Expect(status).To(Equal(peers.StatusRemoteMismatch))
			})

			It("completes the handshake, keeps heartbeats for 10 s and sees a `set table` update", func(ctx context.Context) {
				c, status, err := peers.Dial(ctx, addr, peers.Hello{Remote: "local", Local: "remote", PID: 4242}, peers.DefaultOptions)
				Expect(err).NotTo(HaveOccurred())
				Expect(status).To(Equal(peers.StatusSuccess))
				defer c.Close()

				// 10 s of heartbeats: HAProxy must not close the session.
				Consistently(c.Closed()).WithTimeout(10 * time.Second).ShouldNot(BeClosed())
				pid, err := n.CurrentWorker(ctx)
				Expect(err).NotTo(HaveOccurred())
				raw, err := n.Worker(ctx, pid, "show peers")
				Expect(err).NotTo(HaveOccurred())
				secs, err := cliout.ParsePeers(raw)
				Expect(err).NotTo(HaveOccurred())
				sec, ok := cliout.FindSection(secs, "sync")
				Expect(ok).To(BeTrue())
				remote, ok := sec.Peer("remote")
				Expect(ok).To(BeTrue())
				Expect(remote.LastStatus).To(Equal("ESTA"), remote.Raw)
				Expect(c.Events()).To(ContainElement(HaveField("Msg", peerwire.Control(peerwire.CtrlHeartbeat))), "HAProxy sent heartbeats too")

				out, err := n.Worker(ctx, pid, "set table sync/marker key 192.0.2.7 data.gpc0 5 data.conn_cnt 3")
				Expect(err).NotTo(HaveOccurred())
				Expect(strings.TrimSpace(out)).To(BeEmpty())
				wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				ev, err := c.WaitFor(wctx, func(e peers.Event) bool { return e.Update != nil })
				Expect(err).NotTo(HaveOccurred(), "events: %v", c.Events())
				Expect(ev.Table.Name).To(HaveSuffix("marker"))
				Expect(ev.Table.KeyType).To(Equal(peerwire.KeyIPv4))
				Expect(ev.Update.KeyString(*ev.Table)).To(Equal("192.0.2.7"))
				// harp's encoder gives back HAProxy's own bytes: the definition
				// and the update re-encode to exactly what HAProxy sent.
				var defMsg peerwire.Message
				for _, e := range c.Events() {
					if e.Msg.Type == peerwire.StktDefine {
						defMsg = e.Msg
					}
				}
				Expect(ev.Table.Encode()).To(Equal(defMsg), "table definition")
				again, err := ev.Update.Encode(*ev.Table)
				Expect(err).NotTo(HaveOccurred())
				Expect(again).To(Equal(ev.Msg), "update")
				for name, want := range map[string]uint64{"gpc0": 5, "conn_cnt": 3} {
					v, ok := ev.Update.Int(name)
					Expect(ok).To(BeTrue(), name)
					Expect(v).To(Equal(want), name)
				}
				// Our ack reached HAProxy: the remote peer's shared table shows
				// the update acknowledged.
				Eventually(func() uint64 {
					raw, _ := n.Worker(ctx, pid, "show peers")
					secs, _ := cliout.ParsePeers(raw)
					sec, _ := cliout.FindSection(secs, "sync")
					remote, _ := sec.Peer("remote")
					if len(remote.Tables) != 1 {
						return 0
					}
					return remote.Tables[0].PeerAcked
				}).WithTimeout(5 * time.Second).Should(Equal(uint64(ev.Update.ID)))
			})

			It("is dropped by HAProxy after a malformed message", func(ctx context.Context) {
				c, status, err := peers.Dial(ctx, addr, peers.Hello{Remote: "local", Local: "remote", PID: 4242}, peers.DefaultOptions)
				Expect(err).NotTo(HaveOccurred())
				Expect(status).To(Equal(peers.StatusSuccess))
				defer c.Close()
				// The reserved class is a protocol error: HAProxy says so and closes.
				Expect(c.SendRaw([]byte{peerwire.ClassReserved, 0})).To(Succeed())
				Eventually(c.Closed()).WithTimeout(5 * time.Second).Should(BeClosed())
				Expect(c.Events()).To(ContainElement(HaveField("Msg", peerwire.Message{Class: peerwire.ClassError, Type: peerwire.ErrProtocol})))
			})
		})
	}
})
