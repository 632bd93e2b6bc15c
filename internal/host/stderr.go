package host

import (
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hosteval/hosteval/internal/text"
)

// A server's stderr is bounded per server and per host (a case): a server
// that wrote 1 GB on stderr took hosteval to 4.5 GB, as every line went
// into the case's log in memory and into the wire trace. The host keeps
// the first StderrBytes of a server's lines, passed on as they come, and
// the last StderrBytes, held back in a ring and passed on when the
// server's stderr ends; what falls between is counted, and the count is
// logged (host.stderr_dropped) and recorded on the server's connection
// (record.Server.StderrDropped*). A line longer than the budget is cut to
// it. The end of stderr a failure quotes (stderrTail) sees every line.

// stderrLines takes a server's stderr, line by line, and its end.
type stderrLines interface {
	add(line []byte)
	flush()
}

// stderrKeeper keeps the head and the tail of one server's stderr lines.
// The lines of a restarted server's processes count against one budget.
type stderrKeeper struct {
	budget int // bytes of head and of tail each; negative: keep all
	pass   func(line []byte, at time.Time)
	// note is told what was dropped since the last note, once the lines
	// after it are passed on.
	note func(bytes, lines int64)

	mu        sync.Mutex
	headUsed  int
	tail      lineRing
	tailBytes int
	spare     []byte
	// dropped since the last note, and in all.
	bytes, lines       int64
	allBytes, allLines int64
}

type heldLine struct {
	text []byte
	at   time.Time
}

func newStderrKeeper(budget int, pass func([]byte, time.Time), note func(bytes, lines int64)) *stderrKeeper {
	return &stderrKeeper{budget: budget, pass: pass, note: note}
}

// add takes one line (without its newline), which the caller may reuse
// once add returns.
func (k *stderrKeeper) add(line []byte) {
	now := time.Now()
	if k.budget < 0 {
		k.pass(line, now)
		return
	}
	line = cutLine(line, k.budget)
	k.mu.Lock()
	if k.headUsed+len(line) <= k.budget && k.tail.n == 0 {
		k.headUsed += len(line)
		k.mu.Unlock()
		k.pass(line, now)
		return
	}
	// The head is full: this line is the tail's until a later one pushes
	// it out.
	k.headUsed = k.budget
	k.tail.push(heldLine{text: append(k.spare[:0], line...), at: now})
	k.spare = nil
	k.tailBytes += len(line)
	for k.tailBytes > k.budget {
		out := k.tail.pop()
		k.tailBytes -= len(out.text)
		k.bytes += int64(len(out.text)) + 1 // and its newline
		k.lines++
		// A flood of lines costs no allocation a line: the next one
		// takes the buffer of the one pushed out.
		k.spare = out.text
	}
	k.mu.Unlock()
}

// lineRing is a queue of lines in a ring that grows by doubling: a flood
// of lines through a tail of hundreds moves no memory.
type lineRing struct {
	buf   []heldLine
	first int
	n     int
}

func (r *lineRing) push(l heldLine) {
	if r.n == len(r.buf) {
		grown := make([]heldLine, max(16, 2*len(r.buf)))
		for i := range r.n {
			grown[i] = r.buf[(r.first+i)%len(r.buf)]
		}
		r.buf, r.first = grown, 0
	}
	r.buf[(r.first+r.n)%len(r.buf)] = l
	r.n++
}

func (r *lineRing) pop() heldLine {
	l := r.buf[r.first]
	r.buf[r.first] = heldLine{}
	r.first = (r.first + 1) % len(r.buf)
	r.n--
	return l
}

// flush passes the tail on, after a note of what was dropped before it:
// the server's stderr ended.
func (k *stderrKeeper) flush() {
	k.mu.Lock()
	tail := make([]heldLine, 0, k.tail.n)
	for k.tail.n > 0 {
		tail = append(tail, k.tail.pop())
	}
	bytes, lines := k.bytes, k.lines
	k.tailBytes, k.bytes, k.lines = 0, 0, 0
	k.allBytes += bytes
	k.allLines += lines
	k.mu.Unlock()
	if lines > 0 {
		k.note(bytes, lines)
	}
	for _, l := range tail {
		k.pass(l.text, l.at)
	}
}

// dropped returns what was dropped in all, as far as flushed.
func (k *stderrKeeper) dropped() (bytes, lines int64) {
	if k == nil {
		return 0, 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.allBytes, k.allLines
}

// cutLine cuts a line to at most n bytes, on a character's start.
func cutLine(line []byte, n int) []byte {
	if len(line) <= n {
		return line
	}
	for n > 0 && !utf8.RuneStart(line[n]) {
		n--
	}
	return line[:n]
}

// droppedText says what of a server's stderr was left out.
func droppedText(budget int, bytes, lines int64) string {
	return fmt.Sprintf("%s (%d bytes) of the server's stderr left out: the host keeps the first and the last %s of it", text.Count(int(lines), "line"), bytes, sizeText(budget))
}
