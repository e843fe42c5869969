// Package obs holds what harp observed of HAProxy, typed so that a failure
// to observe can never pass for an answer: an observation is a value
// HAProxy gave, HAProxy's refusal, or harp's own failure (I/O, a timeout,
// Docker), which is unknown. Judges read facts made of these; the one
// shared rule (Unknowns, applied by the trial loop and the chaos checker)
// makes any trial with an unknown observation inconclusive, whatever its
// judge concluded, so no suite's care is needed to keep a harness fault
// from becoming a verdict. It depends on the standard library only.
package obs

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// State says what kind of observation it is.
type State string

const (
	Seen    State = "seen"    // HAProxy answered; Value holds the answer
	Refused State = "refused" // HAProxy answered with a refusal; Why holds it
	Failed  State = "failed"  // harp could not observe; Why says why
)

// Of is one observation of a T.
type Of[T any] struct {
	State State  `json:"state"`
	Value T      `json:"value,omitempty"`
	Why   string `json:"why,omitempty"`
}

// Value is an answer HAProxy gave.
func Value[T any](v T) Of[T] { return Of[T]{State: Seen, Value: v} }

// Failure is harp failing to observe: the value is unknown.
func Failure[T any](format string, args ...any) Of[T] {
	return Of[T]{State: Failed, Why: fmt.Sprintf(format, args...)}
}

// Refusal is HAProxy refusing the command (an error message from its CLI).
func Refusal[T any](answer string) Of[T] { return Of[T]{State: Refused, Why: answer} }

// HAProxyRefusal is implemented by errors that carry HAProxy's own refusal
// (node.Refused): the command reached HAProxy and it said no.
type HAProxyRefusal interface{ RefusedBy() string }

// From classifies a toolkit read: no error is a value, an error carrying
// HAProxy's refusal is a refusal, any other error is harp's failure.
// Used as obs.From(n.Table(ctx, pid, name)).
func From[T any](v T, err error) Of[T] {
	if err == nil {
		return Value(v)
	}
	var r HAProxyRefusal
	if errors.As(err, &r) {
		return Refusal[T](r.RefusedBy())
	}
	return Failure[T]("%v", err)
}

// Get is the value and whether HAProxy gave one.
func (o Of[T]) Get() (T, bool) { return o.Value, o.State == Seen }

// Text is an observation for a note: the value as seen renders it (nil:
// fmt.Sprint), "refused: why", or "unknown (why)".
func Text[T any](o Of[T], seen func(T) string) string {
	if v, ok := o.Get(); ok && seen == nil {
		return fmt.Sprint(v)
	} else if ok {
		return seen(v)
	}
	if o.State == Refused {
		return "refused: " + o.Why
	}
	return "unknown (" + o.Unknown() + ")"
}

// Known says whether HAProxy answered (a value or a refusal).
func (o Of[T]) Known() bool { return o.State == Seen || o.State == Refused }

// Unknown is why the value is unknown ("" when HAProxy answered). The zero
// Of was never observed at all: unknown too.
func (o Of[T]) Unknown() string {
	switch o.State {
	case Seen, Refused:
		return ""
	case Failed:
		if o.Why == "" {
			return "harp failed to observe it"
		}
		return o.Why
	}
	return "never observed"
}

// Optional marks an observation the judge does not need: when it was
// never made (the zero value), Unknowns does not count it. A failed one
// still counts.
type Optional[T any] struct{ Of[T] }

// MarshalJSON keeps an optional observation that was never made out of
// the evidence's noise.
func (o Optional[T]) MarshalJSON() ([]byte, error) {
	if o.State == "" {
		return []byte("null"), nil
	}
	return json.Marshal(o.Of)
}

// Exit is a process under test found gone (a master that exited, a worker
// that died): HAProxy's own answer, by dying. Reads that fail after it
// are explained by it, not harp's faults.
type Exit struct {
	Process string `json:"process"`
	Code    int    `json:"code,omitempty"`
	Signal  string `json:"signal,omitempty"`
}

