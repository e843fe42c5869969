package clipermissions

import "testing"

// A command whose effect needs state the script does not make has no probe.
func TestCLIProbeRefusesWhatItCannotShow(t *testing.T) {
	if p, err := cliProbe("shutdown session 0x1"); err == nil {
		t.Errorf("shutdown session needs a held session the script does not make: %q", p)
	}
}
