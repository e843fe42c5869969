package doctor

import (
	"fmt"
	"sort"
	"strings"

	"github.com/harp-project/harp/harness/core/cliout"
)

// Levels of a finding.
const (
	Problem = "problem"
	Warning = "warning"
	OK      = "ok"
)

// Code names what a finding is about, so callers act on it without
// reading the message.
type Code string

// Finding codes, in the order Diagnose makes them.
const (
	Unreachable       Code = "unreachable"        // the socket did not answer, or is not HAProxy's
	SocketLevel       Code = "socket-level"       // the socket refuses show peers or show table
	TooLarge          Code = "too-large"          // an answer (a table's dump) too large for harp to read: what it holds is unknown
	NoPeers           Code = "no-peers"           // no peers section anywhere: nothing replicates
	Identity          Code = "identity"           // an instance is not the local peer of its section
	IdentityDuplicate Code = "identity-duplicate" // instances share a local peer name
	LinkDown          Code = "link-down"          // a remote peer has no session
	TableDefinition   Code = "table-definition"   // a replicated table differs in type or size
	TableMissing      Code = "table-missing"      // a replicated table is absent somewhere
	Divergence        Code = "divergence"         // a replicated table's contents differ
	Healthy           Code = "ok"                 // every link up, every table agrees
)

// Codes are every code a diagnosis may hold, Settle's included.
var Codes = []Code{Unreachable, SocketLevel, TooLarge, NoPeers, Identity, IdentityDuplicate, LinkDown, TableDefinition, TableMissing, Divergence, Healthy, Settled}

// Finding is one thing the doctor concluded, with what it rests on.
// Instance and Table are set when it is about exactly one instance or
// table, so callers need not read the message.
type Finding struct {
	Level string `json:"level"`
	Code  Code   `json:"code"`
	// Instance is the instance concerned; for a link, the end reporting it.
	Instance string `json:"instance,omitempty"`
	// Peer is a link's other end: the examined instance, else the name on
	// the peer line.
	Peer     string   `json:"peer,omitempty"`
	Table    string   `json:"table,omitempty"` // as show table names it: section/table
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
	// Stores are the data types each instance stores, as its entries show
	// them (show table's header does not): instance -> "gpc0,http_req_cnt";
	// absent for an instance with no entries read.
	Stores     map[string]string `json:"stores,omitempty"`
	Used       map[string]int    `json:"used"`
	Keys       int               `json:"keys"`           // distinct keys over every instance
	Missing    map[string]int    `json:"missing"`        // instance -> keys others have and it lacks
	Diverging  int               `json:"diverging_keys"` // keys not on every instance
	ValueDiffs int               `json:"value_diffs"`    // keys on every instance whose data differ
	Percent    float64           `json:"divergence_pct"`
	// Replicated says the table is meant to agree across instances (it is
	// in a peers section that some instance runs, or that one dropped):
	// only then are its contents compared for findings.
	Replicated bool `json:"replicated"`
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
	// Reads is how many times the sockets were read before this answer
	// (Settle reads again while a problem may be passing), over Span.
	Reads int    `json:"reads,omitempty"`
	Span  string `json:"read_span,omitempty"`
}

// Has says whether a finding with the code was made.
func (d Diagnosis) Has(code Code) bool { return has(d.Findings, code) }

// Find returns the first finding with the code about instance and table;
// an empty one matches any. A link finding is about both its ends.
func (d Diagnosis) Find(code Code, instance, table string) (Finding, bool) {
	for _, f := range d.Findings {
		if f.Code != code || table != "" && f.Table != table {
			continue
		}
		if instance == "" || f.Instance == instance || f.Peer == instance {
			return f, true
		}
	}
	return Finding{}, false
}

// Codes are the findings' codes, in order (nil when none).
func (d Diagnosis) Codes() []Code {
	var out []Code
	for _, f := range d.Findings {
		out = append(out, f.Code)
	}
	return out
}

// LinkDownTo says whether a link to or from the instance is down.
func (d Diagnosis) LinkDownTo(instance string) bool {
	for _, l := range d.Links {
		if !l.Established && (l.Peer == instance || l.From == instance) {
			return true
		}
	}
	return false
}

