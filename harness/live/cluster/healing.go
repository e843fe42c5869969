package cluster

import "context"

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
