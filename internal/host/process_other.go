//go:build !linux && !windows

package host

import (
	"os"
	"syscall"
)

func processAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// pipeUnread cannot tell here: the handshake's budget then runs from the
// moment the request is written.
func pipeUnread(*os.File) (int, bool) { return 0, false }

// signalGroup signals the process group pid leads: the negative pid.
func signalGroup(pid int, sig syscall.Signal) error {
	return syscall.Kill(-pid, sig)
}
