// Package peerwire is HAProxy's peers protocol (doc/peers-v2.0.txt in the
// HAProxy source, protocol version 2.1): the text handshake, then binary
// messages of a class byte, a type byte and, for types >= 128, a varint
// length and a body. It encodes and decodes control messages, table
// definitions, updates and acks, so a suite can act as a peer and observe
// replication without a second HAProxy, and it can send malformed messages
// on purpose.
package peerwire

import (
	"errors"
	"fmt"
)

// Message classes.
const (
	ClassControl    byte = 0
	ClassError      byte = 1
	ClassStickTable byte = 10
	ClassReserved   byte = 255
)

// Control message types.
const (
	CtrlResyncRequest  byte = 0
	CtrlResyncFinished byte = 1
	CtrlResyncPartial  byte = 2
	CtrlResyncConfirm  byte = 3
	CtrlHeartbeat      byte = 4
)

// Error message types.
const (
	ErrProtocol  byte = 0
	ErrSizeLimit byte = 1
)

// Stick-table message types; all carry a body (bit 7 set).
const (
	StktUpdate         byte = 0x80
	StktIncUpdate      byte = 0x81
	StktDefine         byte = 0x82
	StktSwitch         byte = 0x83
	StktAck            byte = 0x84
	StktUpdateTimed    byte = 0x85
	StktIncUpdateTimed byte = 0x86
)

// MaxBody bounds a body length the decoder accepts (HAProxy's buffers are
// far smaller); a larger announced length is an error, not an allocation.
const MaxBody = 1 << 20

// ErrShort means the input ended inside a varint or a message.
var ErrShort = errors.New("peers: truncated input")

// AppendVarint appends HAProxy's variable-length encoding of v: values
// below 240 take one byte; above, the first byte carries 4 bits ORed with
// 0xf0 and each next byte 7 bits, bit 7 set on all but the last.
func AppendVarint(b []byte, v uint64) []byte {
	if v < 240 {
		return append(b, byte(v))
	}
	b = append(b, byte(v)|0xf0)
	v = (v - 240) >> 4
	for v >= 128 {
		b = append(b, byte(v)|0x80)
		v = (v - 128) >> 7
	}
	return append(b, byte(v))
}

// Varint decodes one varint, returning it and the bytes it took.
func Varint(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, ErrShort
	}
	v := uint64(b[0])
	n := 1
	if v < 240 {
		return v, 1, nil
	}
	shift := uint(4)
	for {
		if n >= len(b) {
			return 0, 0, ErrShort
		}
		if shift > 63 {
			return 0, 0, fmt.Errorf("peers: varint longer than 64 bits")
		}
		c := b[n]
		n++
		v += uint64(c) << shift
		shift += 7
		if c < 128 {
			return v, n, nil
		}
	}
}

// Message is one framed message.
type Message struct {
	Class byte
	Type  byte
	Body  []byte // only for types >= 128
}

// HasBody says whether a message of this type carries a length and body.
func HasBody(typ byte) bool { return typ >= 128 }

// Encode frames the message.
func (m Message) Encode() []byte {
	b := []byte{m.Class, m.Type}
	if HasBody(m.Type) {
		b = AppendVarint(b, uint64(len(m.Body)))
		b = append(b, m.Body...)
	}
	return b
}

// DecodeMessage reads one message from the start of b, returning it and
// the bytes it took. ErrShort means more input is needed.
func DecodeMessage(b []byte) (Message, int, error) {
	if len(b) < 2 {
		return Message{}, 0, ErrShort
	}
	m := Message{Class: b[0], Type: b[1]}
	if !HasBody(m.Type) {
		return m, 2, nil
	}
	l, n, err := Varint(b[2:])
	if err != nil {
		return Message{}, 0, err
	}
	if l > MaxBody {
		return Message{}, 0, fmt.Errorf("peers: message body of %d bytes announced (limit %d)", l, MaxBody)
	}
	end := 2 + n + int(l)
	if len(b) < end {
		return Message{}, 0, ErrShort
	}
	m.Body = append([]byte(nil), b[2+n:end]...)
	return m, end, nil
}

// String names the message for transcripts.
func (m Message) String() string {
	name := fmt.Sprintf("class %d type %d", m.Class, m.Type)
	switch m.Class {
	case ClassControl:
		if int(m.Type) < len(ctrlNames) {
			name = "control " + ctrlNames[m.Type]
		}
	case ClassError:
		name = fmt.Sprintf("error %d", m.Type)
	case ClassStickTable:
		if s, ok := stktNames[m.Type]; ok {
			name = "table " + s
		}
	}
	if HasBody(m.Type) {
		return fmt.Sprintf("%s (%d bytes)", name, len(m.Body))
	}
	return name
}

var ctrlNames = []string{"resync-request", "resync-finished", "resync-partial", "resync-confirm", "heartbeat"}

var stktNames = map[byte]string{StktUpdate: "update", StktIncUpdate: "incremental-update", StktDefine: "definition",
	StktSwitch: "switch", StktAck: "ack", StktUpdateTimed: "timed-update", StktIncUpdateTimed: "timed-incremental-update"}

// Control returns a control message of a type (resync request, heartbeat...).
func Control(typ byte) Message { return Message{Class: ClassControl, Type: typ} }

// reader walks a body.
type reader struct {
	b   []byte
	err error
}

func (r *reader) varint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n, err := Varint(r.b)
	if err != nil {
		r.err = err
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if uint64(len(r.b)) < n {
		r.err = ErrShort
		return nil
	}
	out := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return out
}

func (r *reader) u32() uint32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func appendU32(b []byte, v uint32) []byte {
	return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}
