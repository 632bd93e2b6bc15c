package host

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

// process is one stdio server's child process. The host owns its pipes (not
// exec's, whose Wait would close stdout under the SDK's reader and lose the
// last message of a server that answers and exits), starts it in its own
// process group so that stopping it also stops what it started (npx starts
// node), and always reaps it.
//
// It also keeps what tells the honest cause of a server's end: its exit
// status, the last lines of its stderr, and what its stdout did (ended, or
// carried something that is not JSON-RPC).
type process struct {
	cmd      *exec.Cmd
	stdin    *os.File     // host's write end
	stdout   *stdoutWatch // host's read end, watched
	grace    time.Duration
	exited   chan struct{} // closed when Wait returned
	exitErr  error         // valid after exited is closed
	stderrWG chan struct{} // closed when the stderr reader is done
	tail     stderrTail

	// groups, when the host has Options.Groups, holds the process's group
	// until stop has reaped it.
	groups *ProcessGroups
	// tag is in the environment of the server and of what it starts: it
	// finds the helpers that left its group (orphans.go).
	tag string
	// orphaned, when set, is told what stop found outside the group.
	orphaned func([]orphan)
	// orphans are what stop found and ended (valid after stop).
	orphans []orphan
	// inputEnded is when endInput closed stdin (UnixNano; 0 before): the
	// grace before SIGTERM counts from it, not from the call to stop.
	inputEnded atomic.Int64
}

// startProcess starts spec's command and registers its process group in
// groups (which may be nil). Each stderr line, and then the end of stderr,
// is given to stderr from a goroutine the process owns and stop waits for.
func startProcess(spec ServerSpec, grace time.Duration, groups *ProcessGroups, stderr stderrLines) (*process, error) {
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Dir = spec.Dir
	tag := newTag()
	cmd.Env = append(append(serverEnv(os.Environ(), spec.InheritEnv), spec.Env...), tagVar+"="+tag)
	cmd.SysProcAttr = processAttr()

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	startErr := cmd.Start()
	// The child has its copies; the host keeps only its own ends, so that the
	// child's exit is seen as EOF.
	inR.Close()
	outW.Close()
	errW.Close()
	if startErr != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, startErr
	}
	groups.add(cmd.Process.Pid)
	p := &process{
		cmd: cmd, stdin: inW, stdout: &stdoutWatch{r: outR, atStart: true}, grace: grace, groups: groups, tag: tag,
		exited: make(chan struct{}), stderrWG: make(chan struct{}),
	}
	go func() {
		defer close(p.stderrWG)
		defer errR.Close()
		sc := bufio.NewScanner(errR)
		// Lines are a few hundred bytes; the buffer grows for a long one.
		sc.Buffer(make([]byte, 0, 4<<10), 4<<20)
		for sc.Scan() {
			p.tail.add(sc.Bytes())
			stderr.add(sc.Bytes())
		}
		// A line over the limit ends the scan; drain so the child never blocks.
		io.Copy(io.Discard, errR)
		stderr.flush()
	}()
	go func() {
		p.exitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// baseEnv are the variables a server gets from the host's environment by
// default: enough to find programs, write temporary files and read text.
var baseEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TEMP", "TMP", "LANG", "LANGUAGE", "TZ", "TERM", "SYSTEMROOT"}

// serverEnv filters the host's environment for a server.
func serverEnv(environ []string, inherit bool) []string {
	if inherit {
		return environ
	}
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(baseEnv, k) || strings.HasPrefix(k, "LC_") {
			out = append(out, kv)
		}
	}
	return out
}

// exitStatus describes how the process ended ("exited with status 1",
// "was killed by signal SIGKILL"), or "" while it runs.
func (p *process) exitStatus() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	var ee *exec.ExitError
	if errors.As(p.exitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "was killed by signal " + signalName(ws.Signal())
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	if p.exitErr != nil {
		return p.exitErr.Error()
	}
	return "exited with status 0"
}

// signalName names a signal that ended a server: syscall.Signal's String
// is a description ("killed"), which reads wrong after "killed by".
func signalName(sig syscall.Signal) string {
	if name := signalNames(sig); name != "" {
		return name
	}
	return fmt.Sprintf("%d (%v)", int(sig), sig)
}

