//go:build !linux

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
