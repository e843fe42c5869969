package doctor

import (
	"fmt"
	"sort"
	"strings"

	"github.com/harp-project/harp/harness/core/cliout"
)

// Text renders the diagnosis in the order an operator works through it.
func (d Diagnosis) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "harp doctor: %d instance(s)", len(d.Instances))
	if d.Reads > 1 {
		fmt.Fprintf(&b, ", read %d times over %s (a problem that may pass is read again)", d.Reads, d.Span)
	}
	b.WriteString("\n\n")
	d.identityText(&b)
	d.linksText(&b)
	d.tablesText(&b)
	d.findingsText(&b)
	return b.String()
}

func (d Diagnosis) identityText(b *strings.Builder) {
	b.WriteString("1. Peers sections and local identity\n")
	for _, in := range d.Instances {
		if in.Unreachable != "" {
			fmt.Fprintf(b, "   %s (%s): NOT READ: %s\n", in.Name, in.Socket, in.Unreachable)
			continue
		}
		fmt.Fprintf(b, "   %s (%s): HAProxy %s, node %q\n", in.Name, in.Socket, orDash(in.Version), in.Node)
		if e, ok := in.Errors["show peers"]; ok {
			if refusedBySocket(e) {
				fmt.Fprintf(b, "      show peers refused: %s\n", e)
			} else {
				fmt.Fprintf(b, "      show peers NOT READ (harp's read failed, its sections unknown): %s\n", e)
			}
			continue
		}
		if len(in.Sections) == 0 {
			b.WriteString("      no peers section\n")
		}
		for _, s := range in.Sections {
			local := "NO LOCAL PEER"
			if p, ok := s.Local(); ok {
				local = "local peer " + p.Name
			}
			fmt.Fprintf(b, "      section %s: %s, %d remote peer(s), resync %s\n", s.Name, local, len(s.Peers)-boolInt(local != "NO LOCAL PEER"), resync(s.ResyncFinished()))
		}
	}
}

func (d Diagnosis) linksText(b *strings.Builder) {
	b.WriteString("\n2. Remote peers, seen from each end\n")
	if len(d.Links) == 0 {
		b.WriteString("   none\n")
	}
	for _, l := range d.Links {
		state := "ESTABLISHED"
		if !l.Established {
			state = "DOWN"
		}
		to := l.Peer
		if l.To != "" && l.To != l.Peer {
			to += " (" + l.To + ")"
		}
		fmt.Fprintf(b, "   %s: %s -> %s %s: %s last_status=%s last_hdshk=%s\n", l.Section, l.From, to, l.Addr, state, l.Status, l.Handshake)
	}
}

func (d Diagnosis) tablesText(b *strings.Builder) {
	b.WriteString("\n3. Tables across instances\n")
	if len(d.Tables) == 0 {
		b.WriteString("   none\n")
	}
	for _, t := range d.Tables {
		fmt.Fprintf(b, "   %s: %d distinct keys, %d (%.0f%%) not on every instance, %d with differing data\n", t.Name, t.Keys, t.Diverging, t.Percent, t.ValueDiffs)
		for _, inst := range sortedKeys(t.Definitions) {
			lacks := fmt.Sprintf("lacks %d", t.Missing[inst])
			if d.hidden(inst, t.Name) {
				lacks = "contents refused by the socket"
				if d.tooLarge(inst, t.Name) {
					lacks = "contents too large to read"
				}
			}
			fmt.Fprintf(b, "      %-12s %s, used %d, %s%s\n", inst, t.Definitions[inst], t.Used[inst], lacks, updatesText(t.Updates[inst]))
		}
	}
}

// updatesText is what one instance pushed of a table to each peer, and
// what the peer acknowledged.
func updatesText(ups map[string]cliout.PeerTable) string {
	if len(ups) == 0 {
		return ""
	}
	var parts []string
	for _, peer := range sortedKeys(ups) {
		parts = append(parts, fmt.Sprintf("%s: pushed %d acked %d", peer, ups[peer].LastPushed, ups[peer].PeerAcked))
	}
	sort.Strings(parts)
	return "; updates " + strings.Join(parts, ", ")
}

func (d Diagnosis) findingsText(b *strings.Builder) {
	b.WriteString("\n4. Diagnosis\n")
	for _, f := range d.Findings {
		fmt.Fprintf(b, "   %s [%s] %s\n", strings.ToUpper(f.Level), f.Code, f.Message)
		for _, e := range f.Evidence {
			fmt.Fprintf(b, "      evidence: %s\n", e)
		}
	}
	if d.Cause != "" {
		fmt.Fprintf(b, "\nLikely cause: %s\n", d.Cause)
	}
}

func (d Diagnosis) hidden(inst, table string) bool {
	for _, in := range d.Instances {
		if in.Name == inst {
			_, ok := in.Errors["show table "+table]
			return ok
		}
	}
	return false
}

func (d Diagnosis) tooLarge(inst, table string) bool {
	for _, in := range d.Instances {
		if in.Name == inst {
			return in.TooLarge["show table "+table]
		}
	}
	return false
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func resync(done bool) string {
	if done {
		return "finished"
	}
	return "NOT finished"
}
