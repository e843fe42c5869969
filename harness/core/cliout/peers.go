package cliout

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Peers section flags whose meaning is the same from 2.6 to 3.4: learning
// from the local peer (the old process) and from remote peers is finished
// or no longer needed.
const (
	PeersResyncLocalFinished  = 0x1
	PeersResyncRemoteFinished = 0x2
)

// PeersSection is one peers section of `show peers`.
type PeersSection struct {
	Name          string            `json:"name"`
	Disabled      bool              `json:"disabled"`
	Flags         uint64            `json:"flags"`
	ResyncTimeout string            `json:"resync_timeout"`
	Peers         []Peer            `json:"peers"`
	Fields        map[string]string `json:"fields"`
	Raw           string            `json:"-"`
}

// ResyncFinished says whether the initial resync (from the local peer and
// from remote peers) is finished: both resync flags are set.
func (s PeersSection) ResyncFinished() bool {
	const both = PeersResyncLocalFinished | PeersResyncRemoteFinished
	return s.Flags&both == both
}

// AllResynced says whether every section showed its resync finished (false
// for none).
func AllResynced(secs []PeersSection) bool {
	for _, s := range secs {
		if !s.ResyncFinished() {
			return false
		}
	}
	return len(secs) > 0
}

// Local returns the local peer of the section.
func (s PeersSection) Local() (Peer, bool) {
	for _, p := range s.Peers {
		if p.Local {
			return p, true
		}
	}
	return Peer{}, false
}

// Peer returns a peer by name.
func (s PeersSection) Peer(name string) (Peer, bool) {
	for _, p := range s.Peers {
		if p.Name == name {
			return p, true
		}
	}
	return Peer{}, false
}

// Peer is one peer of a section.
type Peer struct {
	Name       string   `json:"name"`
	Local      bool     `json:"local"`
	Inactive   bool     `json:"inactive"`
	Qualifiers []string `json:"qualifiers"` // from id=name(local,inactive)
	Addr       string   `json:"addr"`
	LastStatus string   `json:"last_status"` // NONE, ESTA, CONN, ...
	LastHdshk  string   `json:"last_hdshk"`  // <NEVER> or an age
	Flags      uint64   `json:"flags"`
	// Session says an applet serves the peer now ("appctx:0x..." on its
	// flags line): a session being set up or established.
	Session bool              `json:"session"`
	Tables  []PeerTable       `json:"tables"`
	Fields  map[string]string `json:"fields"` // every key=value on the peer's lines
	Raw     string            `json:"-"`
}

// Established says the peer has a session that finished its handshake
// (last_status ESTA) and still runs (an applet serves it): the evidence
// that holds from 2.6 to 3.4.
func (p Peer) Established() bool { return p.Session && p.LastStatus == "ESTA" }

