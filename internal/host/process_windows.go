package host

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// processAttr starts a server in its own process group, so that a Ctrl-C
// in the host's console does not reach it before the host stops it.
func processAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// signalGroup ends the process tree pid leads: Windows has no signals for a
// group, so any signal kills the tree (taskkill /T), as an npx-started
// server's node child would otherwise outlive it.
func signalGroup(pid int, _ syscall.Signal) error {
	return exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pid)).Run()
}

// pipeUnread cannot tell here: the handshake's budget then runs from the
// moment the request is written.
func pipeUnread(*os.File) (int, error) { return 0, errCannotTell }

// signalNames: a Windows process is not ended by a signal it could name.
func signalNames(syscall.Signal) string { return "" }

// pause is time.Sleep here: pipeUnread cannot tell, so nothing polls.
func pause(d time.Duration) { time.Sleep(d) }
