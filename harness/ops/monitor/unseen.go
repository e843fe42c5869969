package monitor

import (
	"cmp"
	"time"

	"github.com/harp-project/harp/harness/ops/doctor"
)

// harp losing sight of a node must never silence an alert (#40): when an
// instance's show peers cannot be read (its socket unreachable, the
// command timed out, failed or was refused), its links do not vanish from
// /metrics. Each link the last read that showed them saw is served as
// unknown (harp_peer_link_unknown 1) with its state then
// (harp_peer_link_last_established), so that HarpPeerLinkDown keeps
// firing for a link that was down, and the instance as not visible
// (harp_peers_visible 0: HarpCannotSeeNode). What harp remembers lives as
// long as the process: a harp started while an instance cannot be read
// knows none of its links (HarpCannotSeeNode still fires).

// KnownLink is one link as the last read that showed its instance's
// peers saw it.
type KnownLink struct {
	Instance, Section string
	// Peer labels the other end as it was served then: the examined
	// instance whose local peer it is, else the name on the peer line.
	Peer        string
	Established bool
	// Seen is when that read began.
	Seen time.Time
}

// PeersVisible says whether a read showed the instance's peers: its
// socket answered and show peers was read (an empty answer is no
// section, which is an answer).
func PeersVisible(in doctor.Instance) bool {
	_, failed := in.Errors["show peers"]
	return in.Unreachable == "" && !failed
}

// memory is what harp last read of each instance's peers.
type memory struct {
	links map[string][]KnownLink // instance -> its links at the last read that showed them
	local map[string][][2]string // instance -> its (section, local peer name) then
}

// update learns what d shows and gives the links of the instances it
// does not show, as last seen, and the other end of each link by section
// and peer name: an instance of this read, else one remembered (a peer's
// label would otherwise turn from the instance's name into the peer
// line's name while that instance cannot be read, and its alert resolve).
func (m *memory) update(d doctor.Diagnosis, start time.Time) (unknown []KnownLink, peerOf map[[2]string]string) {
	if m.links == nil {
		m.links, m.local = map[string][]KnownLink{}, map[string][][2]string{}
	}
	peerOf = map[[2]string]string{}
	for _, in := range d.Instances { // as the doctor does: the last instance wins
		if !PeersVisible(in) {
			continue
		}
		var local [][2]string
		for _, sec := range in.Sections {
			if l, ok := sec.Local(); ok {
				local = append(local, [2]string{sec.Name, l.Name})
				peerOf[[2]string{sec.Name, l.Name}] = in.Name
			}
		}
		m.local[in.Name] = local
	}
	for _, in := range d.Instances {
		if PeersVisible(in) {
			continue
		}
		for _, k := range m.local[in.Name] {
			if _, ok := peerOf[k]; !ok {
				peerOf[k] = in.Name
			}
		}
	}
	for _, in := range d.Instances {
		if !PeersVisible(in) {
			unknown = append(unknown, m.links[in.Name]...)
			continue
		}
		var links []KnownLink
		for _, sec := range in.Sections {
			if _, ok := sec.Local(); !ok {
				continue // no local peer: no sessions (identity says so)
			}
			for _, p := range sec.Peers {
				if !p.Local {
					links = append(links, KnownLink{Instance: in.Name, Section: sec.Name, Peer: cmp.Or(peerOf[[2]string{sec.Name, p.Name}], p.Name),
						Established: p.Established(), Seen: start})
				}
			}
		}
		m.links[in.Name] = links
	}
	return unknown, peerOf
}
