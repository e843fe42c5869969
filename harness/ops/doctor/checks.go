package doctor

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// peering is who each instance is in each peers section it runs.
type peering struct {
	sections map[string]bool              // run by some instance
	local    map[string]map[string]string // section -> instance -> local peer name
	instance map[string]map[string]string // section -> local peer name -> instance
}

func peeringOf(ins []Instance) peering {
	p := peering{sections: map[string]bool{}, local: map[string]map[string]string{}, instance: map[string]map[string]string{}}
	for _, in := range ins {
		for _, s := range in.Sections {
			p.sections[s.Name] = true
			if p.local[s.Name] == nil {
				p.local[s.Name], p.instance[s.Name] = map[string]string{}, map[string]string{}
			}
			if l, ok := s.Local(); ok {
				p.local[s.Name][in.Name] = l.Name
				p.instance[s.Name][l.Name] = in.Name
			}
		}
	}
	return p
}

// socketLevel comes first: a socket below admin level refuses show peers
// and hides table contents, so nothing else about that instance is sure.
// Only the socket's own refusal says so: a command whose answer harp could
// not read (timed out, reset, never sent) is a read that failed, said as
// such (#40), and what that command would have shown is unknown.
func socketLevel(ins []Instance) []Finding {
	var out []Finding
	for _, in := range ins {
		var refused, failed []string
		timedOut := false
		for _, cmd := range sortedKeys(in.Errors) {
			if in.TooLarge[cmd] {
				continue // answered, too large to read: tooLarge says so
			}
			if !strings.HasPrefix(cmd, "show peers") && !strings.HasPrefix(cmd, "show table") {
				continue
			}
			why := fmt.Sprintf("%s: %s", cmd, in.Errors[cmd])
			if refusedBySocket(in.Errors[cmd]) {
				refused = append(refused, why)
				continue
			}
			failed = append(failed, why)
			timedOut = timedOut || readTimedOut(in.Errors[cmd])
		}
		if len(failed) > 0 {
			cmds := make([]string, len(failed))
			for i, f := range failed {
				cmds[i], _, _ = strings.Cut(f, ": ")
			}
			how := "failed"
			if timedOut {
				how = "timed out or failed"
				if len(failed) == 1 {
					how = "timed out"
				}
			}
			out = append(out, Finding{Level: Problem, Code: Unreachable, Instance: in.Name, Evidence: failed,
				Message: fmt.Sprintf("%s: harp could not read the socket's answer to %s: the read %s (the socket answered show info: not a permission problem), so what %s would show there is unknown", in.Name, strings.Join(cmds, ", "), how, plural(len(cmds), "that command", "those commands"))})
		}
		if len(refused) > 0 {
			out = append(out, Finding{Level: Problem, Code: SocketLevel, Instance: in.Name, Evidence: refused,
				Message: fmt.Sprintf("%s: the socket refused %d of the doctor's commands; it is probably not at admin level (stats socket ... level admin), so peers and tables cannot be compared there", in.Name, len(refused))})
		}
	}
	return out
}

// refusedBySocket says whether a command's error is the socket's own
// answer refusing it (its words, or an answer harp cannot parse, which
// names the command it answered), as against a read harp could not finish:
// a Go error from the exchange (a deadline, a reset, a dial).
func refusedBySocket(msg string) bool {
	return denied(msg) || msg == "empty answer" ||
		strings.HasPrefix(msg, "show peers: ") || strings.HasPrefix(msg, "show table: ")
}

