//go:build !unix

package main

import "errors"

// startOrphan needs setsid.
func startOrphan(bool, bool) (int, error) {
	return 0, errors.New("orphan: no sessions on this system")
}
