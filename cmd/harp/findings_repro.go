package main

import "context"

// cmdFindingsRepro writes a finding's standalone reproducer (in progress).
func cmdFindingsRepro(ctx context.Context, args []string) int {
	return fail("findings repro: not built yet")
}
