package host

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/hosteval/hosteval/internal/lines"
	"github.com/hosteval/hosteval/internal/record"
)

// wireTrace records every JSON-RPC message exchanged with the servers, and
// their stderr lines, as JSON lines: the second seed's trace script, built
// into the host. Writes are serialised; entries are in the order seen.
type wireTrace struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
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
	t.w.Write(append(data, '\n'))
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
	if !json.Valid(line) || json.Unmarshal(line, &msg) != nil {
		e.Kind, e.Text = "invalid", string(line)
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
	s.trace.write(record.WireLine{Server: s.server, Stream: "stderr", Kind: "log", Bytes: len(line), Text: string(line)})
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

// tapWriter copies what is written through it to a lines.Writer.
type tapWriter struct {
	w   io.WriteCloser
	tap *lines.Writer
}

func (t *tapWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	t.tap.Write(p[:n])
	return n, err
}

func (t *tapWriter) Close() error { return t.w.Close() }
