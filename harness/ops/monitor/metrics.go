package monitor

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/harp-project/harp/harness/ops/doctor"
)

// The metrics of the latest diagnosis. Labels: instance (--name, else the
// socket), section (peers section), peer (the other end of a link: the
// examined instance whose local peer it is, else the name on the peer
// line), table (as show table names it, section/table). No label ever
// holds a table's key: the cardinality is bounded by the configuration.
var (
	instanceL = []string{"instance"}
	linkL     = []string{"instance", "section", "peer"}
	tableL    = []string{"table"}
	itableL   = []string{"instance", "table"}

	mSocketUp  = desc("harp_socket_up", "1 when the instance's runtime socket answered at the last read, 0 when it could not be read at all (the unreachable finding says why).", instanceL)
	mFailedCmd = desc("harp_socket_failed_commands", "Commands the socket refused or failed at the last read (a socket below admin level refuses show peers or table contents).", instanceL)
	mHealthy   = desc("harp_doctor_healthy", "1 when the last diagnosis found no problem, else 0.", nil)
	mDuration  = desc("harp_doctor_read_duration_seconds", "How long the last read of every socket (all at the same time) and its diagnosis took.", nil)
	mLastRead  = desc("harp_doctor_last_read_timestamp_seconds", "When the last read finished, in Unix time.", nil)
	mFinding   = desc("harp_doctor_finding", "1 when the last diagnosis holds a finding with this code, else 0; every code is always present.", []string{"code"})
	mFindings  = desc("harp_doctor_findings", "Findings of the last diagnosis by code and level and what they are about (a label is empty when a finding is not about one instance, peer or table).", []string{"code", "level", "instance", "peer", "table"})

	mSection = desc("harp_peers_section_info", "A peers section an instance runs, with the name of its local peer (empty: none, the identity finding).", []string{"instance", "section", "local_peer"})
	mResync  = desc("harp_peers_resync_finished", "1 when the section's last resync (from the old process and from remote peers) is finished (show peers flags 0x1|0x2), else 0.", []string{"instance", "section"})
	mLink    = desc("harp_peer_link_established", "1 when the instance has an established session with the peer, else 0; each end of a link reports its own view.", linkL)
	mAge     = desc("harp_peer_session_age_seconds", "Time since the last handshake with the peer (show peers last_hdshk): the age of an established session. Absent while none.", linkL)
	mUnknown = desc("harp_peer_link_unknown", "1 when harp could not read the instance's show peers at the last read (socket unreachable, show peers timed out, failed or refused): the link is one the last read that showed them listed, its state now unknown and harp_peer_link_established absent; 0 while read.", linkL)
	mLastUp  = desc("harp_peer_link_last_established", "While harp_peer_link_unknown is 1: the link's state at the last read that showed it (1 established, 0 not), so that a link down stays down until harp reads it again. Absent while the link is read.", linkL)
	mVisible = desc("harp_peers_visible", "1 when the last read showed the instance's peers (show peers answered), 0 when harp could not see them: socket unreachable, show peers timed out, failed or refused (the unreachable or socket-level finding says which).", instanceL)
	mConns   = desc("harp_peer_connections_total", "Sessions the instance opened to the peer since it started (show peers new_conn): reconnects.", linkL)

	mSize    = desc("harp_table_size", "A stick table's size on an instance.", itableL)
	mUsed    = desc("harp_table_used", "Entries a stick table holds on an instance (show table used).", itableL)
	mKeys    = desc("harp_table_keys", "Distinct keys of a replicated table over every instance whose contents were read.", tableL)
	mMissing = desc("harp_table_missing_keys", "Keys of a replicated table that other instances hold and this one lacks.", itableL)
	mDiverge = desc("harp_table_diverging_keys", "Keys of a replicated table that are not on every instance.", tableL)
	mRatio   = desc("harp_table_divergence_ratio", "Share of a replicated table's keys that are not on every instance (0 to 1).", tableL)
	mDiffer  = desc("harp_table_differing_entries", "Keys on every instance whose stored data differ between instances.", tableL)
	mPushed  = desc("harp_peer_table_updates_pushed", "The last update of the table the instance pushed to the peer (show peers last_pushed).", []string{"instance", "peer", "table"})
	mAcked   = desc("harp_peer_table_updates_acked", "The last update of the table the peer acknowledged (the update field of the shared table in show peers).", []string{"instance", "peer", "table"})
	mLag     = desc("harp_peer_table_update_lag", "Updates pushed to the peer and not yet acknowledged (pushed - acked, as 32-bit counters).", []string{"instance", "peer", "table"})
	allDescs = []*prometheus.Desc{mSocketUp, mFailedCmd, mHealthy, mDuration, mLastRead, mFinding, mFindings, mSection, mResync, mLink, mUnknown, mLastUp, mVisible, mAge, mConns, mSize, mUsed, mKeys, mMissing, mDiverge, mRatio, mDiffer, mPushed, mAcked, mLag}
)

func desc(name, help string, labels []string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// collector renders the latest snapshot; before the first read it has
// nothing to say (harp_doctor_reads_total is 0).
type collector struct{ m *Monitor }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := c.m.Last()
	if s == nil {
		return
	}
	e := &emitter{ch: ch, seen: map[string]bool{}}
	snapshotMetrics(e, s)
}

