package failedreload

import (
	"strings"
	"testing"
)

func TestConfigs(t *testing.T) {
	good, err := Config(Break{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range Breaks {
		bad, err := Config(b)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(bad, "    "+b.Line+"\n") || strings.Contains(good, b.Line) {
			t.Errorf("%s: the break is not (only) in the broken config:\n%s", b.Name, bad)
		}
	}
}

func TestSelectBreaks(t *testing.T) {
	if bs, err := SelectBreaks("all"); err != nil || len(bs) != len(Breaks) || len(bs) != 5 {
		t.Errorf("all: %v %v", bs, err)
	}
	if bs, err := SelectBreaks("unknown-keyword, syntax-error"); err != nil || len(bs) != 2 || bs[0].ID != "syntax-error" {
		t.Errorf("two, in cycle order: %v %v", bs, err)
	}
	if _, err := SelectBreaks("syntax"); err == nil || !strings.Contains(err.Error(), `no break "syntax": want missing-map, syntax-error, unknown-keyword, syntax-error-after-peers, unbindable-address or all`) {
		t.Errorf("unknown: %v", err)
	}
	b, _ := SelectBreaks("syntax-error-after-peers")
	cfg, err := Config(b[0])
	if err != nil || !strings.Contains(cfg, "localpeer harp") || !strings.Contains(cfg, "peers harp\n    peer harp 127.0.0.1:10000") ||
		strings.Index(cfg, "peers harp") > strings.Index(cfg, `"unterminated`) {
		t.Errorf("the peers break's config has no peers section before its error: %v\n%s", err, cfg)
	}
}
