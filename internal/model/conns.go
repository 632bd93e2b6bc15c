package model

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
)

// errRunEnded is what a dial that finishes after the run's end returns:
// no request waits for its connection.
var errRunEnded = errors.New("the run has ended: connection not kept")

// connSet is the run's open connections to its endpoints and the requests
// in flight on them, so that the run's end can close every connection
// and not only those the transport holds idle. The transport leaves one
// open: with HTTP/2, requests that start together each dial, the first
// connection up serves them all, and the other dials go on in the
// background; CloseIdleConnections cancels those still in their TLS
// handshake, but one whose handshake has just finished joins the HTTP/2
// pool after the pool was emptied and stays open until its idle timeout
// (90 s).
type connSet struct {
	mu       sync.Mutex
	open     map[*setConn]struct{}
	inFlight int
	// ended: closeAll ran with no request in flight and none has
	// started since; a dial finishing now serves no one.
	ended bool
}

func newConnSet() *connSet { return &connSet{open: map[*setConn]struct{}{}} }

// dialer wraps dial so that every connection it opens is in the set.
func (s *connSet) dialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return s.add(c)
	}
}

func (s *connSet) add(c net.Conn) (net.Conn, error) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		c.Close()
		return nil, errRunEnded
	}
	sc := &setConn{Conn: c, set: s}
	s.open[sc] = struct{}{}
	s.mu.Unlock()
	return sc, nil
}

func (s *connSet) begin() {
	s.mu.Lock()
	s.inFlight++
	s.ended = false
	s.mu.Unlock()
}

func (s *connSet) end() {
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
}

// closeAll closes every connection of the set when no request is in
// flight, and reports whether it did: with a request in flight, a
// connection may be carrying it.
func (s *connSet) closeAll() bool {
	s.mu.Lock()
	if s.inFlight > 0 {
		s.mu.Unlock()
		return false
	}
	s.ended = true
	open := make([]*setConn, 0, len(s.open))
	for c := range s.open {
		open = append(open, c)
	}
	s.mu.Unlock()
	for _, c := range open {
		c.Close()
	}
	return true
}

// setConn leaves its set when it closes.
type setConn struct {
	net.Conn
	set  *connSet
	once sync.Once
}

func (c *setConn) Close() error {
	c.once.Do(func() {
		c.set.mu.Lock()
		delete(c.set.open, c)
		c.set.mu.Unlock()
	})
	return c.Conn.Close()
}

// countingTransport counts the requests in flight, from RoundTrip until
// the response body is closed or the round trip fails.
type countingTransport struct {
	*http.Transport
	set *connSet
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.set.begin()
	res, err := t.Transport.RoundTrip(req)
	if err != nil {
		t.set.end()
		return nil, err
	}
	res.Body = &endBody{ReadCloser: res.Body, end: sync.OnceFunc(t.set.end)}
	return res, nil
}

type endBody struct {
	io.ReadCloser
	end func()
}

func (b *endBody) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}
