package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hosteval/hosteval/internal/lines"
	"github.com/hosteval/hosteval/internal/record"

	"github.com/hosteval/hosteval/internal/text"
)

// wireTrace records every JSON-RPC message exchanged with the servers, and
// their stderr lines, as JSON lines: the second seed's trace script, built
// into the host. Writes are serialised; entries are in the order seen.
//
// It holds at most budget bytes (WireBytes; negative: no limit): a line
// over it is left out and counted, and finish writes the count as the
// trace's last line, so a server that floods its stdout or stderr costs
// no more disk than that.
type wireTrace struct {
	mu     sync.Mutex
	w      io.Writer
	start  time.Time
	budget int

	used         int
	droppedLines int
	droppedBytes int
}

// serverWire tracks one server's messages, so that a result can be labelled
// with the method of the request it answers.
type serverWire struct {
	trace  *wireTrace
	server string
	mu     sync.Mutex
	// sent maps "<dir><id>" of a request to its method.
	sent map[string]string
}

func (t *wireTrace) forServer(name string) *serverWire {
	if t == nil {
		return nil
	}
	return &serverWire{trace: t, server: name, sent: map[string]string{}}
}

func (t *wireTrace) write(e record.WireLine) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.MS = float64(time.Since(t.start).Microseconds()) / 1000
	data, err := json.Marshal(e)
	if err != nil {
		return
	}
	if t.budget >= 0 && t.used+len(data)+1 > t.budget {
		t.droppedLines++
		t.droppedBytes += len(data) + 1
		return
	}
	t.used += len(data) + 1
	t.w.Write(append(data, '\n'))
}

// finish writes what was left out, if anything, as the trace's last line,
// and returns it.
func (t *wireTrace) finish() (lines, bytes int) {
	if t == nil {
		return 0, 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.droppedLines == 0 {
		return 0, 0
	}
	e := record.WireLine{MS: float64(time.Since(t.start).Microseconds()) / 1000, Kind: "dropped", Bytes: t.droppedBytes,
		Text: fmt.Sprintf("%s (%d bytes) left out: the trace holds at most %s", text.Count(t.droppedLines, "line"), t.droppedBytes, sizeText(t.budget))}
	if data, err := json.Marshal(e); err == nil {
		t.w.Write(append(data, '\n'))
	}
	lines, bytes = t.droppedLines, t.droppedBytes
	t.droppedLines, t.droppedBytes = 0, 0
	return lines, bytes
}

// message records one line of JSON-RPC traffic in direction dir.
func (s *serverWire) message(stream, dir string, line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	e := record.WireLine{Server: s.server, Stream: stream, Dir: dir, Bytes: len(line)}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Error  json.RawMessage `json:"error"`
	}
	// A line that is not UTF-8 is not JSON either (RFC 8259), though
	// encoding/json takes it: its bytes go into Text, escaped, so that
	// the trace stays JSON in UTF-8.
	if !utf8.Valid(line) || !json.Valid(line) || json.Unmarshal(line, &msg) != nil {
		e.Kind, e.Text = "invalid", escapeInvalid(line)
		s.trace.write(e)
		return
	}
	e.Message = append(json.RawMessage(nil), line...)
	e.ID, e.Method = msg.ID, msg.Method
	hasID := len(msg.ID) > 0 && string(msg.ID) != "null"
	s.mu.Lock()
	switch {
	case msg.Method != "" && hasID:
		e.Kind = "request"
		s.sent[dir+string(msg.ID)] = msg.Method
	case msg.Method != "":
		e.Kind = "notification"
	default:
		// A response travels the other way from its request.
		reqDir := "->"
		if dir == "->" {
			reqDir = "<-"
		}
		e.Method = s.sent[reqDir+string(msg.ID)]
		delete(s.sent, reqDir+string(msg.ID))
		e.Kind = "result"
		if len(msg.Error) > 0 && string(msg.Error) != "null" {
			e.Kind = "error"
		}
	}
	s.mu.Unlock()
	s.trace.write(e)
}

func (s *serverWire) stderr(line []byte) {
	s.trace.write(record.WireLine{Server: s.server, Stream: "stderr", Kind: "log", Bytes: len(line), Text: escapeInvalid(line)})
}

// escapeInvalid returns b as text, each byte that is not part of a UTF-8
// character written as \xNN.
func escapeInvalid(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var out strings.Builder
	out.Grow(len(b) + 16)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&out, `\x%02x`, b[0])
		} else {
			out.Write(b[:size])
		}
		b = b[size:]
	}
	return out.String()
}

// invalidUTF8 returns the offset of the first byte of b that is not part
// of a UTF-8 character, or -1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// quoteAround shows up to 40 bytes of b around offset at (a byte that is
// not UTF-8 as \xNN), with ... where b goes on.
func quoteAround(b []byte, at int) string {
	from, to := max(0, at-20), min(len(b), at+20)
	q := escapeInvalid(b[from:to])
	if from > 0 {
		q = "..." + q
	}
	if to < len(b) {
		q += "..."
	}
	return q
}

// tapReader copies what is read through it to a lines.Writer.
type tapReader struct {
	r   io.ReadCloser
	tap *lines.Writer
}

func (t *tapReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.tap.Write(p[:n])
	}
	return n, err
}

func (t *tapReader) Close() error { return t.r.Close() }

// tapWriter copies what is written through it to a lines.Writer (the
// go-sdk's stdio transport, Options.Paths sdk; the host's own connection
// taps its writes itself).
type tapWriter struct {
	w   io.WriteCloser
	tap io.Writer
}

func (t *tapWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	t.tap.Write(p[:n])
	return n, err
}

func (t *tapWriter) Close() error { return t.w.Close() }
