package host

import "syscall"

// processAttr puts a server in its own process group, and has the kernel
// kill it if the host dies without stopping it (a second Ctrl-C, a crash).
func processAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup signals the process group pid leads: the negative pid.
func signalGroup(pid int, sig syscall.Signal) error {
	return syscall.Kill(-pid, sig)
}
