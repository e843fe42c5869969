package peerwire

import (
	"fmt"
	"sort"
)

// Key types on the wire.
const (
	KeySInt   uint64 = 2
	KeyIPv4   uint64 = 4
	KeyIPv6   uint64 = 5
	KeyString uint64 = 6
	KeyBinary uint64 = 7
)

// Kind is how a stored data type is encoded.
type Kind int

const (
	KindInt  Kind = iota // one varint (signed, unsigned, 64-bit counters)
	KindFreq             // a frequency counter: tick age, current, previous (3 varints)
	KindDict             // a length-prefixed dictionary blob (server_key)
)

// DataType is a stored data type of a stick table, by its wire id.
type DataType struct {
	ID    int
	Name  string
	Kind  Kind
	Array bool
}

// DataTypes are the data types, by wire id (the same from 2.6 to 3.x;
// 3.0 appended glitch_cnt and glitch_rate).
var DataTypes = []DataType{
	{0, "server_id", KindInt, false}, {1, "gpt0", KindInt, false}, {2, "gpc0", KindInt, false},
	{3, "gpc0_rate", KindFreq, false}, {4, "conn_cnt", KindInt, false}, {5, "conn_rate", KindFreq, false},
	{6, "conn_cur", KindInt, false}, {7, "sess_cnt", KindInt, false}, {8, "sess_rate", KindFreq, false},
	{9, "http_req_cnt", KindInt, false}, {10, "http_req_rate", KindFreq, false}, {11, "http_err_cnt", KindInt, false},
	{12, "http_err_rate", KindFreq, false}, {13, "bytes_in_cnt", KindInt, false}, {14, "bytes_in_rate", KindFreq, false},
	{15, "bytes_out_cnt", KindInt, false}, {16, "bytes_out_rate", KindFreq, false}, {17, "gpc1", KindInt, false},
	{18, "gpc1_rate", KindFreq, false}, {19, "server_key", KindDict, false}, {20, "http_fail_cnt", KindInt, false},
	{21, "http_fail_rate", KindFreq, false}, {22, "gpt", KindInt, true}, {23, "gpc", KindInt, true},
	{24, "gpc_rate", KindFreq, true}, {25, "glitch_cnt", KindInt, false}, {26, "glitch_rate", KindFreq, false},
}

// DataTypeByName finds a data type ("gpc0", "conn_cnt", ...).
func DataTypeByName(name string) (DataType, bool) {
	for _, d := range DataTypes {
		if d.Name == name {
			return d, true
		}
	}
	return DataType{}, false
}

// TableDef is a table definition message: it names the table the next
// updates belong to and which data they carry.
type TableDef struct {
	ID      uint64 // the sender's id for the table
	Name    string
	KeyType uint64
	KeyLen  uint64
	Types   []int          // stored data type ids, ascending
	Expire  uint64         // entries' lifetime, ms
	Period  map[int]uint64 // frequency counters' period, ms
	Elems   map[int]uint64 // array types' number of elements
}

func (d TableDef) has(id int) bool {
	for _, t := range d.Types {
		if t == id {
			return true
		}
	}
	return false
}

// Encode builds the definition message.
func (d TableDef) Encode() Message {
	b := AppendVarint(nil, d.ID)
	b = AppendVarint(b, uint64(len(d.Name)))
	b = append(b, d.Name...)
	b = AppendVarint(b, d.KeyType)
	b = AppendVarint(b, d.KeyLen)
	var mask uint64
	var params []byte
	types := append([]int(nil), d.Types...)
	sort.Ints(types)
	for _, id := range types {
		mask |= 1 << uint(id)
		dt := DataTypes[id]
		switch {
		case dt.Array:
			params = AppendVarint(params, uint64(id))
			params = AppendVarint(params, d.Elems[id])
			if dt.Kind == KindFreq {
				params = AppendVarint(params, d.Period[id])
			}
		case dt.Kind == KindFreq:
			params = AppendVarint(params, uint64(id))
			params = AppendVarint(params, d.Period[id])
		}
	}
	b = AppendVarint(b, mask)
	b = AppendVarint(b, d.Expire)
	b = append(b, params...)
	return Message{Class: ClassStickTable, Type: StktDefine, Body: b}
}

