package peerfuzz

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand"

	"github.com/harp-project/harp/harness/core/peerwire"
)

// Tables are the tables of the fuzz node's config (Config), as harp's
// peer defines them on the wire: names without the section, key types,
// stored data.
var Tables = []peerwire.TableDef{
	{ID: 1, Name: "t_ip", KeyType: peerwire.KeyIPv4, KeyLen: 4, Types: []int{2, 5}, Expire: 600000, Period: map[int]uint64{5: 10000}},
	{ID: 2, Name: "t_str", KeyType: peerwire.KeyString, KeyLen: 32, Types: []int{2, 9}, Expire: 600000},
	{ID: 3, Name: "t_int", KeyType: peerwire.KeySInt, KeyLen: 4, Types: []int{1}, Expire: 600000},
}

// Section, LocalPeer and RemotePeer name the fuzz node's peers section.
const (
	Section    = "fuzz"
	LocalPeer  = "local"
	RemotePeer = "remote"
	PeerPort   = 10000
)

// Config is the fuzz node's configuration: one peers section whose
// remote peer harp plays, with a table of each key kind.
func Config() string {
	return fmt.Sprintf(`global
    nbthread 1
    localpeer %[1]s
    stats socket ipv4@0.0.0.0:9998 level admin
    stats timeout 1m

defaults
    mode tcp
    timeout connect 2s
    timeout client 1m
    timeout server 1m

peers %[2]s
    peer %[1]s 0.0.0.0:%[3]d
    peer %[4]s 127.0.0.1:10999
    table t_ip type ip size 1k expire 10m store gpc0,conn_rate(10s)
    table t_str type string len 32 size 1k expire 10m store gpc0,http_req_cnt
    table t_int type integer size 1k expire 10m store gpt0
`, LocalPeer, Section, PeerPort, RemotePeer)
}

// Generate makes input n of the run seeded with seed: the same seed and
// n give the same input. An input mostly starts with a table definition
// (else HAProxy has no table to apply updates to), then mixes valid and
// mutated messages.
func Generate(seed int64, n int) Input {
	r := rand.New(rand.NewSource(seed*1_000_003 + int64(n)))
	in := Input{Seed: seed, N: n, End: []string{EndFIN, EndFIN, EndFIN, EndSilence, EndSilence, EndReset}[r.Intn(6)]}
	var defined *peerwire.TableDef
	if r.Intn(10) > 0 {
		d := Tables[r.Intn(len(Tables))]
		defined = &d
		in.Steps = append(in.Steps, step(r, "definition of "+d.Name, d.Encode().Encode()))
	}
	for k := 1 + r.Intn(10); k > 0; k-- {
		in.Steps = append(in.Steps, message(r, defined))
	}
	return in
}

// step makes a step of b, sometimes split into tiny segments or followed
// by a pause.
func step(r *rand.Rand, what string, b []byte) Step {
	s := Step{What: what, Hex: hex.EncodeToString(b)}
	if len(b) > 1 && r.Intn(4) == 0 {
		for left := len(b); left > 1 && len(s.Split) < 8; {
			k := 1 + r.Intn(3)
			s.Split = append(s.Split, k)
			left -= k
		}
	}
	if r.Intn(5) == 0 {
		s.PauseMS = 50 + r.Intn(300)
	}
	return s
}

