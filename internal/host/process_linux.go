package host

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// processAttr puts a server in its own process group, and has the kernel
// kill it if the host dies without stopping it (a second Ctrl-C, a crash).
func processAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// fionread is FIONREAD (TIOCINQ) on Linux, which syscall does not name.
const fionread = 0x541B

// pipeUnread returns how many bytes written to a pipe are not read yet.
// Linux answers FIONREAD on either end of a pipe; the error is the file's
// once it is closed.
func pipeUnread(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int32
	var errno syscall.Errno
	// Control, not Fd: Fd would put the pipe in blocking mode.
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, fionread, uintptr(unsafe.Pointer(&n)))
	}); err != nil {
		return 0, err
	}
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// pause blocks the calling thread for about d, where time.Sleep would
// not: a sleep under a millisecond took 1.08 ms here whatever its length
// (20, 50 or 200 µs; Go 1.26, Linux 6.18), and awaitInputRead, polling
// every 50 µs, saw a server's read a millisecond late and ran past its
// bound by as much. nanosleep wakes within the timer slack, 50 µs; the
// thread it holds is one of a poll that lasts 2 ms at most.
func pause(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	syscall.Nanosleep(&ts, nil)
}

// signalGroup signals the process group pid leads: the negative pid.
func signalGroup(pid int, sig syscall.Signal) error {
	return syscall.Kill(-pid, sig)
}
