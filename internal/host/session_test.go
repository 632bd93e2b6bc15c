package host

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/record"
)

// Issue 24, point 1: a 2025-11-25 server over Streamable HTTP that ends
// its sessions (the fixture's FIXTURE_SESSION_EXPIRE: after 2 requests
// with the session's id, HTTP 404 to everything with it; initialize
// carries none). The host starts a new
// session, once per end, sends the refused request again on it, and
// records the new sessions on the connection; with the go-sdk's
// plain-text 404 and with the TypeScript SDK's JSON-RPC error in the body.
func TestSessionExpiryStartsANewSession(t *testing.T) {
	t.Parallel()
	for _, body := range []string{"text", "json"} {
		t.Run(body, func(t *testing.T) {
			t.Parallel()
			spec := fixtureHTTP(t, "chaos", nil, "FIXTURE_HTTP_SESSIONS=1", "FIXTURE_SESSION_EXPIRE=2", "FIXTURE_SESSION_EXPIRE_BODY="+body)
			h := startHost(t, Options{Servers: []ServerSpec{spec}, Protocol: ModeLegacy})
			// A session answers tools/list and one call; the second call
			// gets the 404, a new session answers it (the call sent
			// again), the third call is its second request, and the
			// fourth gets a 404 again.
			for i, want := range []int{0, 1, 1, 2} {
				text, ev := call(t, h, "chaos__ok", `{"message":"m"}`)
				if ev.Outcome != record.OutcomeOK || !strings.Contains(text, "m") {
					t.Fatalf("call %d: outcome %s, text %q; want ok", i+1, ev.Outcome, text)
				}
				if ev.Rounds != 1 {
					t.Errorf("call %d: %d rounds, want 1 (a request sent again is the same round)", i+1, ev.Rounds)
				}
				s := h.Servers()[0]
				if s.Reinitialized != want || (want > 0) == s.ReinitializedAt.IsZero() {
					t.Errorf("after call %d: reinitialized %d at %v, want %d", i+1, s.Reinitialized, s.ReinitializedAt, want)
				}
				if s.Error != "" {
					t.Errorf("after call %d: server error %q", i+1, s.Error)
				}
			}
			if n := (&record.Record{Servers: h.Servers()}).Counts().Reinitialized; n != 2 {
				t.Errorf("counts: reinitialized %d, want 2", n)
			}
		})
	}
}

// A call the server had taken when it ended the session is not sent
// again: whether it ran is not known. The model is told it was
// interrupted, and the server's tools go on working on the new session.
func TestSessionExpiryInterruptsACallInFlight(t *testing.T) {
	t.Parallel()
	spec := fixtureHTTP(t, "support", nil, "FIXTURE_HTTP_SESSIONS=1", "FIXTURE_SESSION_EXPIRE=2",
		"SUPPORT_SLOW_SECONDS=120", "SUPPORT_PROGRESS_SECONDS=0.05")
	proxy := newProgressProxy(t, spec.URL)
	spec.URL = proxy.url
	h := startHost(t, Options{Servers: []ServerSpec{spec}, Protocol: ModeLegacy, Budgets: budget.Budgets{ToolTimeout: 20 * time.Second}})
	type answer struct {
		text string
		ev   record.Call
	}
	slow := make(chan answer, 1)
	go func() {
		text, ev := call(t, h, "support__search_knowledge", `{"query":"return window"}`)
		slow <- answer{text, ev}
	}()
	// The server has taken the slow call once it reports progress on it.
	select {
	case <-proxy.progressed:
	case a := <-slow:
		t.Fatalf("the slow call ended first: %s, %q", a.ev.Outcome, a.text)
	}
	// Its third request (after tools/list and the slow call): the server
	// ends the session, and the slow call with it.
	text, ev := call(t, h, "support__get_ticket", `{"ticket_id":"T-30002"}`)
	if ev.Outcome != record.OutcomeOK || !strings.Contains(text, "T-30002") {
		t.Errorf("the call that met the end: outcome %s, %q; want it sent again on the new session, and answered", ev.Outcome, text)
	}
	a := <-slow
	want := "error: the call was interrupted: the server support ended its session while the call was running, so it is not known whether it finished."
	if a.ev.Outcome != record.OutcomeError || !strings.HasPrefix(a.text, want) {
		t.Errorf("slow call: outcome %s, text %q\nwant error, %q...", a.ev.Outcome, a.text, want)
	}
	if s := h.Servers()[0]; s.Reinitialized != 1 || s.Error != "" {
		t.Errorf("server: reinitialized %d, error %q; want 1, none", s.Reinitialized, s.Error)
	}
	if text, ev := call(t, h, "support__get_ticket", `{"ticket_id":"T-30002"}`); ev.Outcome != record.OutcomeOK {
		t.Errorf("a later call: outcome %s, %q; want the new session's answer", ev.Outcome, text)
	}
}

// progressProxy passes requests to a server and says when the first
// progress notification comes back.
type progressProxy struct {
	url        string
	progressed chan struct{}
	once       sync.Once
}

func newProgressProxy(t *testing.T, target string) *progressProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &progressProxy{progressed: make(chan struct{})}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	rp.FlushInterval = -1
	rp.ErrorLog = log.New(io.Discard, "", 0) // the streams the server ends
	rp.ModifyResponse = func(resp *http.Response) error {
		resp.Body = &progressBody{ReadCloser: resp.Body, seen: func() { p.once.Do(func() { close(p.progressed) }) }}
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	p.url = srv.URL + u.Path
	return p
}

type progressBody struct {
	io.ReadCloser
	seen func()
}

func (b *progressBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if bytes.Contains(p[:n], []byte("notifications/progress")) {
		b.seen()
	}
	return n, err
}