// Delay reads a timer field such as reconnect= or heartbeat= ("4s",
// "1m2s", "<PAST>", "<NEVER>"): ok is false when absent or unreadable;
// never is true for <NEVER>.
func (p Peer) Delay(key string) (d time.Duration, never, ok bool) {
	v := p.Fields[key]
	switch v {
	case "":
		return 0, false, false
	case "<NEVER>":
		return 0, true, true
	case "<PAST>":
		return 0, false, true
	}
	days := time.Duration(0)
	if i := strings.Index(v, "d"); i > 0 {
		n, err := strconv.Atoi(v[:i])
		if err != nil {
			return 0, false, false
		}
		days, v = time.Duration(n)*24*time.Hour, v[i+1:]
		if v == "" {
			return days, false, true
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, false, false
	}
	return days + d, false, true
}

// Int reads a numeric field (0 when absent).
func (p Peer) Int(key string) int64 {
	n, _ := strconv.ParseInt(p.Fields[key], 0, 64)
	return n
}

// PeerTable is one shared table under a peer.
type PeerTable struct {
	Name        string `json:"name"` // section/table
	Update      uint64 `json:"update"`
	LocalUpdate uint64 `json:"localupdate"`
	// From the shared-table line above the table line: what was pushed to
	// the peer, and what the peer acknowledged (its ack messages).
	LastPushed uint64            `json:"last_pushed"`
	PeerAcked  uint64            `json:"peer_acked"`
	LastGet    uint64            `json:"last_get"`
	Fields     map[string]string `json:"fields"`
}

var (
	sectionRe = regexp.MustCompile(`^0x[0-9a-f]+: \[[^\]]*\] id=(\S+)`)
	peerRe    = regexp.MustCompile(`^0x[0-9a-f]+: id=([^\s(]+)(?:\(([^)]*)\))?`)
	kvRe      = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.]*(?:\(\d+\))?)=(\S+)`)
)

// ParsePeers reads `show peers` (2.6 to 3.4).
func ParsePeers(out string) ([]PeersSection, error) {
	var secs []PeersSection
	var sec *PeersSection
	var peer *Peer
	var table *PeerTable
	var shared map[string]string
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if m := sectionRe.FindStringSubmatch(t); m != nil && !strings.HasPrefix(line, " ") {
			secs = append(secs, PeersSection{Name: m[1], Fields: kv(t)})
			sec, peer, table = &secs[len(secs)-1], nil, nil
			sec.Disabled = sec.Fields["disabled"] != "" && sec.Fields["disabled"] != "0"
			sec.Flags, _ = strconv.ParseUint(sec.Fields["flags"], 0, 64)
			sec.ResyncTimeout = sec.Fields["resync_timeout"]
			sec.Raw = line + "\n"
			continue
		}
		if sec == nil {
			if strings.HasPrefix(t, "Unknown command") || strings.Contains(t, "permission") {
				return nil, fmt.Errorf("show peers: %s", t)
			}
			continue
		}
		sec.Raw += line + "\n"
		if m := peerRe.FindStringSubmatch(t); m != nil {
			sec.Peers = append(sec.Peers, Peer{Name: m[1], Fields: map[string]string{}})
			peer, table = &sec.Peers[len(sec.Peers)-1], nil
			if m[2] != "" {
				peer.Qualifiers = strings.Split(m[2], ",")
			}
			for _, q := range peer.Qualifiers {
				peer.Local = peer.Local || q == "local"
				peer.Inactive = peer.Inactive || q == "inactive"
			}
		}
		if peer == nil {
			continue
		}
		peer.Raw += line + "\n"
		if table == nil && strings.Contains(t, "appctx:0x") {
			peer.Session = true
		}
		if strings.Contains(t, "last_acked=") {
			shared = kv(t) // "last_acked=0 last_pushed=1 last_get=0 teaching_origin=0 update=1"
			continue
		}
		if strings.HasPrefix(t, "table:") {
			f := kv(t)
			peer.Tables = append(peer.Tables, PeerTable{Name: f["id"], Fields: f})
			table = &peer.Tables[len(peer.Tables)-1]
			table.Update, _ = strconv.ParseUint(f["update"], 10, 64)
			table.LocalUpdate, _ = strconv.ParseUint(f["localupdate"], 10, 64)
			table.LastPushed, _ = strconv.ParseUint(shared["last_pushed"], 10, 64)
			table.PeerAcked, _ = strconv.ParseUint(shared["update"], 10, 64)
			table.LastGet, _ = strconv.ParseUint(shared["last_get"], 10, 64)
			shared = nil
			continue
		}
		if table != nil || strings.HasPrefix(t, "shared tables") || strings.Contains(t, "local_id=") {
			continue // per-table detail lines, not the peer's own fields
		}
		for k, v := range kv(t) {
			if _, dup := peer.Fields[k]; !dup {
				peer.Fields[k] = v
			}
		}
	}
	for i := range secs {
		for j := range secs[i].Peers {
			p := &secs[i].Peers[j]
			p.Addr = p.Fields["addr"]
			p.LastStatus = p.Fields["last_status"]
			p.LastHdshk = p.Fields["last_hdshk"]
			p.Flags, _ = strconv.ParseUint(p.Fields["flags"], 0, 64)
		}
	}
	return secs, nil
}

// FindSection returns the named section.
func FindSection(secs []PeersSection, name string) (PeersSection, bool) {
	for _, s := range secs {
		if s.Name == name {
			return s, true
		}
	}
	return PeersSection{}, false
}

func kv(line string) map[string]string {
	m := map[string]string{}
	for _, x := range kvRe.FindAllStringSubmatch(line, -1) {
		m[x[1]] = x[2]
	}
	return m
}
