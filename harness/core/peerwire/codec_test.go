package peerwire

import (
	"bytes"
	"reflect"
	"testing"
)

func TestVarintBoundaries(t *testing.T) {
	// The boundaries of doc/peers-v2.0.txt: 240, 2288, 264432, 33818864.
	cases := map[uint64][]byte{
		0:        {0x00},
		239:      {0xef},
		240:      {0xf0, 0x00},
		2287:     {0xff, 0x7f},
		2288:     {0xf0, 0x80, 0x00},
		264431:   {0xff, 0xff, 0x7f},
		264432:   {0xf0, 0x80, 0x80, 0x00},
		33818864: {0xf0, 0x80, 0x80, 0x80, 0x00},
	}
	for v, want := range cases {
		got := AppendVarint(nil, v)
		if !bytes.Equal(got, want) {
			t.Errorf("AppendVarint(%d) = % x, want % x", v, got, want)
		}
		back, n, err := Varint(got)
		if err != nil || back != v || n != len(got) {
			t.Errorf("Varint(% x) = %d, %d, %v", got, back, n, err)
		}
	}
	if _, _, err := Varint([]byte{0xf0}); err != ErrShort {
		t.Errorf("truncated varint: %v", err)
	}
	for _, v := range []uint64{1 << 32, 1<<63 + 12345, ^uint64(0)} {
		if back, _, err := Varint(AppendVarint(nil, v)); err != nil || back != v {
			t.Errorf("round trip %d: %d %v", v, back, err)
		}
	}
}

func TestMessageFraming(t *testing.T) {
	hb := Control(CtrlHeartbeat)
	if got := hb.Encode(); !bytes.Equal(got, []byte{0, 4}) {
		t.Errorf("heartbeat = % x", got)
	}
	body := bytes.Repeat([]byte{7}, 300)
	m := Message{Class: ClassStickTable, Type: StktUpdate, Body: body}
	enc := m.Encode()
	if !bytes.Equal(enc[:4], []byte{10, 0x80, 0xfc, 0x03}) { // 300 = 0xfc, 0x03
		t.Errorf("header = % x", enc[:4])
	}
	got, n, err := DecodeMessage(append(enc, 0, 4))
	if err != nil || n != len(enc) || !reflect.DeepEqual(got, m) {
		t.Errorf("DecodeMessage = %v %d %v", got, n, err)
	}
	if _, _, err := DecodeMessage(enc[:len(enc)-1]); err != ErrShort {
		t.Errorf("truncated message: %v", err)
	}
	if _, _, err := DecodeMessage([]byte{10, 0x80, 0xff, 0xff, 0xff, 0x7f}); err == nil || err == ErrShort {
		t.Errorf("oversized body accepted: %v", err)
	}
}

var markerDef = TableDef{ID: 1, Name: "sync/marker", KeyType: KeyIPv4, KeyLen: 4, Types: []int{2, 4, 10}, Expire: 3600000,
	Period: map[int]uint64{10: 10000}, Elems: map[int]uint64{}}

func TestTableDefRoundTrip(t *testing.T) {
	m := markerDef.Encode()
	got, err := ParseTableDef(m.Body)
	if err != nil || !reflect.DeepEqual(got, markerDef) {
		t.Fatalf("ParseTableDef = %+v, %v", got, err)
	}
	arr := TableDef{ID: 300, Name: "t", KeyType: KeyString, KeyLen: 32, Types: []int{23, 24}, Period: map[int]uint64{24: 1000}, Elems: map[int]uint64{23: 3, 24: 2}}
	if got, err := ParseTableDef(arr.Encode().Body); err != nil || !reflect.DeepEqual(got, arr) {
		t.Fatalf("array def = %+v, %v", got, err)
	}
}

func TestUpdateRoundTrip(t *testing.T) {
	u := Update{HasID: true, ID: 7, Timed: true, Expire: 3599000, Key: []byte{192, 0, 2, 1},
		Values: map[int]Value{2: {Ints: []uint64{1}}, 4: {Ints: []uint64{300}}, 10: {Freq: [][3]uint64{{5, 2, 1}}}}}
	m, err := u.Encode(markerDef)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseUpdate(m, markerDef)
	if err != nil || !reflect.DeepEqual(got, u) {
		t.Fatalf("ParseUpdate = %+v, %v", got, err)
	}
	if v, ok := got.Int("gpc0"); !ok || v != 1 || got.KeyString(markerDef) != "192.0.2.1" {
		t.Errorf("gpc0 = %d %v, key %s", v, ok, got.KeyString(markerDef))
	}
	if _, err := u.Encode(TableDef{KeyType: KeyIPv6, KeyLen: 16}); err == nil {
		t.Error("a 4-byte key encoded for a 16-byte table")
	}
	m.Body = m.Body[:len(m.Body)-1]
	if _, err := ParseUpdate(m, markerDef); err == nil {
		t.Error("truncated update accepted")
	}
}

func TestAckSwitchRoundTrip(t *testing.T) {
	a := Ack{TableID: 1000, UpdateID: 0xdeadbeef}
	if got, err := ParseAck(a.Encode().Body); err != nil || got != a {
		t.Errorf("ack = %+v %v", got, err)
	}
	s := Switch{TableID: 3}
	if got, err := ParseSwitch(s.Encode().Body); err != nil || got != s {
		t.Errorf("switch = %+v %v", got, err)
	}
}
