package main

import (
	"os/exec"
	"syscall"
)

// endWithParent has the kernel kill the server when sdkcall dies, by
// SIGKILL too: an orphaned Node server that ignores the end of its input
// would otherwise run on.
func endWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
