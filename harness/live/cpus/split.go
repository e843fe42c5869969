package cpus

// Split shares this process's CPUs between a node and the load: the node
// gets set ("" for the first n CPUs), the load every other one. A set
// that does not parse gives the node none (Check it first).
func Split(set string, n int) (node, load []int) {
	if set != "" {
		node, _ = Parse(set)
	} else {
		all := All()
		node = all[:min(n, len(all))]
	}
	return node, Without(All(), node)
}

// Check says why set is not a cpuset, nil when it is (a parameter's check).
func Check(set string) error {
	_, err := Parse(set)
	return err
}
