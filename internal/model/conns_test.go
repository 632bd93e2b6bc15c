package model

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// pipeDialer dials one end of a pipe and keeps the other, whose reads
// tell whether the dialed end was closed.
type pipeDialer struct{ far []net.Conn }

func (d *pipeDialer) dial(context.Context, string, string) (net.Conn, error) {
	near, far := net.Pipe()
	d.far = append(d.far, far)
	return near, nil
}

// closedFar reports whether the near end of c's pipe is closed: closing
// is synchronous, so the deadline only bounds a broken set, it times
// nothing.
func closedFar(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, io.EOF)
}

func TestConnSetClosesEveryConnectionAtTheRunsEnd(t *testing.T) {
	tests := []struct {
		name       string
		inFlight   int  // requests begun and not ended before closeAll
		wantClosed bool // the dialed connection is closed by closeAll
	}{
		{"no request in flight", 0, true},
		{"a request in flight", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newConnSet()
			d := &pipeDialer{}
			dial := s.dialer(d.dial)
			c, err := dial(context.Background(), "tcp", "x")
			if err != nil {
				t.Fatal(err)
			}
			for range tt.inFlight {
				s.begin()
			}
			if got := s.closeAll(); got != tt.wantClosed {
				t.Errorf("closeAll = %v, want %v", got, tt.wantClosed)
			}
			if !tt.wantClosed {
				c.Close() // the far end's read below returns
			}
			if got := closedFar(d.far[0]); !got {
				t.Errorf("connection closed = %v, want true", got)
			}
			s.mu.Lock()
			n := len(s.open)
			s.mu.Unlock()
			if n != 0 {
				t.Errorf("%d connections left in the set, want 0", n)
			}
		})
	}
}

func TestConnSetClosesADialFinishingAfterTheRunsEnd(t *testing.T) {
	s := newConnSet()
	d := &pipeDialer{}
	dial := s.dialer(d.dial)
	s.closeAll()
	if c, err := dial(context.Background(), "tcp", "x"); !errors.Is(err, errRunEnded) || c != nil {
		t.Errorf("dial after the run's end = %v, %v, want nil, %v", c, err, errRunEnded)
	}
	if !closedFar(d.far[0]) {
		t.Error("the late dial's connection is open, want closed")
	}
	// A request starting again opens connections again.
	s.begin()
	c, err := dial(context.Background(), "tcp", "x")
	if err != nil {
		t.Fatalf("dial after a new request began: %v", err)
	}
	s.end()
	c.Close()
}