// emitter sends each series once: two instances given the same --name
// would otherwise make the whole scrape fail.
type emitter struct {
	ch   chan<- prometheus.Metric
	seen map[string]bool
}

func (e *emitter) emit(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
	key := d.String() + "\x00" + strings.Join(labels, "\x00")
	if e.seen[key] {
		return
	}
	e.seen[key] = true
	e.ch <- prometheus.MustNewConstMetric(d, t, v, labels...)
}

func (e *emitter) gauge(d *prometheus.Desc, v float64, labels ...string) {
	e.emit(d, prometheus.GaugeValue, v, labels...)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func snapshotMetrics(e *emitter, s *Snapshot) {
	d := s.D
	e.gauge(mHealthy, b2f(d.Healthy))
	e.gauge(mDuration, s.Took.Seconds())
	e.gauge(mLastRead, float64(s.Start.Add(s.Took).UnixMilli())/1000)
	findingMetrics(e, d)
	// The other end of each link, as an instance name when it is examined
	// (now, or when harp last saw its peers).
	peerOf := s.peerOf
	for _, in := range d.Instances {
		e.gauge(mSocketUp, b2f(in.Unreachable == ""), in.Name)
		e.gauge(mVisible, b2f(PeersVisible(in)), in.Name)
		if in.Unreachable != "" {
			continue
		}
		e.gauge(mFailedCmd, float64(len(in.Errors)), in.Name)
		for _, t := range in.Tables {
			e.gauge(mSize, float64(t.Size), in.Name, t.Name)
			e.gauge(mUsed, float64(t.Used), in.Name, t.Name)
		}
		for _, sec := range in.Sections {
			local, ok := sec.Local()
			e.gauge(mSection, 1, in.Name, sec.Name, local.Name)
			e.gauge(mResync, b2f(sec.ResyncFinished()), in.Name, sec.Name)
			if !ok {
				continue // no local peer: no sessions (identity says so)
			}
			for _, p := range sec.Peers {
				if p.Local {
					continue
				}
				peer := cmp.Or(peerOf[[2]string{sec.Name, p.Name}], p.Name)
				e.gauge(mLink, b2f(p.Established()), in.Name, sec.Name, peer)
				e.gauge(mUnknown, 0, in.Name, sec.Name, peer)
				if age, never, ok := p.Delay("last_hdshk"); ok && !never && p.Established() {
					e.gauge(mAge, age.Seconds(), in.Name, sec.Name, peer)
				}
				if _, ok := p.Fields["new_conn"]; ok {
					e.emit(mConns, prometheus.CounterValue, float64(p.Int("new_conn")), in.Name, sec.Name, peer)
				}
				for _, pt := range p.Tables {
					e.gauge(mPushed, float64(pt.LastPushed), in.Name, peer, pt.Name)
					e.gauge(mAcked, float64(pt.PeerAcked), in.Name, peer, pt.Name)
					e.gauge(mLag, float64(uint32(pt.LastPushed)-uint32(pt.PeerAcked)), in.Name, peer, pt.Name)
				}
			}
		}
	}
	// Harp losing sight of an instance never makes its links vanish.
	for _, l := range s.Unknown {
		e.gauge(mUnknown, 1, l.Instance, l.Section, l.Peer)
		e.gauge(mLastUp, b2f(l.Established), l.Instance, l.Section, l.Peer)
	}
	tableMetrics(e, d)
}

// findingMetrics: every code, 0 or 1, and the findings by subject.
func findingMetrics(e *emitter, d doctor.Diagnosis) {
	type subject struct{ code, level, instance, peer, table string }
	n := map[subject]int{}
	var order []subject
	for _, f := range d.Findings {
		k := subject{string(f.Code), f.Level, f.Instance, f.Peer, f.Table}
		if n[k] == 0 {
			order = append(order, k)
		}
		n[k]++
	}
	for _, code := range doctor.Codes {
		e.gauge(mFinding, b2f(d.Has(code)), string(code))
	}
	for _, k := range order {
		e.gauge(mFindings, float64(n[k]), k.code, k.level, k.instance, k.peer, k.table)
	}
}

// tableMetrics compares only replicated tables: a table of each
// instance's own differs by design.
func tableMetrics(e *emitter, d doctor.Diagnosis) {
	read := map[string]doctor.Instance{}
	for _, in := range d.Instances {
		read[in.Name] = in
	}
	for _, t := range d.Tables {
		if !t.Replicated {
			continue
		}
		e.gauge(mKeys, float64(t.Keys), t.Name)
		e.gauge(mDiverge, float64(t.Diverging), t.Name)
		e.gauge(mRatio, t.Percent/100, t.Name)
		e.gauge(mDiffer, float64(t.ValueDiffs), t.Name)
		for _, inst := range slices.Sorted(maps.Keys(t.Definitions)) {
			if _, hidden := read[inst].Errors["show table "+t.Name]; !hidden {
				e.gauge(mMissing, float64(t.Missing[inst]), inst, t.Name)
			}
		}
	}
}
