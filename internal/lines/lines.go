// Package lines owns one thing: turning a stream written in pieces (a pipe
// tapped as it is read, a trace written by several goroutines) back into
// whole lines, for those that read JSON lines as they are written.
package lines

import (
	"bytes"
	"sync"
)

// Writer calls a function with each complete line written to it, without
// the newline, in the order written; an empty line is skipped, and a
// partial line waits for its end. It is safe for concurrent use: a line
// written with one Write call stays whole.
type Writer struct {
	mu   sync.Mutex
	each func(line []byte)
	buf  []byte
}

// NewWriter returns a Writer that calls each with every line; the line is
// each's only until it returns.
func NewWriter(each func(line []byte)) *Writer {
	return &Writer{each: each}
}

// Write never fails.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		if i > 0 {
			w.each(w.buf[:i])
		}
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) == 0 {
		w.buf = nil // let a large message's buffer go
	}
	return len(p), nil
}
