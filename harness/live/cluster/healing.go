package cluster

import "context"

// HealProbe is Attached in words, for saying why links did not come back
// after a Heal: what Docker shows of the member on the cluster network,
// or that the probe itself failed.
func (c *Cluster) HealProbe(ctx context.Context, m *Member) string {
	probe, err := c.Attached(ctx, m)
	switch {
	case err != nil:
		return "it failed: " + err.Error()
	case probe == "":
		return "Docker shows " + m.Name + " back on the cluster network at its own address"
	}
	return probe
}

// HealIfCut heals a member still cut off by Cut (one whose Heal was never
// asked or failed), and does nothing to one already healed: deferred, it
// leaves no member cut whatever path a trial takes.
func (c *Cluster) HealIfCut(ctx context.Context, m *Member) error {
	c.mu.Lock()
	cut := m.cut
	c.mu.Unlock()
	if !cut {
		return nil
	}
	return c.Heal(ctx, m)
}
