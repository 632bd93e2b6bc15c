//go:build !linux

package host

import "errors"

// BecomeSubreaper is Linux's alone: elsewhere a server's helper that left
// its process group and outlived it is not found.
func BecomeSubreaper() error { return errors.ErrUnsupported }

// treeBeforeStop cannot walk the tree here.
func treeBeforeStop(int) []treeProc { return nil }

// endTree finds nothing here.
func endTree(string, int, []treeProc, bool, *ProcessGroups) []orphan { return nil }