// ParseTableDef decodes a definition message body.
func ParseTableDef(body []byte) (TableDef, error) {
	r := &reader{b: body}
	d := TableDef{Period: map[int]uint64{}, Elems: map[int]uint64{}}
	d.ID = r.varint()
	d.Name = string(r.bytes(r.varint()))
	d.KeyType = r.varint()
	d.KeyLen = r.varint()
	mask := r.varint()
	d.Expire = r.varint()
	if r.err != nil {
		return d, fmt.Errorf("table definition: %w", r.err)
	}
	for id := 0; id < 64; id++ {
		if mask&(1<<uint(id)) == 0 {
			continue
		}
		if id >= len(DataTypes) {
			return d, fmt.Errorf("table definition %q: unknown data type %d", d.Name, id)
		}
		d.Types = append(d.Types, id)
	}
	// Parameters follow, each set prefixed by its data type id.
	for len(r.b) > 0 && r.err == nil {
		id := int(r.varint())
		if id >= len(DataTypes) || !d.has(id) {
			return d, fmt.Errorf("table definition %q: parameters for data type %d it does not store", d.Name, id)
		}
		dt := DataTypes[id]
		if dt.Array {
			d.Elems[id] = r.varint()
		}
		if dt.Kind == KindFreq {
			d.Period[id] = r.varint()
		}
	}
	if r.err != nil {
		return d, fmt.Errorf("table definition %q: %w", d.Name, r.err)
	}
	return d, nil
}

// Value is one stored datum of an update.
type Value struct {
	Ints []uint64    // KindInt: one value, or one per array element
	Freq [][3]uint64 // KindFreq: (tick age, current, previous) per element
	Dict []byte      // KindDict: the raw blob (empty: no entry)
}

// Update is an entry update.
type Update struct {
	HasID  bool   // full update (with its id) or incremental
	ID     uint32 // update id
	Timed  bool
	Expire uint32 // ms left, timed updates only
	Key    []byte // raw key: 4 bytes for ipv4, ...
	Values map[int]Value
}

// Int is an integer datum by name (gpc0, conn_cnt...), false if absent.
func (u Update) Int(name string) (uint64, bool) {
	dt, ok := DataTypeByName(name)
	if !ok {
		return 0, false
	}
	v, ok := u.Values[dt.ID]
	if !ok || len(v.Ints) == 0 {
		return 0, false
	}
	return v.Ints[0], true
}

// KeyString renders the key as `show table` does for ip and string keys.
func (u Update) KeyString(d TableDef) string {
	switch d.KeyType {
	case KeyIPv4:
		if len(u.Key) == 4 {
			return fmt.Sprintf("%d.%d.%d.%d", u.Key[0], u.Key[1], u.Key[2], u.Key[3])
		}
	case KeyString:
		return string(u.Key)
	case KeySInt:
		if len(u.Key) == 4 {
			return fmt.Sprint(int32(uint32(u.Key[0])<<24 | uint32(u.Key[1])<<16 | uint32(u.Key[2])<<8 | uint32(u.Key[3])))
		}
	}
	return fmt.Sprintf("%x", u.Key)
}

func (u Update) msgType() byte {
	switch {
	case u.Timed && u.HasID:
		return StktUpdateTimed
	case u.Timed:
		return StktIncUpdateTimed
	case u.HasID:
		return StktUpdate
	}
	return StktIncUpdate
}

