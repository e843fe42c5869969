package peerwire

import (
	"bytes"
	"reflect"
	"testing"
)

// The decoder never panics on any input, and what it decodes re-encodes to
// a message that decodes the same.
func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte{0, 4})
	f.Add(markerDef.Encode().Encode())
	f.Add([]byte{10, 0x80, 0xf0})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, n, err := DecodeMessage(b)
		if err != nil {
			return
		}
		if n > len(b) {
			t.Fatalf("consumed %d of %d bytes", n, len(b))
		}
		back, _, err := DecodeMessage(m.Encode())
		if err != nil || !reflect.DeepEqual(back, m) {
			t.Fatalf("re-decoded %+v, %v; want %+v", back, err, m)
		}
		// Typed decoders never panic either.
		ParseTableDef(m.Body)
		ParseUpdate(m, markerDef)
		ParseAck(m.Body)
		ParseSwitch(m.Body)
	})
}

// decode(encode(m)) == m for any framed message.
func FuzzMessageRoundTrip(f *testing.F) {
	f.Add(byte(10), byte(0x82), []byte("body"))
	f.Add(byte(0), byte(4), []byte{})
	f.Fuzz(func(t *testing.T, class, typ byte, body []byte) {
		m := Message{Class: class, Type: typ}
		if HasBody(typ) {
			m.Body = append([]byte{}, body...)
		}
		got, n, err := DecodeMessage(m.Encode())
		if err != nil || n != len(m.Encode()) || got.Class != m.Class || got.Type != m.Type || !bytes.Equal(got.Body, m.Body) {
			t.Fatalf("round trip of %+v: %+v %d %v", m, got, n, err)
		}
	})
}

func FuzzVarint(f *testing.F) {
	f.Add(uint64(239))
	f.Add(uint64(2288))
	f.Fuzz(func(t *testing.T, v uint64) {
		got, n, err := Varint(AppendVarint(nil, v))
		if err != nil || got != v || n != len(AppendVarint(nil, v)) {
			t.Fatalf("varint %d: %d %d %v", v, got, n, err)
		}
	})
}

// Updates of the marker table: decode(encode(u)) == u.
func FuzzUpdateRoundTrip(f *testing.F) {
	f.Add(uint32(1), true, uint32(1000), []byte{192, 0, 2, 1}, uint64(1), uint64(2), uint64(3), uint64(4), uint64(5))
	f.Fuzz(func(t *testing.T, id uint32, hasID bool, exp uint32, key []byte, gpc0, conn, a, b, c uint64) {
		if len(key) != 4 {
			return
		}
		u := Update{HasID: hasID, Timed: true, Expire: exp, Key: key,
			Values: map[int]Value{2: {Ints: []uint64{gpc0}}, 4: {Ints: []uint64{conn}}, 10: {Freq: [][3]uint64{{a, b, c}}}}}
		if hasID {
			u.ID = id
		}
		m, err := u.Encode(markerDef)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseUpdate(m, markerDef)
		if err != nil || !reflect.DeepEqual(got, u) {
			t.Fatalf("round trip: %+v %v; want %+v", got, err, u)
		}
	})
}