// Diagnose compares the instances, checking in the order an operator
// works: can the doctor see, who is each instance, are the links up, do
// the tables agree (checks.go).
func Diagnose(all []Instance) Diagnosis {
	d := Diagnosis{Instances: all}
	add := func(fs []Finding) { d.Findings = append(d.Findings, fs...) }
	// An instance that could not be read is reported, and the others are
	// still diagnosed among themselves.
	var ins []Instance
	for _, in := range all {
		if in.Unreachable != "" {
			add([]Finding{{Level: Problem, Code: Unreachable, Instance: in.Name, Message: in.Unreachable}})
			continue
		}
		ins = append(ins, in)
	}
	p := peeringOf(ins)
	blind := socketLevel(ins)
	add(blind)
	add(tooLarge(ins))
	add(noPeers(ins, p, len(blind) > 0 || len(ins) == 0))
	add(identity(ins, p))
	add(duplicateIdentity(p))
	d.Links = links(ins, p)
	add(linksDown(d.Links, p))
	d.Tables = compareTables(ins)
	dropped := d.Has(Identity)
	for i, t := range d.Tables {
		// Per table, so a table's findings stay together.
		if replicated(t, p, dropped) {
			d.Tables[i].Replicated = true
			add(tableDefinition(t, d.Tables, p))
			add(tableMissing(t, ins))
			add(divergence(t))
		}
	}
	d.Cause = likelyCause(d.Findings)
	d.Healthy = d.Cause == ""
	if d.Healthy {
		add(healthy(len(ins), d.Findings))
	}
	return d
}

// compareTables lines each table up across the instances, in the order
// the tables first appear.
func compareTables(ins []Instance) []TableView {
	byName := map[string]*TableView{}
	copies := map[string][]copyOf{} // table -> the instances' contents
	var order []string
	for _, in := range ins {
		for _, t := range in.Tables {
			if byName[t.Name] == nil {
				byName[t.Name] = &TableView{Name: t.Name, Definitions: map[string]string{}, Stores: map[string]string{}, Used: map[string]int{}, Missing: map[string]int{}}
				order = append(order, t.Name)
			}
			if d := byName[t.Name].read(in, t); d != nil {
				copies[t.Name] = append(copies[t.Name], copyOf{in.Name, d.entries})
			}
		}
		addUpdates(byName, in)
	}
	var out []TableView
	for _, name := range order {
		v := byName[name]
		v.count(copies[name])
		out = append(out, *v)
	}
	return out
}

// copyOf is one instance's contents of a table.
type copyOf struct {
	instance string
	entries  []entryDigest // sorted by key hash
}

// read records one instance's copy of the table and gives its contents
// as compared (nil when they were refused).
func (v *TableView) read(in Instance, t cliout.Table) *TableDigest {
	v.Definitions[in.Name] = fmt.Sprintf("type %s size %d", t.Type, t.Size)
	v.Used[in.Name] = t.Used
	if _, hidden := in.Errors["show table "+t.Name]; hidden {
		return nil // contents refused or too large: not compared (socket-level or too-large says so)
	}
	v.compared++
	d := in.Digests[t.Name]
	if d == nil {
		d = digestEntries(t.Entries)
	}
	if d.Len() > 0 {
		v.Stores[in.Name] = d.Stores
	}
	return d
}

// addUpdates records what show peers says each peer was sent of a table.
func addUpdates(byName map[string]*TableView, in Instance) {
	for _, s := range in.Sections {
		for _, p := range s.Peers {
			for _, pt := range p.Tables {
				v := byName[pt.Name]
				if v == nil {
					continue
				}
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

// count tallies keys missing somewhere and common keys whose data differ,
// over the instances whose contents were read: one merge of their sorted
// digests, so nothing is held per key.
func (v *TableView) count(copies []copyOf) {
	at := make([]int, len(copies)) // each copy's next entry
	has := make([]bool, len(copies))
	for {
		var key uint64
		found := false
		for i, c := range copies {
			if at[i] < len(c.entries) && (!found || c.entries[at[i]].key < key) {
				key, found = c.entries[at[i]].key, true
			}
		}
		if !found {
			break
		}
		v.Keys++
		on, differ := 0, false
		var data uint64
		for i, c := range copies {
			has[i] = at[i] < len(c.entries) && c.entries[at[i]].key == key
			if !has[i] {
				continue
			}
			if d := c.entries[at[i]].data; on == 0 {
				data = d
			} else if d != data {
				differ = true
			}
			on++
			for at[i] < len(c.entries) && c.entries[at[i]].key == key { // a key listed twice counts once
				at[i]++
			}
		}
		switch {
		case on < len(copies):
			v.Diverging++
			for i, c := range copies {
				if !has[i] {
					v.Missing[c.instance]++
				}
			}
		case differ:
			v.ValueDiffs++
		}
	}
	if v.Keys > 0 {
		v.Percent = 100 * float64(v.Diverging) / float64(v.Keys)
	}
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