// readTimedOut says whether a failed read ran out of time.
func readTimedOut(msg string) bool {
	l := strings.ToLower(msg)
	return strings.Contains(l, "i/o timeout") || strings.Contains(l, "deadline exceeded") || strings.Contains(l, "timed out")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// tooLarge names each answer harp would not read for its size: the socket
// answered (no level problem), and what the answer holds is unknown, so a
// table's contents are not compared there and the diagnosis cannot be
// healthy.
func tooLarge(ins []Instance) []Finding {
	var out []Finding
	for _, in := range ins {
		for _, cmd := range sortedKeys(in.TooLarge) {
			why := strings.TrimPrefix(in.Errors[cmd], fmt.Sprintf("the answer to %q: ", cmd))
			f := Finding{Level: Problem, Code: TooLarge, Instance: in.Name, Evidence: []string{cmd + ": " + in.Errors[cmd]},
				Message: fmt.Sprintf("%s: the answer to %s is too large for harp to read (%s); what it holds is unknown (the socket answered: not a permission problem)", in.Name, cmd, why)}
			if name, ok := strings.CutPrefix(cmd, "show table "); ok {
				used := "an unknown number of"
				for _, t := range in.Tables {
					if t.Name == name {
						used = fmt.Sprint(t.Used)
					}
				}
				f.Table = name
				f.Message = fmt.Sprintf("%s: table %s, %s entries as show table says, is too large for harp to read (%s); its entries are unknown, so it is not compared there (the socket answered: not a permission problem)", in.Name, name, used, why)
			}
			out = append(out, f)
		}
	}
	return out
}

// noPeers warns only when it is sure: no section seen, no table named
// after one (a dropped section), and every socket answered.
func noPeers(ins []Instance, p peering, blind bool) []Finding {
	if len(p.sections) > 0 || blind {
		return nil
	}
	for _, in := range ins {
		for _, t := range in.Tables {
			if strings.Contains(t.Name, "/") {
				return nil
			}
		}
	}
	return []Finding{{Level: Warning, Code: NoPeers, Message: "no instance has a peers section: every stick table is local to its instance"}}
}

// identity finds instances that are not a peer of their own section,
// whether HAProxy kept the section or dropped it.
func identity(ins []Instance, p peering) []Finding {
	var out []Finding
	for _, in := range ins {
		if _, refused := in.Errors["show peers"]; refused {
			continue
		}
		out = append(out, noLocalPeer(in)...)
		out = append(out, droppedSections(in, p)...)
	}
	return out
}

func noLocalPeer(in Instance) []Finding {
	var out []Finding
	for _, s := range in.Sections {
		if _, ok := s.Local(); !ok {
			out = append(out, Finding{Level: Problem, Code: Identity, Instance: in.Name, Evidence: []string{strings.TrimSpace(firstLine(s.Raw))},
				Message: fmt.Sprintf("%s: peers section %s has no local peer: no peer line matches this instance's local peer name (taken from -L, else localpeer, else the host name %q), so it neither listens nor syncs", in.Name, s.Name, in.Node)})
		}
	}
	return out
}

// droppedSections: a table named section/table with no such section means
// HAProxy dropped the section at startup (no peer line matched the local
// name).
func droppedSections(in Instance, p peering) []Finding {
	have := map[string]bool{}
	for _, s := range in.Sections {
		have[s.Name] = true
	}
	missing := map[string][]string{}
	for _, t := range in.Tables {
		if sec, _, ok := strings.Cut(t.Name, "/"); ok && !have[sec] {
			missing[sec] = append(missing[sec], t.Name)
		}
	}
	var out []Finding
	for _, sec := range sortedKeys(missing) {
		others := ""
		if p.sections[sec] {
			others = " (other instances run it)"
		}
		out = append(out, Finding{Level: Problem, Code: Identity, Instance: in.Name, Table: only(missing[sec]),
			Evidence: []string{"show peers: no section " + sec, fmt.Sprintf("show info: node: %s", in.Node)},
			Message:  fmt.Sprintf("%s: tables %s exist but show peers lists no section %s%s: HAProxy removes a peers section whose peer lines do not name this instance's local peer (from -L, else localpeer, else the host name %q), so its tables are not replicated", in.Name, strings.Join(missing[sec], ", "), sec, others, in.Node)})
	}
	return out
}

func duplicateIdentity(p peering) []Finding {
	var out []Finding
	for _, sec := range sortedKeys(p.local) {
		byName := map[string][]string{}
		for inst, name := range p.local[sec] {
			byName[name] = append(byName[name], inst)
		}
		for _, name := range sortedKeys(byName) {
			if insts := byName[name]; len(insts) > 1 {
				sort.Strings(insts)
				out = append(out, Finding{Level: Problem, Code: IdentityDuplicate,
					Message: fmt.Sprintf("section %s: %s all call themselves %s: each instance needs its own peer name", sec, strings.Join(insts, ", "), name)})
			}
		}
	}
	return out
}

// links lists each remote peer as each instance sees it; a section with
// no local peer has no sessions, so identity covers it.
func links(ins []Instance, p peering) []Link {
	var out []Link
	for _, in := range ins {
		for _, s := range in.Sections {
			if _, ok := s.Local(); !ok {
				continue
			}
			for _, r := range s.Peers {
				if !r.Local {
					out = append(out, Link{Section: s.Name, From: in.Name, Peer: r.Name, To: p.instance[s.Name][r.Name],
						Established: r.Established(), Status: r.LastStatus, Handshake: r.LastHdshk, Addr: r.Addr, Line: strings.TrimSpace(firstLine(r.Raw))})
				}
			}
		}
	}
	return out
}

// linksDown reports a down link between two examined instances once, from
// the first end listed, with the other end's view as evidence.
func linksDown(ls []Link, p peering) []Finding {
	var out []Finding
	reported := map[string]bool{}
	for _, l := range ls {
		if l.Established {
			continue
		}
		key := l.Section + "|" + min(l.From, l.To) + "|" + max(l.From, l.To)
		if l.To != "" && reported[key] {
			continue
		}
		reported[key] = true
		out = append(out, linkDown(l, backOf(l, ls, p), p.local[l.Section][l.From]))
	}
	return out
}

// backOf is the same link seen from its other end, if that end lists it.
func backOf(l Link, ls []Link, p peering) *Link {
	var back *Link
	for i, m := range ls {
		if m.Section == l.Section && m.From == l.To && p.local[l.Section][l.From] == m.Peer {
			back = &ls[i]
		}
	}
	return back
}

// linkDown tells the cause apart by what the other end sees; self is the
// local peer name of l.From.
func linkDown(l Link, back *Link, self string) Finding {
	f := Finding{Level: Problem, Code: LinkDown, Instance: l.From, Peer: cmp.Or(l.To, l.Peer), Evidence: []string{sees(l)}}
	switch {
	case l.To == "":
		f.Message = fmt.Sprintf("section %s: %s has no session with peer %s (%s), and no examined instance is %s: check that %s runs, that its peer port is reachable from %s, and that its local peer name is %s", l.Section, l.From, l.Peer, l.Addr, l.Peer, l.Addr, l.From, l.Peer)
	case back != nil && !back.Established:
		f.Evidence = append(f.Evidence, sees(*back))
		f.Message = fmt.Sprintf("section %s: no session between %s and %s from either end: the peer port is unreachable between them (network partition, firewall, wrong address in a peer line)", l.Section, l.From, l.To)
	case back == nil:
		f.Message = fmt.Sprintf("section %s: %s has no session with %s, and %s does not list %s as a peer: the two instances' peer lines differ", l.Section, l.From, l.To, l.To, self)
	default:
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s sees %s: last_status=%s established", back.From, back.Peer, back.Status))
		f.Message = fmt.Sprintf("section %s: %s has no session with %s although %s's end looks up: the link is being re-established, or one direction is blocked", l.Section, l.From, l.To, l.To)
	}
	return f
}

func sees(l Link) string {
	return fmt.Sprintf("%s sees %s: last_status=%s last_hdshk=%s (%s)", l.From, l.Peer, l.Status, l.Handshake, l.Line)
}

// replicated says whether a table is meant to agree across instances: a
// table of its own on each instance (no section, or one that no instance
// runs and none dropped) is not replication's business.
func replicated(t TableView, p peering, dropped bool) bool {
	sec, _, inSection := strings.Cut(t.Name, "/")
	return inSection && (p.sections[sec] || dropped)
}

// tableDefinition comes before divergence: HAProxy ignores updates for a
// table defined unlike the sender's.
func tableDefinition(t TableView, all []TableView, p peering) []Finding {
	if ev := differing(t.Definitions); len(ev) > 0 {
		return []Finding{{Level: Problem, Code: TableDefinition, Table: t.Name, Evidence: ev,
			Message: fmt.Sprintf("table %s is defined differently across instances: HAProxy does not apply updates for a table whose definition differs from the sender's", t.Name)}}
	}
	if ev := differing(t.Stores); len(ev) > 0 {
		return []Finding{{Level: Problem, Code: TableDefinition, Table: t.Name, Evidence: ev,
			Message: fmt.Sprintf("table %s stores other data types on some instances: updates carry only the data both sides store, so the tables can never agree", t.Name)}}
	}
	return refusedDefinition(t, all, p)
}

// differing lists which instances hold which value, when they differ.
func differing(byInstance map[string]string) []string {
	groups := map[string][]string{}
	for inst, v := range byInstance {
		groups[v] = append(groups[v], inst)
	}
	if len(groups) < 2 {
		return nil
	}
	var ev []string
	for _, v := range sortedKeys(groups) {
		sort.Strings(groups[v])
		ev = append(ev, fmt.Sprintf("%s: %s", strings.Join(groups[v], ", "), v))
	}
	return ev
}

// refusedDefinition reads the senders' counters: a receiver that has
// acknowledged none of the updates pushed for this table, while it
// acknowledges another table on the same link, ignores this table's
// updates, which HAProxy does when the sender's definition (key type, key
// length, stored data types) differs from its own. show table shows
// neither key length nor stored types: this is how they are seen.
func refusedDefinition(t TableView, all []TableView, p peering) []Finding {
	section, _, _ := strings.Cut(t.Name, "/")
	var ev, receivers []string
	for _, sender := range sortedKeys(t.Updates) {
		for _, peer := range sortedKeys(t.Updates[sender]) {
			pt := t.Updates[sender][peer]
			if pt.LastPushed == 0 || pt.PeerAcked != 0 || !acksOther(all, t.Name, sender, peer) {
				continue
			}
			recv := peer
			if inst, ok := p.instance[section][peer]; ok {
				recv = inst
			}
			receivers = append(receivers, recv)
			ev = append(ev, fmt.Sprintf("%s pushed %d updates of %s to %s, acknowledged 0, while %s acknowledges other tables", sender, pt.LastPushed, t.Name, peer, peer))
		}
	}
	if len(ev) == 0 {
		return nil
	}
	sort.Strings(receivers)
	receivers = slices.Compact(receivers)
	return []Finding{{Level: Problem, Code: TableDefinition, Table: t.Name, Instance: only(receivers), Evidence: ev,
		Message: fmt.Sprintf("%s never acknowledged an update of %s: its definition of the table (key type, key length or stored data types) differs from the sender's, so HAProxy ignores the updates", strings.Join(receivers, ", "), t.Name)}}
}

// acksOther says whether a link acknowledged updates of another table.
func acksOther(all []TableView, table, sender, peer string) bool {
	for _, o := range all {
		if pt, ok := o.Updates[sender][peer]; ok && o.Name != table && pt.PeerAcked > 0 {
			return true
		}
	}
	return false
}

// tableMissing leaves out instances whose socket refused show table: their
// tables are unknown, not absent.
func tableMissing(t TableView, ins []Instance) []Finding {
	if len(t.Definitions) >= len(ins) || len(ins) < 2 {
		return nil
	}
	var lacking []string
	for _, in := range ins {
		if _, ok := t.Definitions[in.Name]; !ok && in.Errors["show table"] == "" {
			lacking = append(lacking, in.Name)
		}
	}
	if len(lacking) == 0 {
		return nil
	}
	return []Finding{{Level: Problem, Code: TableMissing, Instance: only(lacking), Table: t.Name,
		Message: fmt.Sprintf("table %s does not exist on %s", t.Name, strings.Join(lacking, ", "))}}
}

func divergence(t TableView) []Finding {
	if t.Diverging == 0 && t.ValueDiffs == 0 {
		return nil
	}
	var ev []string
	for _, inst := range sortedKeys(t.Used) {
		ev = append(ev, fmt.Sprintf("%s: used %d, lacks %d of %d keys", inst, t.Used[inst], t.Missing[inst], t.Keys))
	}
	return []Finding{{Level: Problem, Code: Divergence, Table: t.Name, Evidence: ev,
		Message: fmt.Sprintf("table %s diverges: %d of %d keys (%.0f%%) are not on every instance, %d common keys hold different data", t.Name, t.Diverging, t.Keys, t.Percent, t.ValueDiffs)}}
}

// causeOrder is the order an operator works in: a problem early in it
// usually explains those after it.
var causeOrder = []Code{Unreachable, SocketLevel, Identity, IdentityDuplicate, TableDefinition, TableMissing, LinkDown, Divergence, TooLarge}

// likelyCause is the first problem in causeOrder; empty when none.
func likelyCause(fs []Finding) string {
	for _, code := range causeOrder {
		for _, f := range fs {
			if f.Code != code || f.Level != Problem {
				continue
			}
			if code == Divergence {
				return f.Message + "; every link is up, so entries were lost or are still being replicated (reloads faster than tables relearn, or a replication bug): run the doctor again to see whether it shrinks"
			}
			return f.Message
		}
	}
	return ""
}

// healthy is the all-clear for n instances without problems; not said
// when there are no peers, as nothing was checked.
func healthy(n int, fs []Finding) []Finding {
	if has(fs, NoPeers) {
		return nil
	}
	return []Finding{{Level: OK, Code: Healthy, Message: fmt.Sprintf("%d instance(s): every peers link is established and every table agrees", n)}}
}

func has(fs []Finding, code Code) bool {
	for _, f := range fs {
		if f.Code == code {
			return true
		}
	}
	return false
}

// only is the one element of xs, else empty: a finding names an instance
// or table only when it is about exactly one.
func only(xs []string) string {
	if len(xs) == 1 {
		return xs[0]
	}
	return ""
}
