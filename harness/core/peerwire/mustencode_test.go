package peerwire

import (
	"reflect"
	"testing"
)

func TestMustEncode(t *testing.T) {
	d := TableDef{ID: 1, Name: "/t", KeyType: KeyString, KeyLen: 33, Types: []int{2}, Expire: 10000}
	u := Update{Key: []byte("ce-001"), Values: map[int]Value{2: {Ints: []uint64{4}}}, Timed: true, Expire: 1<<31 - 1}
	want, err := u.Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	if got := u.MustEncode(d); !reflect.DeepEqual(got, want) || got.Type != StktIncUpdateTimed {
		t.Errorf("MustEncode = %v, want %v", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("an integer key of 3 bytes did not panic")
		}
	}()
	d.KeyType = KeySInt
	Update{Key: []byte("abc")}.MustEncode(d)
}