// waitExit waits up to d for the process to exit and reports whether it did.
func (p *process) waitExit(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// exitWait is how long the host waits for a process whose stdout ended to
// be reaped before it calls the end something else (a closed stdout). The
// exit is seen in microseconds on an idle machine; this is for a busy one.
const exitWait = time.Second

// ended says why a server's connection ended, in words that follow "it"
// ("exited with status 3", "wrote something that is not JSON-RPC on stdout:
// ..."), or "" when the process shows no cause. Garbage on stdout comes
// first: the host closes a connection that carries it, and the exit that
// follows (SIGPIPE, or status 0 when stdin closes) is its consequence.
//
// inputClosed says a write to its stdin found nothing reading it (EPIPE):
// that is a cause too, as a stdout that ended is. A server killed while
// a call is on its way fails the write, or the read of the answer,
// depending on which comes first; either way the host waits for the exit
// and names it, so what it says does not depend on that race.
func (p *process) ended(inputClosed bool) string {
	if bad := p.stdout.garbage(); bad != "" {
		return "wrote something that is not JSON-RPC on stdout: " + bad
	}
	if !p.stdout.ended() && !inputClosed && !p.waitExit(0) {
		return ""
	}
	if p.waitExit(exitWait) {
		return p.exitStatus()
	}
	if !p.stdout.ended() {
		return "closed its stdin while still running"
	}
	return "closed its stdout while still running"
}

// stderrTail returns the last lines of the process's stderr, joined, once
// the stderr reader has caught up (or a short while has passed).
func (p *process) stderrTail() string {
	select {
	case <-p.stderrWG:
	case <-time.After(200 * time.Millisecond):
	}
	return p.tail.String()
}

// stop ends the process as the stdio transport asks (close its input, wait,
// SIGTERM, wait, SIGKILL), signalling its whole group, and reaps it. The
// grace is short: a fixture server exits in milliseconds once its input
// closes, and one that does not is stuck, not busy.
//
// What the server started outside its group (a helper in a session of its
// own) is ended too, and reaped: it would keep stderr open, and the run
// would leave it behind (orphans.go).
func (p *process) stop() {
	// A server that died before its stop had its children handed over
	// already (to the host, a subreaper), where only the scan finds them.
	var tree []treeProc
	diedFirst := p.waitExit(0)
	if !diedFirst {
		tree = treeBeforeStop(p.cmd.Process.Pid)
	}
	p.endInput()
	// The grace counts from the end of the input, which the host may have
	// sent a while before this stop (serverConn.endInput): a server that
	// ignores it costs the run its grace, and no more.
	if !p.waitExit(p.grace - time.Since(time.Unix(0, p.inputEnded.Load()))) {
		p.signal(syscall.SIGTERM)
		if !p.waitExit(p.grace) {
			p.signal(syscall.SIGKILL)
			<-p.exited
		}
	}
	// Children that outlived the leader would keep stderr open.
	p.signal(syscall.SIGKILL)
	// What was handed to the host's main thread is looked at every time
	// (one read, and two for each child there that is not a server). The
	// children of all its threads (a read of each, about a millisecond
	// on a busy machine) are looked for until they are gone only when
	// something outside the group still holds the server's stderr, or
	// the server died first.
	p.orphans = endTree(p.tag, p.cmd.Process.Pid, tree, diedFirst || !p.stderrEnds(stderrSettle), p.groups)
	if len(p.orphans) > 0 && p.orphaned != nil {
		p.orphaned(p.orphans)
	}
	p.groups.remove(p.cmd.Process.Pid)
	p.stdout.Close()
	<-p.stderrWG
}

// endInput closes the server's stdin, the first time it is called, and
// notes when. A connection's close may have closed it already (the stdio
// transports close their writer): the time is then a moment late, which
// only lengthens the grace.
func (p *process) endInput() {
	if p.inputEnded.CompareAndSwap(0, time.Now().UnixNano()) {
		p.stdin.Close()
	}
}

// stderrEnds reports whether the server's stderr ended within d.
func (p *process) stderrEnds(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.stderrWG:
		return true
	case <-t.C:
		return false
	}
}

// stderrSettle is how long a stopped server's stderr may take to end
// before the host looks for what holds it; only a cost when it is slow.
const stderrSettle = 100 * time.Millisecond

func (p *process) signal(sig syscall.Signal) {
	// The whole process group the child leads (see signalGroup).
	if err := signalGroup(p.cmd.Process.Pid, sig); err != nil {
		p.cmd.Process.Signal(sig)
	}
}

// inputState is what the host can see of a server's reading of its stdin.
type inputState int

const (
	// inputUnknown: the platform cannot tell (the handshake's budget then
	// runs from the write).
	inputUnknown inputState = iota
	// inputPending: something written is not read yet.
	inputPending
	// inputAllRead: the server has read everything written so far.
	inputAllRead
	// inputClosed: the host has closed the pipe, so the attempt is over
	// and there is nothing to see; what was seen before stands.
	inputClosed
)

