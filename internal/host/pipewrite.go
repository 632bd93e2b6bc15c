package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that stops reading its stdin fills the pipe, and then a write
// to it blocks: with no bound, for good, holding the connection's write
// lock, past the tool's and the case's budgets (issue 23 saw 130 s, ended
// only by a signal). Every write to a server's stdin is bounded by the
// context it is written with, the round's for a call. A write the pipe
// takes at once, the usual one, costs nothing more; only one that would
// block arms the context's end (a write deadline in the past on the pipe,
// which Go's poller honours for a pipe made by os.Pipe). A write cut that
// way leaves a part of a message in the pipe, so the connection writes
// nothing more: every later write fails at once with the same error.

// errStoppedReading is why a write to a server's stdin did not finish:
// the pipe was full until the write's context ended.
var errStoppedReading = errors.New("the server stopped reading its input")

// stalledWrite is the error of a write cut by its context's end.
type stalledWrite struct {
	wrote, size int
	cause       error // the context's cause
}

func (e *stalledWrite) Error() string {
	return fmt.Sprintf("%v: %d of %d bytes of a message written when the wait ended (%v)", errStoppedReading, e.wrote, e.size, e.cause)
}

func (e *stalledWrite) Unwrap() []error { return []error{errStoppedReading, e.cause} }

// pipeWriter writes to a server's stdin within a context.
type pipeWriter struct {
	f *os.File
	// raw writes without blocking where the platform allows (see
	// pipewrite_unix.go); nil elsewhere, where every write arms the
	// context's end.
	raw *rawPipe
}

func newPipeWriter(f *os.File) *pipeWriter {
	return &pipeWriter{f: f, raw: newRawPipe(f)}
}

// longAgo is a deadline already past: it ends a blocked write at once.
var longAgo = time.Unix(1, 0)

// write writes data whole, or returns a *stalledWrite when ctx ended while
// the pipe was full. The caller serialises writes.
func (w *pipeWriter) write(ctx context.Context, data []byte) (int, error) {
	var (
		n       int
		err     error
		blocked bool
	)
	if w.raw != nil {
		n, blocked, err = w.raw.tryWrite(data)
		if !blocked {
			return n, err
		}
	}
	if ctx.Done() == nil {
		m, err := w.f.Write(data[n:])
		return n + m, err
	}
	// The pipe is full: the rest waits for the server to read, or for ctx.
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		w.f.SetWriteDeadline(longAgo)
		close(fired)
	})
	m, err := w.f.Write(data[n:])
	n += m
	if !stop() {
		<-fired
		if err == nil {
			// The context ended just as the write finished: it stands.
			w.f.SetWriteDeadline(time.Time{})
		}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return n, &stalledWrite{wrote: n, size: len(data), cause: context.Cause(ctx)}
	}
	return n, err
}

// pipeState is what a connection over a server's pipes knows beyond what
// its reads and writes return: a write that stalled (the SDK may report
// such a call as its context's end, without the write's error).
type pipeState interface {
	stall() *stalledWrite
	// overLimit returns the message over the host's limit that ended
	// the connection, or nil.
	overLimit() *answerTooLarge
}

// sdkPipe is the go-sdk's stdio transport (Options.Paths sdk) with its
// writes bounded as the host's own are: its connection writes with no
// bound, so each write arms its context's end as a write deadline in the
// past on the pipe, which ends the write in progress; a write ended so
// stalls the connection. It costs a context.AfterFunc a write, where the
// host's own connection tries the write first; this path is the
// reference the fast one is held to, not the one that runs by default.
type sdkPipe struct {
	mcp.Transport
	in *os.File
	// deep reads the server's stdout under the SDK, to explain a message
	// the SDK refuses as nested too deep (deep.go).
	deep *deepReader
	conn *sdkPipeConn
}

func (t *sdkPipe) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &sdkPipeConn{Connection: conn, in: t.in, deep: t.deep}
	return t.conn, nil
}

func (t *sdkPipe) stall() *stalledWrite {
	if t.conn == nil {
		return nil
	}
	return t.conn.stalled.Load()
}

func (t *sdkPipe) overLimit() *answerTooLarge {
	if t.conn == nil {
		return nil
	}
	return t.conn.overLimit.Load()
}

type sdkPipeConn struct {
	mcp.Connection
	in        *os.File
	deep      *deepReader
	stalled   atomic.Pointer[stalledWrite]
	overLimit atomic.Pointer[answerTooLarge]
}

func (c *sdkPipeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	// The SDK's error is a string (errFrameTooLarge's wording).
	if err != nil && strings.Contains(err.Error(), errFrameTooLarge.Error()) {
		c.overLimit.CompareAndSwap(nil, &answerTooLarge{limit: maxMessageBytes, fatal: true})
	}
	if err != nil && c.deep != nil && strings.Contains(err.Error(), errNestedTooDeep) {
		// The SDK says only that: the host says which tool and how deep,
		// as its own connection does.
		if deep := c.deep.explain(); deep != nil {
			err = deep
		}
	}
	return msg, err
}

func (c *sdkPipeConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if st := c.stalled.Load(); st != nil {
		return st
	}
	if ctx.Done() == nil {
		return c.Connection.Write(ctx, msg)
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.in.SetWriteDeadline(longAgo)
		close(fired)
	})
	err := c.Connection.Write(ctx, msg)
	if !stop() {
		<-fired
		// Only a write the deadline ended leaves a part of a message in
		// the pipe. One that ended otherwise (the SDK writes nothing on
		// a context already ended) must not leave the deadline to the
		// next write, which would fail as if the server stopped reading.
		if !errors.Is(err, os.ErrDeadlineExceeded) && c.stalled.Load() == nil {
			c.in.SetWriteDeadline(time.Time{})
		}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		st := &stalledWrite{cause: context.Cause(ctx)}
		if ctx.Err() == nil {
			// Another write's context ended this one.
			st.cause = errors.New("another write to the server ended with its context")
		}
		c.stalled.CompareAndSwap(nil, st)
		return c.stalled.Load()
	}
	return err
}
