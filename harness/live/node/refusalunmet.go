package node

// RefusalUnmet files the error of a setup command: HAProxy refusing it
// (*Refused) is an unmet precondition, its text put in *unmet, and nil is
// returned; any other error is harp's, returned as it is (the trial's
// error). A caller stops on either: err != nil || *unmet != "".
func RefusalUnmet(err error, unmet *string) error {
	if IsRefused(err) {
		*unmet = err.Error()
		return nil
	}
	return err
}
