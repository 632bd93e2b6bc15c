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

// children returns the children of pid, of all its threads: the tasks
// listed in /proc/PID/task, and the children file of each. Every stop of
// a server walks its tree with it, so it reads with system calls into
// buffers on the stack: os.ReadDir and os.ReadFile made 15 allocations
// for a process of one thread, 54 for a test binary's (TestChildrenAllocs).
func children(pid int) []int {
	var path [96]byte
	p := append(path[:0], "/proc/"...)
	p = strconv.AppendInt(p, int64(pid), 10)
	p = append(p, "/task"...)
	dir := len(p)
	dfd, err := openPath(append(p, 0))
	if err != nil {
		return nil
	}
	defer syscall.Close(dfd)
	var out []int
	var dents [2048]byte
	for {
		n, err := syscall.ReadDirent(dfd, dents[:])
		if err != nil || n <= 0 {
			return out
		}
		// linux_dirent64: inode (8), offset (8), record length (2),
		// type (1), then the name, NUL-terminated and padded.
		for b := dents[:n]; len(b) > direntName; {
			size := int(*(*uint16)(unsafe.Pointer(&b[direntSize])))
			if size <= direntName || size > len(b) {
				break
			}
			name := b[direntName:size]
			b = b[size:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if len(name) == 0 || name[0] < '0' || name[0] > '9' {
				continue // . and ..
			}
			file := append(append(append(p[:dir], '/'), name...), "/children\x00"...)
			out = readChildren(out, file)
		}
	}
}

// Where a linux_dirent64's record length and name are.
const (
	direntSize = 16
	direntName = 19
)

// openPath opens path, a NUL-terminated file name, for reading:
// syscall.Open would copy the name to the heap to end it with a NUL.
func openPath(path []byte) (int, error) {
	const atFDCWD = -0x64
	fd, _, errno := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(atFDCWD&(1<<64-1)), uintptr(unsafe.Pointer(&path[0])),
		syscall.O_RDONLY|syscall.O_CLOEXEC, 0, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// readChildren appends the pids of a children file (a NUL-terminated
// name) to out, with three system calls (os.ReadFile takes five and a
// poller's attempt), read into a buffer on the stack for the usual few
// children.
func readChildren(out []int, file []byte) []int {
	fd, err := openPath(file)
	if err != nil {
		return out
	}
	// syscall.Read would move the buffer to the heap.
	var buf [512]byte
	r, _, errno := syscall.Syscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	syscall.Close(fd)
	n := int(r)
	if errno != 0 || n < 0 {
		return out
	}
	if n == len(buf) {
		// More children than the buffer holds: read it whole.
		return appendChildren(out, string(file[:len(file)-1]))
	}
	// Pids separated by spaces (bytes.Fields would move the buffer to
	// the heap too).
	pid, digits := 0, false
	for _, c := range buf[:n] {
		if '0' <= c && c <= '9' {
			pid, digits = pid*10+int(c-'0'), true
			continue
		}
		if digits {
			out = append(out, pid)
		}
		pid, digits = 0, false
	}
	if digits {
		out = append(out, pid)
	}
	return out
}

// appendChildren appends the pids a children file lists.
func appendChildren(out []int, file string) []int {
	data, err := os.ReadFile(file)
	if err != nil {
		return out
	}
	for _, f := range strings.Fields(string(data)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// mainChildren returns the children of pid's main thread.
func mainChildren(pid int) []int {
	var path [64]byte
	p := append(path[:0], "/proc/"...)
	p = strconv.AppendInt(p, int64(pid), 10)
	p = append(p, "/task/"...)
	p = strconv.AppendInt(p, int64(pid), 10)
	return readChildren(nil, append(p, "/children\x00"...))
}

// handedOver returns the processes handed to this process (a subreaper)
// that carry tag, or are dead members of the group pgid, found among the
// children of its main thread alone: one read of one file, and two more
// for each child there that is not a server of servers (which may be
// nil). That is where the kernel hands an orphan: to the first live
// thread of the subreaper, its main thread, which a Go program never
// ends. The children of the other threads are the servers they started.
// So a stop can afford to look every time, and a helper orphaned at once
// that holds none of the server's streams is found too.
func handedOver(tag string, pgid int, servers *ProcessGroups) []treeProc {
	self := os.Getpid()
	var out []treeProc
	for _, c := range mainChildren(self) {
		if servers.has(c) {
			continue
		}
		st, ok := readStat(c)
		if ok && (st.pgid == pgid && st.state == 'Z' || tagged(c, tag)) {
			out = append(out, treeProc{c, st.start})
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
func descendants(pid int) []treeProc { return walk(pid, children) }

// treeBeforeStop is the tree a server's stop ends besides its group. A
// subreaper reads the children of each process's main thread alone: what
// another thread started is handed to it by tag once the server is gone
// (handedOver), and reading /proc/PID/task, a dentry for every thread,
// made the kernel's reaping of the server cost up to milliseconds of CPU
// (p90 2.7 ms against 0.1 ms for a Go server of a few threads; all of
// BenchmarkRunnerVsFloor's rise after the walk came in). Without the
// subreaper every thread's children are read, as only the tree sees a
// helper then.
func treeBeforeStop(pid int) []treeProc {
	if isSubreaper() {
		return walk(pid, mainChildren)
	}
	return descendants(pid)
}

// walk returns the processes under pid, their children as kids reads them.
func walk(pid int, kids func(int) []int) []treeProc {
	var out []treeProc
	queue := kids(pid)
	for len(queue) > 0 && len(out) < maxTree {
		c := queue[0]
		queue = queue[1:]
		st, ok := readStat(c)
		if !ok {
			continue
		}
		out = append(out, treeProc{c, st.start})
		queue = append(queue, kids(c)...)
	}
	return out
}

// maxTree bounds a walk: a fork bomb must not make the host's stop one.
const maxTree = 4096

// endTree ends (SIGKILL) and reaps what a stopped server leaves: the
// processes of tree (its descendants seen before it stopped), those handed
// to this process as a subreaper that carry tag (handedOver: every time,
// cheaply), and, with handed, the children of every thread of this process
// that carry tag, again until they are gone, with theirs. pgid is the
// server's process group: the orphans returned are those outside it,
// found alive; the group's own dead are reaped without a word. servers
// (may be nil) are the run's servers, no orphans of anyone's. It gives up
// after orphanWait.
func endTree(tag string, pgid int, tree []treeProc, handed bool, servers *ProcessGroups) []orphan {
	self := os.Getpid()
	isReaper := isSubreaper()
	if isReaper {
		tree = append(tree, handedOver(tag, pgid, servers)...)
	}
	subreaper := handed && isReaper
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
