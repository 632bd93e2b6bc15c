package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// interrupts is the process's two-stage interrupt: SIGINT (Ctrl-C) or
// SIGTERM, the first and the second time. Each channel is closed when its
// signal arrives; both are nil when no signals are wired (a test running
// a command in-process).
//
// What a command does with the first is in the command table
// ([onInterrupt]); the second always kills every server's process group
// and exits 130 at once (run first writes run.json, see internal/runner).
type interrupts struct {
	first, second <-chan struct{}
}

// watchSignals installs the interrupt. The returned func uninstalls it and
// waits for the watcher.
func watchSignals() (interrupts, func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	first, second := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, stage := range []chan struct{}{first, second} {
			select {
			case <-sigs:
				close(stage)
			case <-done:
				return
			}
		}
	})
	return interrupts{first: first, second: second}, func() {
		signal.Stop(sigs)
		close(done)
		wg.Wait()
	}
}

// contextReader reads r until ctx ends: a read blocked on a terminal or a
// pipe returns ctx's error when it is cancelled, so that a command waiting
// for a person's line ends on an interrupt. One goroutine owns r and reads
// it ahead; after ctx ends it may stay blocked in a read of r, which is
// why a contextReader is only for the process's stdin, read until exit.
type contextReader struct {
	ctx    context.Context
	chunks chan []byte
	err    error // the error that ended r, after chunks is closed
	rest   []byte
}

func newContextReader(ctx context.Context, r io.Reader) *contextReader {
	cr := &contextReader{ctx: ctx, chunks: make(chan []byte)}
	go func() {
		defer close(cr.chunks)
		for {
			buf := make([]byte, 4096)
			n, err := r.Read(buf)
			if n > 0 {
				select {
				case cr.chunks <- buf[:n]:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				cr.err = err
				return
			}
		}
	}()
	return cr
}

func (cr *contextReader) Read(p []byte) (int, error) {
	if len(cr.rest) == 0 {
		select {
		case chunk, ok := <-cr.chunks:
			if !ok {
				if cr.err != nil {
					return 0, cr.err
				}
				return 0, context.Cause(cr.ctx)
			}
			cr.rest = chunk
		case <-cr.ctx.Done():
			return 0, context.Cause(cr.ctx)
		}
	}
	n := copy(p, cr.rest)
	cr.rest = cr.rest[n:]
	return n, nil
}

// untilClosed returns a context that ends, with errInterrupted as its
// cause, when ch is closed (or ctx ends). The returned func stops watching
// ch and waits for the watcher.
func untilClosed(ctx context.Context, ch <-chan struct{}) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	select {
	case <-ch:
		// Already there: the context has ended before anyone reads it.
		cancel(errInterrupted)
	default:
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-ch:
			cancel(errInterrupted)
		case <-done:
		}
	})
	return ctx, func() {
		close(done)
		wg.Wait()
		cancel(nil)
	}
}
