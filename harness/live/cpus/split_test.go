package cpus

import "testing"

func TestSplit(t *testing.T) {
	all := All()
	node, load := Split("", 1)
	if Format(node) != Format(all[:1]) || Format(load) != Format(all[1:]) {
		t.Errorf("the first CPU: node %v, load %v (all %v)", node, load, all)
	}
	if node, load := Split("", len(all)+5); len(node) != len(all) || len(load) != 0 {
		t.Errorf("more CPUs than there are: node %v, load %v", node, load)
	}
	if node, load := Split("500-501", 2); Format(node) != "500,501" || Format(load) != Format(all) {
		t.Errorf("CPUs the machine lacks: node %v, load %v", node, load)
	}
	if Check("0-3,6") != nil || Check("3-1") == nil {
		t.Error("Check")
	}
}
