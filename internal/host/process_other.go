//go:build !linux && !windows

package host

import (
	"os"
	"syscall"
	"time"
)

func processAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// pipeUnread cannot tell here: the handshake's budget then runs from the
// moment the request is written.
func pipeUnread(*os.File) (int, error) { return 0, errCannotTell }

// signalGroup signals the process group pid leads: the negative pid.
func signalGroup(pid int, sig syscall.Signal) error {
	return syscall.Kill(-pid, sig)
}

// pause is time.Sleep here: pipeUnread cannot tell, so nothing polls.
func pause(d time.Duration) { time.Sleep(d) }
