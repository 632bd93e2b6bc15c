package fixturetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// WaitPID waits up to timeout for a pid file and returns the pid in it.
func WaitPID(path string, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		data, err := os.ReadFile(path)
		if err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				return pid, nil
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no pid in %s after %v", path, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// GroupMembers lists the live processes of process group pgid (zombies
// are dead: only their parent has yet to reap them).
func GroupMembers(pgid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(fields) > 2 && fields[0] != "Z" && fields[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// WaitGroupGone waits up to timeout for every process of group pgid to
// die and returns those still alive.
func WaitGroupGone(pgid int, timeout time.Duration) ([]int, error) {
	deadline := time.Now().Add(timeout)
	for {
		pids, err := GroupMembers(pgid)
		if err != nil || len(pids) == 0 || time.Now().After(deadline) {
			return pids, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}
