package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hosteval/hosteval/servers/fakeapi/endpoint"
)

// connCounter counts the TCP connections a server accepted and closed.
type connCounter struct {
	opened, closed atomic.Int64
	// closes is signalled on every close, for a test that waits for the
	// run's connections to go.
	closes chan struct{}
}

func (c *connCounter) hook(_ net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		c.opened.Add(1)
	case http.StateClosed, http.StateHijacked:
		c.closed.Add(1)
		select {
		case c.closes <- struct{}{}:
		default:
		}
	}
}

// waitAllClosed waits until every connection opened has closed, or the
// patience runs out (a bound on a broken run, not a timing).
func (c *connCounter) waitAllClosed(patience time.Duration) bool {
	give := time.After(patience)
	for c.closed.Load() < c.opened.Load() {
		select {
		case <-c.closes:
		case <-give:
			return false
		}
	}
	return true
}

// TestARunReusesItsConnectionsToTheEndpoint runs 1,280 cases at
// concurrency 64, each a model request and a judge's, against the fake
// endpoint: the run opens at most as many connections as it has cases in
// flight (and a few more: a connection the server has just closed as
// idle), not one per request, and closes them all when it ends. With the
// standard library's default of 2 idle connections per host, about half
// of the 2,560 requests opened a connection of their own.
func TestARunReusesItsConnectionsToTheEndpoint(t *testing.T) {
	testEnv(t)
	const cases, concurrency, slack = 1280, 64, 8
	h, err := endpoint.New(endpoint.Config{
		Model: "gpt-oss-120b",
		Rules: []endpoint.Rule{
			{Match: `(?s)<rubric>`, Answer: `{"score": 1, "reason": "It answers."}`},
			{Match: `(?i)who owns`, Answer: "Camille Michel owns it."},
		},
		// Long enough that the cases' requests overlap whatever the
		// machine's load: each case holds its connection for a while.
		Delay: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	conns := &connCounter{closes: make(chan struct{}, 1)}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = conns.hook
	srv.Start()
	t.Cleanup(srv.Close)

	cs := suite(t, fmt.Sprintf(`name: owner
servers: []
repeat: %d
model:
  openai: {base_url: "%[2]s/v1", model: gpt-oss-120b}
question: who owns jump-prod-02?
expect:
  - {answer_matches: Camille Michel}
  - judge:
      rubric: Names the owner.
      model: {openai: {base_url: "%[2]s/v1", model: gpt-oss-120b}}
`, cases, srv.URL))
	res, err := Run(context.Background(), cs, Options{Dir: filepath.Join(t.TempDir(), "r"), Concurrency: concurrency, Logs: LogsNone})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed != cases {
		t.Fatalf("run: %+v, want %d passed", res, cases)
	}
	if got := h.Requests(); got != 2*cases {
		t.Errorf("the endpoint answered %d requests, want %d (a model request and a judge's per case)", got, 2*cases)
	}
	if got := conns.opened.Load(); got > concurrency+slack {
		t.Errorf("the run opened %d connections for %d requests at concurrency %d, want at most %d", got, 2*cases, concurrency, concurrency+slack)
	}
	// The run has closed its side; the server sees each close soon after.
	if !conns.waitAllClosed(time.Minute) {
		t.Errorf("a minute after the run: %d of %d connections closed, want all", conns.closed.Load(), conns.opened.Load())
	}
}
