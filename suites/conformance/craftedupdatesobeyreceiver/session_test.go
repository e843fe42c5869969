package craftedupdatesobeyreceiver

import (
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/config"
	"github.com/harp-project/harp/harness/core/peerwire"
	"github.com/harp-project/harp/suites/conformance/craftedupdatesobeyreceiver/judge"
)

// The crafted messages are well-formed for the definitions they follow.
func TestCraftedMessages(t *testing.T) {
	if _, err := config.RenderText(judge.SuiteID+".cfg.tmpl", configTemplate, map[string]any{"Threads": 1, "LocalPeer": "harp"}); err != nil {
		t.Fatal(err)
	}
	def := peerwire.TableDef{ID: 1, Name: "/t", KeyType: peerwire.KeyString, KeyLen: 33, Types: []int{2}, Expire: 10000} // as 3.0.11 sends it
	m := peerwire.Update{Key: []byte("ce-001"), Values: gpc0(4), Timed: true, Expire: 1<<31 - 1}.MustEncode(def)
	if !strings.Contains(m.String(), "timed") && m.Type != 0x85 && m.Type != 0x86 {
		t.Errorf("a timed update is not sent as one: %s", m)
	}
}
