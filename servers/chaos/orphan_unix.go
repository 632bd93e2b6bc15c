//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// startOrphan starts `sleep 600` in a session of its own, holding this
// server's stderr, and returns its pid. detach starts it through a shell
// that exits at once (a daemon's double fork): it is then orphaned while
// the server still runs. quiet (with detach) gives it none of the
// server's streams: nothing of the server stays open in it.
func startOrphan(detach, quiet bool) (int, error) {
	attr := &syscall.SysProcAttr{Setsid: true}
	if detach {
		script := "sleep 600 >/dev/null </dev/null & echo $!"
		if quiet {
			// Its stderr too; the shell's stdout, the pipe $! is read
			// from, is not the sleep's either.
			script = "sleep 600 >/dev/null 2>&1 </dev/null & echo $!"
		}
		cmd := exec.Command("sh", "-c", script)
		cmd.Stderr, cmd.SysProcAttr = os.Stderr, attr
		out, err := cmd.Output()
		if err != nil {
			return 0, fmt.Errorf("start a detached sleep: %w", err)
		}
		return strconv.Atoi(strings.TrimSpace(string(out)))
	}
	cmd := exec.Command("sleep", "600")
	cmd.Stderr, cmd.SysProcAttr = os.Stderr, attr
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start sleep: %w", err)
	}
	go cmd.Wait()
	return cmd.Process.Pid, nil
}
