//go:build unix

package record

import (
	"errors"
	"syscall"
)

// pidAlive asks the kernel whether pid is a process (signal 0); a pid may
// have been reused, which the start time, where there is one, rules out.
func pidAlive(pid int) (alive, known bool) {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM), true
}
