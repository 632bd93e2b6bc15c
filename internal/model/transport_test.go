package model

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// answerServer answers every request with a one-word completion after
// delay, counting the connections it accepted and closed and the
// protocols requests came in.
type answerServer struct {
	*httptest.Server
	opened, closed atomic.Int64
	closes         chan struct{}
	mu             sync.Mutex
	protos         map[string]int
}

func newAnswerServer(t *testing.T, delay time.Duration, tls bool) *answerServer {
	s := &answerServer{closes: make(chan struct{}, 1), protos: map[string]int{}}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.protos[r.Proto]++
		s.mu.Unlock()
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"yes"}}]}`))
	}))
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		switch state {
		case http.StateNew:
			s.opened.Add(1)
		case http.StateClosed, http.StateHijacked:
			s.closed.Add(1)
			select {
			case s.closes <- struct{}{}:
			default:
			}
		}
	}
	if tls {
		s.EnableHTTP2 = true
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

// waitAllClosed waits until every connection opened has closed, or the
// patience runs out (a bound on a broken client, not a timing).
func (s *answerServer) waitAllClosed(patience time.Duration) bool {
	give := time.After(patience)
	for s.closed.Load() < s.opened.Load() {
		select {
		case <-s.closes:
		case <-give:
			return false
		}
	}
	return true
}

// ask sends n requests, concurrency at a time, through models sharing
// reg, as a run's cases do.
func (s *answerServer) ask(t *testing.T, reg *Endpoints, n, concurrency int) {
	t.Helper()
	m, err := NewOpenAI(OpenAIConfig{BaseURL: s.URL + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	next := make(chan struct{})
	for range concurrency {
		wg.Go(func() {
			caseModel := m.With(Wire{Endpoints: reg})
			for range next {
				if _, err := caseModel.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "q"}}}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for range n {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
}

func TestEndpointsKeepAConnectionPerConcurrentRequest(t *testing.T) {
	tests := []struct {
		name        string
		concurrency int
		maxConns    int64
	}{
		{"concurrency 16", 16, 16},
		// Without the run's concurrency, the registry keeps
		// DefaultIdleConns and bounds nothing: a few more may open.
		{"default", 0, DefaultIdleConns + 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newAnswerServer(t, 2*time.Millisecond, false)
			reg := NewEndpoints(&EndpointsOptions{Concurrency: tt.concurrency})
			workers := tt.concurrency
			if workers == 0 {
				workers = DefaultIdleConns
			}
			s.ask(t, reg, 400, workers)
			if got := s.opened.Load(); got > tt.maxConns {
				t.Errorf("400 requests, %d at a time, opened %d connections, want at most %d", workers, got, tt.maxConns)
			}
			reg.CloseIdle()
			if !s.waitAllClosed(time.Minute) {
				t.Errorf("after CloseIdle %d of %d connections are closed, want all", s.closed.Load(), s.opened.Load())
			}
		})
	}
}

func TestEndpointsSpeakHTTP2WhereOffered(t *testing.T) {
	s := newAnswerServer(t, 0, true)
	roots := x509.NewCertPool()
	roots.AddCert(s.Certificate())
	reg := NewEndpoints(&EndpointsOptions{Concurrency: 8, RootCAs: roots})
	s.ask(t, reg, 64, 8)
	s.mu.Lock()
	got := s.protos["HTTP/2.0"]
	s.mu.Unlock()
	if got != 64 {
		t.Errorf("requests by protocol: %v, want 64 over HTTP/2.0", s.protos)
	}
	// The first 8 requests start at once and may each dial before any
	// connection is known to speak HTTP/2; after them, every request
	// shares those connections.
	if n := s.opened.Load(); n > 8 {
		t.Errorf("%d connections opened for 64 requests, 8 at a time, want at most 8", n)
	}
	reg.CloseIdle()
	if !s.waitAllClosed(time.Minute) {
		t.Errorf("after CloseIdle %d of %d connections are closed, want all", s.closed.Load(), s.opened.Load())
	}
}
