package doctor

import (
	"fmt"
	"sort"
	"strings"

	"github.com/harp-project/harp/harness/cliout"
)

// Levels of a finding.
const (
	Problem = "problem"
	Warning = "warning"
	OK      = "ok"
)

// Finding is one thing the doctor concluded, with what it rests on.
type Finding struct {
	Level    string   `json:"level"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Evidence []string `json:"evidence,omitempty"`
}

// Link is one remote peer as one instance sees it.
type Link struct {
	Section     string `json:"section"`
	From        string `json:"from"`         // instance name
	Peer        string `json:"peer"`         // remote peer name
	To          string `json:"to,omitempty"` // the instance whose local peer that is, when examined
	Established bool   `json:"established"`
	Status      string `json:"last_status"`
	Handshake   string `json:"last_hdshk"`
	Addr        string `json:"addr"`
	Line        string `json:"evidence"`
}

// TableView compares one table across instances.
type TableView struct {
	Name        string            `json:"name"`
	Definitions map[string]string `json:"definitions"` // instance -> "type string size 10240"
	Used        map[string]int    `json:"used"`
	Keys        int               `json:"keys"`           // distinct keys over every instance
	Missing     map[string]int    `json:"missing"`        // instance -> keys others have and it lacks
	Diverging   int               `json:"diverging_keys"` // keys not on every instance
	ValueDiffs  int               `json:"value_diffs"`    // keys on every instance whose data differ
	Percent     float64           `json:"divergence_pct"`
	// Updates: instance -> remote peer -> the table's update counters.
	Updates map[string]map[string]cliout.PeerTable `json:"updates,omitempty"`

	compared int // instances whose entries were read
}

// Diagnosis is the doctor's whole answer.
type Diagnosis struct {
	Instances []Instance  `json:"instances"`
	Links     []Link      `json:"links"`
	Tables    []TableView `json:"tables"`
	Findings  []Finding   `json:"findings"`
	// Cause is the likely cause, the first problem in the order an operator
	// works; empty when nothing is wrong.
	Cause   string `json:"likely_cause,omitempty"`
	Healthy bool   `json:"healthy"`
}

// Has says whether a finding with the code was made.
func (d Diagnosis) Has(code string) bool {
	for _, f := range d.Findings {
		if f.Code == code {
			return true
		}
	}
	return false
}

// Diagnose compares the instances.
func Diagnose(ins []Instance) Diagnosis {
	d := Diagnosis{Instances: ins}
	add := func(level, code, msg string, ev ...string) {
		d.Findings = append(d.Findings, Finding{Level: level, Code: code, Message: msg, Evidence: ev})
	}
	// 1. Can the doctor see anything? A socket below admin level refuses
	// show peers and hides table contents.
	for _, in := range ins {
		var refused []string
		for _, cmd := range sortedKeys(in.Errors) {
			if strings.HasPrefix(cmd, "show peers") || strings.HasPrefix(cmd, "show table") {
				refused = append(refused, fmt.Sprintf("%s: %s", cmd, in.Errors[cmd]))
			}
		}
		if len(refused) > 0 {
			add(Problem, "socket-level", fmt.Sprintf("%s: the socket refused %d of the doctor's commands; it is probably not at admin level (stats socket ... level admin), so peers and tables cannot be compared there", in.Name, len(refused)), refused...)
		}
	}
	// 2. Is a peers section in use, and who is each instance?
	sections := map[string]bool{}
	localOf := map[string]map[string]string{} // section -> instance -> local peer name
	for _, in := range ins {
		for _, s := range in.Sections {
			sections[s.Name] = true
			if localOf[s.Name] == nil {
				localOf[s.Name] = map[string]string{}
			}
			if p, ok := s.Local(); ok {
				localOf[s.Name][in.Name] = p.Name
			}
		}
	}
	if len(sections) == 0 {
		tablesWithSection := 0
		for _, in := range ins {
			for _, t := range in.Tables {
				if strings.Contains(t.Name, "/") {
					tablesWithSection++
				}
			}
		}
		if tablesWithSection == 0 && !d.Has("socket-level") {
			add(Warning, "no-peers", "no instance has a peers section: every stick table is local to its instance")
		}
	}
	for _, in := range ins {
		if _, refused := in.Errors["show peers"]; refused {
			continue
		}
		have := map[string]bool{}
		for _, s := range in.Sections {
			have[s.Name] = true
			if _, ok := s.Local(); !ok {
				add(Problem, "identity", fmt.Sprintf("%s: peers section %s has no local peer: no peer line matches this instance's local peer name (taken from -L, else localpeer, else the host name %q), so it neither listens nor syncs", in.Name, s.Name, in.Node), strings.TrimSpace(firstLine(s.Raw)))
			}
		}
		// A table named section/table with no such section: HAProxy dropped
		// the section at startup (no peer line matched the local name).
		missing := map[string][]string{}
		for _, t := range in.Tables {
			if sec, _, ok := strings.Cut(t.Name, "/"); ok && !have[sec] {
				missing[sec] = append(missing[sec], t.Name)
			}
		}
		for _, sec := range sortedKeys(missing) {
			others := ""
			if sections[sec] {
				others = " (other instances run it)"
			}
			add(Problem, "identity", fmt.Sprintf("%s: tables %s exist but show peers lists no section %s%s: HAProxy removes a peers section whose peer lines do not name this instance's local peer (from -L, else localpeer, else the host name %q), so its tables are not replicated", in.Name, strings.Join(missing[sec], ", "), sec, others, in.Node),
				"show peers: no section "+sec, fmt.Sprintf("show info: node: %s", in.Node))
		}
	}
	for sec, locals := range localOf {
		byName := map[string][]string{}
		for inst, name := range locals {
			byName[name] = append(byName[name], inst)
		}
		for name, insts := range byName {
			if len(insts) > 1 {
				sort.Strings(insts)
				add(Problem, "identity-duplicate", fmt.Sprintf("section %s: %s all call themselves %s: each instance needs its own peer name", sec, strings.Join(insts, ", "), name))
			}
		}
	}
	// 3. Each remote peer's state, from both ends.
	instOf := map[string]map[string]string{} // section -> local peer name -> instance
	for sec, locals := range localOf {
		instOf[sec] = map[string]string{}
		for inst, name := range locals {
			instOf[sec][name] = inst
		}
	}
	for _, in := range ins {
		for _, s := range in.Sections {
			if _, ok := s.Local(); !ok {
				continue
			}
			for _, p := range s.Peers {
				if p.Local {
					continue
				}
				d.Links = append(d.Links, Link{Section: s.Name, From: in.Name, Peer: p.Name, To: instOf[s.Name][p.Name],
					Established: p.Established(), Status: p.LastStatus, Handshake: p.LastHdshk, Addr: p.Addr, Line: strings.TrimSpace(firstLine(p.Raw))})
			}
		}
	}
	reported := map[string]bool{}
	for _, l := range d.Links {
		if l.Established {
			continue
		}
		var back *Link
		for i, m := range d.Links {
			if m.Section == l.Section && m.From == l.To && localOf[l.Section][l.From] == m.Peer {
				back = &d.Links[i]
			}
		}
		key := l.Section + "|" + min(l.From, l.To) + "|" + max(l.From, l.To)
		if l.To != "" && reported[key] {
			continue
		}
		reported[key] = true
		ev := []string{fmt.Sprintf("%s sees %s: last_status=%s last_hdshk=%s (%s)", l.From, l.Peer, l.Status, l.Handshake, l.Line)}
		msg := ""
		switch {
		case l.To == "":
			msg = fmt.Sprintf("section %s: %s has no session with peer %s (%s), and no examined instance is %s: check that %s runs, that its peer port is reachable from %s, and that its local peer name is %s", l.Section, l.From, l.Peer, l.Addr, l.Peer, l.Addr, l.From, l.Peer)
		case back != nil && !back.Established:
			ev = append(ev, fmt.Sprintf("%s sees %s: last_status=%s last_hdshk=%s (%s)", back.From, back.Peer, back.Status, back.Handshake, back.Line))
			msg = fmt.Sprintf("section %s: no session between %s and %s from either end: the peer port is unreachable between them (network partition, firewall, wrong address in a peer line)", l.Section, l.From, l.To)
		case back == nil:
			msg = fmt.Sprintf("section %s: %s has no session with %s, and %s does not list %s as a peer: the two instances' peer lines differ", l.Section, l.From, l.To, l.To, localOf[l.Section][l.From])
		default:
			ev = append(ev, fmt.Sprintf("%s sees %s: last_status=%s established", back.From, back.Peer, back.Status))
			msg = fmt.Sprintf("section %s: %s has no session with %s although %s's end looks up: the link is being re-established, or one direction is blocked", l.Section, l.From, l.To, l.To)
		}
		add(Problem, "link-down", msg, ev...)
	}
	// 4. Tables across instances: definitions, used, keys.
	d.Tables = compareTables(ins)
	for _, t := range d.Tables {
		// Only tables of a peers section are meant to agree: a table of its
		// own on each instance (no section, or one that no instance runs
		// and none dropped) is not replication's business.
		sec, _, inSection := strings.Cut(t.Name, "/")
		if !inSection || (!sections[sec] && !d.Has("identity")) {
			continue
		}
		defs := map[string][]string{}
		for inst, def := range t.Definitions {
			defs[def] = append(defs[def], inst)
		}
		if len(defs) > 1 {
			var ev []string
			for _, def := range sortedKeys(defs) {
				sort.Strings(defs[def])
				ev = append(ev, fmt.Sprintf("%s: %s", strings.Join(defs[def], ", "), def))
			}
			add(Problem, "table-definition", fmt.Sprintf("table %s is defined differently across instances: HAProxy does not apply updates for a table whose definition differs from the sender's", t.Name), ev...)
		}
		if len(t.Definitions) < len(ins) && len(ins) > 1 {
			var lacking []string
			for _, in := range ins {
				if _, ok := t.Definitions[in.Name]; !ok && in.Errors["show table"] == "" {
					lacking = append(lacking, in.Name)
				}
			}
			if len(lacking) > 0 {
				add(Problem, "table-missing", fmt.Sprintf("table %s does not exist on %s", t.Name, strings.Join(lacking, ", ")))
			}
		}
		if t.Diverging > 0 || t.ValueDiffs > 0 {
			var ev []string
			for _, inst := range sortedKeys(t.Used) {
				ev = append(ev, fmt.Sprintf("%s: used %d, lacks %d of %d keys", inst, t.Used[inst], t.Missing[inst], t.Keys))
			}
			add(Problem, "divergence", fmt.Sprintf("table %s diverges: %d of %d keys (%.0f%%) are not on every instance, %d common keys hold different data", t.Name, t.Diverging, t.Keys, t.Percent, t.ValueDiffs), ev...)
		}
	}
	// 5. The likely cause: the first problem in the order an operator works.
	for _, code := range []string{"socket-level", "identity", "identity-duplicate", "table-definition", "table-missing", "link-down", "divergence"} {
		for _, f := range d.Findings {
			if f.Code == code && f.Level == Problem {
				d.Cause = f.Message
				if code == "divergence" {
					d.Cause += "; every link is up, so entries were lost or are still being replicated (reloads faster than tables relearn, or a replication bug): run the doctor again to see whether it shrinks"
				}
				break
			}
		}
		if d.Cause != "" {
			break
		}
	}
	d.Healthy = d.Cause == ""
	if d.Healthy && !d.Has("no-peers") {
		add(OK, "ok", fmt.Sprintf("%d instance(s): every peers link is established and every table agrees", len(ins)))
	}
	return d
}

func compareTables(ins []Instance) []TableView {
	byName := map[string]*TableView{}
	keys := map[string]map[string]map[string]string{} // table -> key -> instance -> data
	var order []string
	for _, in := range ins {
		for _, t := range in.Tables {
			v := byName[t.Name]
			if v == nil {
				v = &TableView{Name: t.Name, Definitions: map[string]string{}, Used: map[string]int{}, Missing: map[string]int{}}
				byName[t.Name], keys[t.Name] = v, map[string]map[string]string{}
				order = append(order, t.Name)
			}
			v.Definitions[in.Name] = fmt.Sprintf("type %s size %d", t.Type, t.Size)
			v.Used[in.Name] = t.Used
			if _, hidden := in.Errors["show table "+t.Name]; hidden {
				continue // contents refused: not compared (socket-level says so)
			}
			v.compared++
			for _, e := range t.Entries {
				if keys[t.Name][e.Key] == nil {
					keys[t.Name][e.Key] = map[string]string{}
				}
				keys[t.Name][e.Key][in.Name] = dataOf(e)
			}
		}
		for _, s := range in.Sections {
			for _, p := range s.Peers {
				for _, pt := range p.Tables {
					if v := byName[pt.Name]; v != nil {
						if v.Updates == nil {
							v.Updates = map[string]map[string]cliout.PeerTable{}
						}
						if v.Updates[in.Name] == nil {
							v.Updates[in.Name] = map[string]cliout.PeerTable{}
						}
						pt.Fields = nil
						v.Updates[in.Name][p.Name] = pt
					}
				}
			}
		}
	}
	var out []TableView
	for _, name := range order {
		v := byName[name]
		v.Keys = len(keys[name])
		for _, per := range keys[name] {
			if len(per) < v.compared {
				v.Diverging++
				for _, in := range ins {
					if _, ok := per[in.Name]; !ok && v.Definitions[in.Name] != "" && in.Errors["show table "+name] == "" {
						v.Missing[in.Name]++
					}
				}
				continue
			}
			first := ""
			for _, data := range per {
				if first == "" {
					first = data
				} else if data != first {
					v.ValueDiffs++
					break
				}
			}
		}
		if v.Keys > 0 {
			v.Percent = 100 * float64(v.Diverging) / float64(v.Keys)
		}
		out = append(out, *v)
	}
	return out
}

// dataOf renders an entry's stored data, leaving out what legitimately
// differs between instances (expiry, use count).
func dataOf(e cliout.Entry) string {
	var parts []string
	for _, k := range sortedKeys(e.Data) {
		parts = append(parts, k+"="+e.Data[k])
	}
	return strings.Join(parts, " ")
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
