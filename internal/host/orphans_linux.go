package host

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// BecomeSubreaper makes this process the reaper of the orphans of its
// descendants (prctl PR_SET_CHILD_SUBREAPER), so that a server's helper
// that left its process group and outlived its parent is handed to the
// host, which ends it when the server stops (see orphans.go). It is for a
// program's main: the setting is the whole process's.
func BecomeSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return errno
	}
	return nil
}

// isSubreaper reports whether BecomeSubreaper was called.
func isSubreaper() bool {
	const prGetChildSubreaper = 37
	var on int32
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetChildSubreaper, uintptr(unsafe.Pointer(&on)), 0)
	return errno == 0 && on != 0
}

// procStat is what the host reads of a process in /proc/PID/stat.
type procStat struct {
	state      byte
	ppid, pgid int
	start      uint64 // clock ticks since boot: with the pid, one process
	command    string
}

func readStat(pid int) (procStat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseStat(data)
}

// parseStat reads a stat line: the command is in parentheses and may
// hold both, so the fields are counted from the last ')'.
func parseStat(data []byte) (procStat, bool) {
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	f := strings.Fields(string(data[end+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return procStat{}, false
	}
	return procStat{state: f[0][0], ppid: ppid, pgid: pgid, start: start, command: string(data[open+1 : end])}, true
}

// children returns the children of pid, of all its threads.
func children(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		data, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// tagged reports whether pid's environment holds the server's tag.
func tagged(pid int, tag string) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	want := tagVar + "=" + tag
	for kv := range bytes.SplitSeq(data, []byte{0}) {
		if string(kv) == want {
			return true
		}
	}
	return false
}

// descendants returns the processes under pid, while pid runs.
func descendants(pid int) []treeProc {
	var out []treeProc
	queue := children(pid)
	for len(queue) > 0 && len(out) < maxTree {
		c := queue[0]
		queue = queue[1:]
		st, ok := readStat(c)
		if !ok {
			continue
		}
		out = append(out, treeProc{c, st.start})
		queue = append(queue, children(c)...)
	}
	return out
}

// maxTree bounds a walk: a fork bomb must not make the host's stop one.
const maxTree = 4096

// endTree ends (SIGKILL) and reaps what a stopped server leaves: the
// processes of tree (its descendants seen before it stopped) and, with
// handed, the children of this process that carry tag, with theirs. pgid
// is the server's process group: the orphans returned are those outside
// it, found alive; the group's own dead are reaped without a word. It
// gives up after orphanWait.
func endTree(tag string, pgid int, tree []treeProc, handed bool) []orphan {
	self := os.Getpid()
	subreaper := handed && isSubreaper()
	if len(tree) == 0 && !subreaper {
		return nil
	}
	known := map[int]treeProc{}
	for _, p := range tree {
		known[p.pid] = p
	}
	var found []orphan
	reported := map[int]bool{}
	deadline := time.Now().Add(orphanWait)
	for {
		if subreaper {
			for _, c := range children(self) {
				if _, ok := known[c]; ok {
					continue
				}
				st, ok := readStat(c)
				// A dead member of the group (its environment is
				// gone) is the server's too.
				if ok && (st.pgid == pgid && st.state == 'Z' || tagged(c, tag)) {
					known[c] = treeProc{c, st.start}
				}
			}
		}
		left := 0
		for pid, p := range known {
			st, ok := readStat(pid)
			if !ok || st.start != p.start {
				delete(known, pid) // gone, and reaped
				continue
			}
			if st.state == 'Z' {
				var ws syscall.WaitStatus
				if st.ppid != self {
					left++ // its parent reaps it, or dies and hands it over
				} else if got, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got != pid {
					left++
				}
				continue
			}
			if st.pgid != pgid && !reported[pid] {
				reported[pid] = true
				found = append(found, orphan{pid: pid, command: st.command})
			}
			syscall.Kill(pid, syscall.SIGKILL)
			for _, c := range descendants(pid) {
				if _, ok := known[c.pid]; !ok {
					known[c.pid] = c
				}
			}
			left++
		}
		if left == 0 || time.Now().After(deadline) {
			return found
		}
		// The kernel ends a killed process in microseconds; a busy
		// machine takes longer. There is no event to wait on for a
		// process that is not (yet) a child.
		time.Sleep(time.Millisecond)
	}
}

// orphanWait bounds the ending of a server's leftovers.
const orphanWait = 5 * time.Second
