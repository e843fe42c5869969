package obs

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

type refusal string

func (r refusal) Error() string     { return string(r) }
func (r refusal) RefusedBy() string { return string(r) }

func TestFrom(t *testing.T) {
	if o := From(3, nil); o.State != Seen || o.Value != 3 || o.Unknown() != "" {
		t.Fatalf("value: %+v", o)
	}
	if o := From(0, fmt.Errorf("set: %w", refusal("Permission denied"))); o.State != Refused || o.Why != "Permission denied" || !o.Known() {
		t.Fatalf("refusal: %+v", o)
	}
	o := From([]string(nil), errors.New("i/o timeout"))
	if o.State != Failed || o.Known() || o.Unknown() != "i/o timeout" {
		t.Fatalf("failure: %+v", o)
	}
	if _, ok := o.Get(); ok {
		t.Fatal("a failure has no value")
	}
	var never Of[int]
	if never.Unknown() == "" {
		t.Fatal("an observation never made is unknown")
	}
}

type inner struct {
	Keys Of[[]string] `json:"keys"`
}

type facts struct {
	Name    string
	Mesh    Of[bool]           `json:"mesh"`
	Tables  map[string]Of[int] `json:"tables"`
	Reads   []inner            `json:"reads"`
	Ptr     *inner             `json:"ptr"`
	Later   Optional[int]      `json:"later"`
	Failed  Optional[int]      `json:"failed_optional"`
	private Of[int]
}

func TestUnknowns(t *testing.T) {
	f := facts{
		Mesh:   Value(true),
		Tables: map[string]Of[int]{"a": Value(1), "b": Failure[int]("show table b: EOF")},
		Reads:  []inner{{Keys: Value([]string{"k"})}, {Keys: Failure[[]string]("timeout")}},
		Ptr:    &inner{},
		Failed: Optional[int]{Failure[int]("refused connection")},
	}
	got := Unknowns(&f)
	want := []string{
		"failed_optional: refused connection",
		"ptr.keys: never observed",
		"reads[1].keys: timeout",
		"tables[b]: show table b: EOF",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if u := Unknowns(facts{Mesh: Value(false), Ptr: &inner{Keys: Refusal[[]string]("no such table")}}); len(u) != 0 {
		t.Fatalf("a refusal is HAProxy's answer, a false is a value: %q", u)
	}
	if Reason(got) != "harp could not observe failed_optional: refused connection (and 3 more)" {
		t.Fatal(Reason(got))
	}
	if Unknowns(nil) != nil || Unknowns("text") != nil {
		t.Fatal("nothing to walk")
	}
}

func TestExitExplainsFailedReads(t *testing.T) {
	type facts struct {
		Master  Of[Exit] `json:"master"`
		Counted Of[int]  `json:"counted"`
	}
	f := facts{Master: Value(Exit{Process: "master", Signal: "SIGSEGV"}), Counted: Failure[int]("show proc: connection refused")}
	if u := Unknowns(f); u != nil {
		t.Fatalf("a master seen dead explains the failed show proc: %q", u)
	}
	f.Master = Value(Exit{}) // alive: nothing explains the failure
	if u := Unknowns(f); len(u) != 1 {
		t.Fatalf("got %q", u)
	}
	if s := (Exit{Process: "master", Signal: "SIGSEGV"}).String(); s != "master exited on SIGSEGV" {
		t.Fatal(s)
	}
}

// What the review found the walk missed, and the exit's reach.
func TestWalkReachesEveryObservation(t *testing.T) {
	type inner struct {
		Keys Of[int] `json:"keys"`
	}
	type emb struct {
		Of[int]
		B Of[int] `json:"b"`
	}
	type facts struct {
		inner
		E      emb              `json:"e"`
		Nested Of[[]Of[string]] `json:"nested"`
	}
	f := facts{inner: inner{Keys: Failure[int]("show table: EOF")}, E: emb{Of: Value(1)},
		Nested: Value([]Of[string]{Value("a"), Failure[string]("timeout")})}
	got := Unknowns(f)
	want := []string{"e.b: never observed", "keys: show table: EOF", "nested[1]: timeout"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	type gone struct {
		Master Of[Exit] `json:"master"`
		HTTP   Of[int]  `json:"http"`
	}
	u, exited := Judged(gone{Master: Value(Exit{Process: "master", Code: 1}), HTTP: Failure[int]("docker timeout")})
	if !exited || len(u) != 1 {
		t.Fatalf("Judged keeps the unknowns beside an exit: %q %v", u, exited)
	}
}

func TestText(t *testing.T) {
	double := func(n int) string { return fmt.Sprint(2 * n) }
	for _, c := range []struct {
		o    Of[int]
		want string
	}{
		{Value(21), "42"},
		{Refusal[int]("Permission denied"), "refused: Permission denied"},
		{Failure[int]("reading: %s", "EOF"), "unknown (reading: EOF)"},
		{Of[int]{}, "unknown (never observed)"},
	} {
		if got := Text(c.o, double); got != c.want {
			t.Errorf("Text(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
	if got := Text(Value("as is"), nil); got != "as is" {
		t.Errorf("Text with no renderer = %q", got)
	}
}