// Encode builds the update message for a table.
func (u Update) Encode(d TableDef) (Message, error) {
	var b []byte
	if u.HasID {
		b = appendU32(b, u.ID)
	}
	if u.Timed {
		b = appendU32(b, u.Expire)
	}
	switch d.KeyType {
	case KeyString:
		b = AppendVarint(b, uint64(len(u.Key)))
		b = append(b, u.Key...)
	case KeySInt:
		if len(u.Key) != 4 {
			return Message{}, fmt.Errorf("integer key of %d bytes", len(u.Key))
		}
		b = append(b, u.Key...)
	default:
		if uint64(len(u.Key)) != d.KeyLen {
			return Message{}, fmt.Errorf("key of %d bytes for a table of %d-byte keys", len(u.Key), d.KeyLen)
		}
		b = append(b, u.Key...)
	}
	for _, id := range d.Types {
		dt := DataTypes[id]
		v := u.Values[id]
		n := 1
		if dt.Array {
			n = int(d.Elems[id])
		}
		switch dt.Kind {
		case KindInt:
			for i := 0; i < n; i++ {
				var x uint64
				if i < len(v.Ints) {
					x = v.Ints[i]
				}
				b = AppendVarint(b, x)
			}
		case KindFreq:
			for i := 0; i < n; i++ {
				var f [3]uint64
				if i < len(v.Freq) {
					f = v.Freq[i]
				}
				b = AppendVarint(AppendVarint(AppendVarint(b, f[0]), f[1]), f[2])
			}
		case KindDict:
			b = AppendVarint(b, uint64(len(v.Dict)))
			b = append(b, v.Dict...)
		}
	}
	return Message{Class: ClassStickTable, Type: u.msgType(), Body: b}, nil
}

// ParseUpdate decodes an update message of a table.
func ParseUpdate(m Message, d TableDef) (Update, error) {
	u := Update{Values: map[int]Value{}}
	switch m.Type {
	case StktUpdate:
		u.HasID = true
	case StktIncUpdate:
	case StktUpdateTimed:
		u.HasID, u.Timed = true, true
	case StktIncUpdateTimed:
		u.Timed = true
	default:
		return u, fmt.Errorf("not an update: %s", m)
	}
	r := &reader{b: m.Body}
	if u.HasID {
		u.ID = r.u32()
	}
	if u.Timed {
		u.Expire = r.u32()
	}
	switch d.KeyType {
	case KeyString:
		u.Key = r.bytes(r.varint())
	case KeySInt:
		u.Key = r.bytes(4)
	default:
		u.Key = r.bytes(d.KeyLen)
	}
	for _, id := range d.Types {
		dt := DataTypes[id]
		n := uint64(1)
		if dt.Array {
			n = d.Elems[id]
		}
		if n > 1024 {
			return u, fmt.Errorf("update of %q: array of %d elements", d.Name, n)
		}
		var v Value
		switch dt.Kind {
		case KindInt:
			for i := uint64(0); i < n; i++ {
				v.Ints = append(v.Ints, r.varint())
			}
		case KindFreq:
			for i := uint64(0); i < n; i++ {
				v.Freq = append(v.Freq, [3]uint64{r.varint(), r.varint(), r.varint()})
			}
		case KindDict:
			v.Dict = r.bytes(r.varint())
		}
		u.Values[id] = v
	}
	if r.err != nil {
		return u, fmt.Errorf("update of %q: %w", d.Name, r.err)
	}
	if len(r.b) != 0 {
		return u, fmt.Errorf("update of %q: %d bytes left over", d.Name, len(r.b))
	}
	return u, nil
}

// Ack acknowledges updates of a table up to an update id.
type Ack struct {
	TableID  uint64 // the receiver's id for the table (its sender id)
	UpdateID uint32
}

// Encode builds the ack message.
func (a Ack) Encode() Message {
	return Message{Class: ClassStickTable, Type: StktAck, Body: appendU32(AppendVarint(nil, a.TableID), a.UpdateID)}
}

// ParseAck decodes an ack body.
func ParseAck(body []byte) (Ack, error) {
	r := &reader{b: body}
	a := Ack{TableID: r.varint(), UpdateID: r.u32()}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes left over", len(r.b))
	}
	if r.err != nil {
		return a, fmt.Errorf("ack: %w", r.err)
	}
	return a, nil
}

// Switch selects the table the next updates belong to.
type Switch struct{ TableID uint64 }

// Encode builds the switch message.
func (s Switch) Encode() Message {
	return Message{Class: ClassStickTable, Type: StktSwitch, Body: AppendVarint(nil, s.TableID)}
}

// ParseSwitch decodes a switch body.
func ParseSwitch(body []byte) (Switch, error) {
	r := &reader{b: body}
	s := Switch{TableID: r.varint()}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes left over", len(r.b))
	}
	if r.err != nil {
		return s, fmt.Errorf("switch: %w", r.err)
	}
	return s, nil
}