// input reports whether the server has read everything written to its
// stdin so far. A server that has not read its first request is still
// starting (a Node server reads stdin only once its modules are loaded),
// so the handshake's budget does not run yet.
func (p *process) input() inputState {
	n, err := pipeUnread(p.stdin)
	switch {
	case errors.Is(err, errCannotTell):
		return inputUnknown
	case err != nil:
		// The pipe is closed: the SDK closes the connection as soon as
		// the attempt's context ends, which can be before the watcher's
		// last look. Taken for "cannot tell", it made the message of a
		// server that never read its request depend on that race.
		return inputClosed
	case n > 0:
		return inputPending
	}
	return inputAllRead
}

// inputReadWait bounds awaitInputRead: a server that is idle reads its
// input within microseconds, and one that is busy is not waited for.
const inputReadWait = 2 * time.Millisecond

// inputReadPoll is how often awaitInputRead looks at the pipe.
const inputReadPoll = 50 * time.Microsecond

// awaitInputRead waits, at most d, until the server has read all that was
// written to its stdin (at once where the platform cannot tell).
func (p *process) awaitInputRead(d time.Duration) {
	deadline := time.Now().Add(d)
	for p.input() == inputPending && time.Now().Before(deadline) {
		pause(inputReadPoll)
	}
}

// errCannotTell is pipeUnread's answer where the platform cannot tell.
var errCannotTell = errors.New("the platform cannot tell how much of a pipe is read")

// stderrTail keeps the last lines a server wrote on stderr, for the error
// that reports its end: a ring, as a server may log a line per request,
// of buffers reused (a server may write millions of lines).
type stderrTail struct {
	mu    sync.Mutex
	lines [tailLines][]byte
	cut   [tailLines]bool
	n     int // lines added
}

const (
	tailLines     = 3
	tailLineBytes = 160
)

func (t *stderrTail) add(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	cut := len(line) > tailLineBytes
	if cut {
		n := tailLineBytes
		for n > 0 && !utf8.RuneStart(line[n]) {
			n--
		}
		line = line[:n]
	}
	t.mu.Lock()
	i := t.n % tailLines
	t.lines[i] = append(t.lines[i][:0], line...)
	t.cut[i] = cut
	t.n++
	t.mu.Unlock()
}

func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	first := max(0, t.n-tailLines)
	parts := make([]string, 0, tailLines)
	for i := first; i < t.n; i++ {
		part := string(t.lines[i%tailLines])
		if t.cut[i%tailLines] {
			part += "..."
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " | ")
}

// stdoutWatch passes a server's stdout through, and notes the first line
// that cannot be a JSON-RPC message (one that does not start with { or [)
// and whether the stream ended. It looks only at the first byte of each
// line, so a 20 MB result costs one scan for newlines.
type stdoutWatch struct {
	r io.ReadCloser

	mu      sync.Mutex
	atStart bool   // the next byte read starts a line
	bad     []byte // the start of the first line that is not JSON-RPC
	inBad   bool   // bad is still being filled
	end     bool   // the server's side ended the stream (EOF)
}

// maxGarbageQuote bounds what of a bad line is quoted.
const maxGarbageQuote = 80

func (w *stdoutWatch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	w.mu.Lock()
	if w.bad == nil || w.inBad {
		w.scan(p[:n])
	}
	// Only EOF comes from the server's side; a read after the host closed
	// its end fails otherwise.
	if errors.Is(err, io.EOF) {
		w.end = true
	}
	w.mu.Unlock()
	return n, err
}

func (w *stdoutWatch) scan(b []byte) {
	for len(b) > 0 {
		if w.inBad {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				i = len(b)
			}
			w.bad = append(w.bad, b[:min(i, maxGarbageQuote+1-len(w.bad))]...)
			if i < len(b) || len(w.bad) > maxGarbageQuote {
				w.inBad = false
			}
			return
		}
		if w.atStart {
			switch c := b[0]; c {
			case ' ', '\t', '\r', '\n':
				b = b[1:]
				continue
			case '{', '[':
				w.atStart = false
			default:
				if w.bad != nil {
					return
				}
				w.bad, w.inBad = []byte{}, true
				continue
			}
		}
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return
		}
		w.atStart = true
		b = b[i+1:]
	}
}

// garbage quotes the start of the first line that is not JSON-RPC, or
// returns "".
func (w *stdoutWatch) garbage() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.bad == nil {
		return ""
	}
	if len(w.bad) > maxGarbageQuote {
		cut := maxGarbageQuote
		for cut > 0 && !utf8.RuneStart(w.bad[cut]) {
			cut--
		}
		return fmt.Sprintf("%q...", w.bad[:cut])
	}
	return fmt.Sprintf("%q", w.bad)
}

func (w *stdoutWatch) ended() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.end
}

func (w *stdoutWatch) Close() error { return w.r.Close() }
