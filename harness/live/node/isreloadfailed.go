package node

import "errors"

// IsReloadFailed says whether err is HAProxy not carrying out a reload
// (*ReloadFailed), not harp failing to ask or to watch.
func IsReloadFailed(err error) bool {
	var failed *ReloadFailed
	return errors.As(err, &failed)
}