// message makes one valid or mutated message.
func message(r *rand.Rand, d *peerwire.TableDef) Step {
	def := Tables[0]
	if d != nil {
		def = *d
	}
	switch r.Intn(12) {
	case 0, 1, 2: // a valid update of the defined table
		m, _ := update(r, def, true).Encode(def)
		return step(r, "update of "+def.Name, m.Encode())
	case 3: // an update with a key of the wrong length or type
		u := update(r, def, true)
		u.Key = make([]byte, []int{0, 1, 3, 5, 33, 300}[r.Intn(6)])
		other := def
		other.KeyType, other.KeyLen = peerwire.KeyString, uint64(len(u.Key))
		m, _ := u.Encode(other)
		return step(r, fmt.Sprintf("update of %s with a %d-byte key", def.Name, len(u.Key)), m.Encode())
	case 4: // a switch to a table id never defined, then an update
		sw := peerwire.Message{Class: peerwire.ClassStickTable, Type: peerwire.StktSwitch, Body: peerwire.AppendVarint(nil, uint64(50+r.Intn(1<<20)))}
		m, _ := update(r, def, false).Encode(def)
		return step(r, "switch to an unknown table id, then an update", append(sw.Encode(), m.Encode()...))
	case 5: // an ack, valid or cut short
		body := peerwire.AppendVarint(nil, def.ID)
		body = binary.BigEndian.AppendUint32(body, uint32(r.Intn(1000)))
		if r.Intn(2) == 0 {
			body = body[:r.Intn(len(body))]
			return step(r, fmt.Sprintf("ack cut to %d bytes", len(body)), peerwire.Message{Class: peerwire.ClassStickTable, Type: peerwire.StktAck, Body: body}.Encode())
		}
		return step(r, "ack", peerwire.Message{Class: peerwire.ClassStickTable, Type: peerwire.StktAck, Body: body}.Encode())
	case 6: // a control message, known or not
		t := byte(r.Intn(8))
		return step(r, fmt.Sprintf("control message type %d", t), []byte{peerwire.ClassControl, t})
	case 7: // an error message, or an unknown class
		c := []byte{peerwire.ClassError, 0xfe, 0x42, peerwire.ClassReserved}[r.Intn(4)]
		return step(r, fmt.Sprintf("class %d message", c), []byte{c, byte(r.Intn(256))})
	case 8: // a length varint that never ends, or announces far too much
		b := []byte{peerwire.ClassStickTable, peerwire.StktUpdate}
		if r.Intn(2) == 0 {
			for i := 0; i < 9+r.Intn(8); i++ {
				b = append(b, 0xff)
			}
			return step(r, "update whose length varint never ends", b)
		}
		b = peerwire.AppendVarint(b, uint64(1<<20+r.Intn(1<<30)))
		return step(r, "update announcing a body far larger than sent", append(b, 1, 2, 3))
	case 9: // a valid message cut short
		m, _ := update(r, def, true).Encode(def)
		b := m.Encode()
		return step(r, fmt.Sprintf("update of %s cut to %d of %d bytes", def.Name, len(b)/2, len(b)), b[:len(b)/2])
	case 10: // a definition with odd fields
		od := def
		od.KeyType, od.KeyLen = uint64(r.Intn(20)), uint64(r.Intn(1<<16))
		od.Types = []int{r.Intn(len(peerwire.DataTypes))}
		return step(r, fmt.Sprintf("definition of %s with key type %d, length %d", od.Name, od.KeyType, od.KeyLen), mutateDef(r, od))
	default: // a valid message with bytes flipped
		m, _ := update(r, def, true).Encode(def)
		b := m.Encode()
		for k := 1 + r.Intn(3); k > 0; k-- {
			b[r.Intn(len(b))] ^= byte(1 + r.Intn(255))
		}
		return step(r, "update of "+def.Name+" with flipped bytes", b)
	}
}

func mutateDef(r *rand.Rand, d peerwire.TableDef) (b []byte) {
	defer func() {
		if recover() != nil { // a data type the encoder cannot write: raw
			b = []byte{peerwire.ClassStickTable, peerwire.StktDefine, 3, byte(d.ID), 0xff, 0xff}
		}
	}()
	return d.Encode().Encode()
}

// update makes a valid update for d (with an update id or incremental).
func update(r *rand.Rand, d peerwire.TableDef, withID bool) peerwire.Update {
	u := peerwire.Update{HasID: withID || r.Intn(2) == 0, ID: uint32(r.Intn(1 << 20)), Values: map[int]peerwire.Value{}}
	if r.Intn(3) == 0 {
		u.Timed, u.Expire = true, uint32(r.Intn(1<<31))
	}
	switch d.KeyType {
	case peerwire.KeyString:
		u.Key = []byte(fmt.Sprintf("k%d", r.Intn(1000)))
	default:
		u.Key = binary.BigEndian.AppendUint32(nil, r.Uint32())
	}
	for _, id := range d.Types {
		switch peerwire.DataTypes[id].Kind {
		case peerwire.KindFreq:
			u.Values[id] = peerwire.Value{Freq: [][3]uint64{{uint64(r.Intn(1000)), uint64(r.Intn(100)), uint64(r.Intn(100))}}}
		default:
			u.Values[id] = peerwire.Value{Ints: []uint64{[]uint64{0, 1, uint64(r.Intn(100)), 1<<32 - 1, 1<<63 + 5}[r.Intn(5)]}}
		}
	}
	return u
}