func (e Exit) String() string {
	s := e.Process + " exited"
	if e.Signal != "" {
		s += " on " + e.Signal
	} else {
		s += fmt.Sprintf(" with code %d", e.Code)
	}
	return s
}

// Unknowns lists every unknown observation inside facts (a struct, a
// pointer, a slice, a map, or one observation; inside a seen value too),
// walked by reflection, each as "path: why". It is the one rule every
// judge is held to: facts with an unknown observation decide nothing.
//
// A process under test seen gone (an Of[Exit] with a value) explains the
// failed reads beside it: Unknowns then reports none. Judged is the
// stricter form verdict.Decide uses.
func Unknowns(facts any) []string {
	u, exited := Judged(facts)
	if exited {
		return nil
	}
	return u
}

// Judged is every unknown observation in facts, and whether a process
// under test was seen gone. The exit explains the unknowns only beside the
// violation it is: a trial that holds it and no violation still has them.
func Judged(facts any) (unknowns []string, exited bool) {
	walk(reflect.ValueOf(facts), "", &unknowns, 0, &exited)
	sort.Strings(unknowns)
	return unknowns, exited
}

var pkgPath = reflect.TypeFor[State]().PkgPath()

// kind says whether t is one of this package's observation types: only
// those, not a type that embeds one (its promoted methods would hide its
// other fields).
func kind(t reflect.Type) (of, optional bool) {
	if t.PkgPath() != pkgPath {
		return false, false
	}
	return strings.HasPrefix(t.Name(), "Of["), strings.HasPrefix(t.Name(), "Optional[")
}

// why reads an Of's state from its fields (no Interface: the value may
// come through an unexported embedded field): "" when HAProxy answered.
func why(of reflect.Value) string {
	o := Of[struct{}]{State: State(of.FieldByName("State").String()), Why: of.FieldByName("Why").String()}
	return o.Unknown()
}

func walk(v reflect.Value, path string, out *[]string, depth int, exited *bool) {
	if !v.IsValid() || depth > 32 {
		return
	}
	if of, optional := kind(v.Type()); of || optional {
		if optional {
			v = v.Field(0)
			if v.FieldByName("State").String() == "" {
				return // never made, and not needed
			}
		}
		if w := why(v); w != "" {
			*out = append(*out, strings.TrimPrefix(path, ".")+": "+w)
			return
		}
		val := v.FieldByName("Value")
		if State(v.FieldByName("State").String()) == Seen && val.Type() == reflect.TypeFor[Exit]() && val.FieldByName("Process").String() != "" {
			*exited = true
		}
		walk(val, path, out, depth+1, exited) // a seen value may hold observations of its own
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem(), path, out, depth+1, exited)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue // an embedded struct's fields are promoted, exported or not
			}
			name := path + "." + fieldName(f)
			if f.Anonymous && f.Tag.Get("json") == "" {
				name = path // promoted: its fields read as the outer struct's
			}
			walk(v.Field(i), name, out, depth+1, exited)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out, depth+1, exited)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			walk(iter.Value(), fmt.Sprintf("%s[%v]", path, iter.Key()), out, depth+1, exited)
		}
	}
}

// fieldName is the JSON name where there is one: the path reads like the
// evidence file.
func fieldName(f reflect.StructField) string {
	if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" && tag != "-" {
		return tag
	}
	return f.Name
}

// Reason is the one-line text of a trial's unknown observations, for its
// unmet precondition.
func Reason(unknowns []string) string {
	if len(unknowns) == 0 {
		return ""
	}
	s := "harp could not observe " + unknowns[0]
	if len(unknowns) > 1 {
		s += fmt.Sprintf(" (and %d more)", len(unknowns)-1)
	}
	return s
}

// Opt makes an observation optional (see Optional).
func Opt[T any](o Of[T]) Optional[T] { return Optional[T]{o} }
