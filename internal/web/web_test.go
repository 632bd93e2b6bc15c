package web

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestListenRefusesAddressesOthersCanReach(t *testing.T) {
	tests := []struct {
		addr    string
		public  bool
		wantErr error
	}{
		{addr: "", wantErr: nil},
		{addr: "127.0.0.1:0", wantErr: nil},
		{addr: "localhost:0", wantErr: nil},
		{addr: "[::1]:0", wantErr: nil},
		{addr: "0.0.0.0:0", wantErr: ErrNotLoopback},
		{addr: ":0", wantErr: ErrNotLoopback},
		{addr: "0.0.0.0:0", public: true, wantErr: nil},
	}
	for _, tt := range tests {
		ln, err := Listen(tt.addr, tt.public)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("Listen(%q, %v) error = %v, want %v", tt.addr, tt.public, err, tt.wantErr)
		}
		if err == nil {
			if ln.Addr().String() == "" || !strings.HasPrefix(URL(ln), "http://") {
				t.Errorf("Listen(%q): URL %q", tt.addr, URL(ln))
			}
			ln.Close()
		}
	}
}

func TestServeStopsWithItsContext(t *testing.T) {
	ln, err := Listen("", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	events := NewEvents(8)
	mux := http.NewServeMux()
	mux.Handle("/events", events)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, mux) }()

	// An open event stream must not hold the shutdown up.
	resp, err := http.Get(URL(ln) + "events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("Content-Security-Policy"); !strings.Contains(got, "script-src 'self'") {
		t.Errorf("Content-Security-Policy = %q, want script-src 'self'", got)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve = %v, want nil after its context ended", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return after its context ended")
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	h := ReadOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	for _, method := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, "/", nil))
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s: status %d, want 405", method, rec.Code)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != "ok" {
		t.Errorf("GET: %d %q, want 200 ok", rec.Code, rec.Body.String())
	}
}

// readEvents reads n events from an event stream: "id name data" each.
func readEvents(t *testing.T, r io.Reader, n int) []string {
	t.Helper()
	var got []string
	var id, name string
	sc := bufio.NewScanner(r)
	for len(got) < n && sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			got = append(got, id+" "+name+" "+strings.TrimPrefix(line, "data: "))
		}
	}
	return got
}

func TestEventsResumeAfterLastEventID(t *testing.T) {
	events := NewEvents(3)
	srv := httptest.NewServer(events)
	defer srv.Close()
	defer events.Close()
	for i, text := range []string{"a", "b", "c", "d"} {
		if err := events.Publish("row", map[string]any{"i": i, "text": text}); err != nil {
			t.Fatal(err)
		}
	}
	// Only the last three are kept; a page that saw event 2 gets 3 and 4.
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Last-Event-ID", "2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	got := readEvents(t, resp.Body, 2)
	want := []string{`3 row {"i":2,"text":"c"}`, `4 row {"i":3,"text":"d"}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("resumed events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// And what comes next arrives live.
	events.Publish("row", map[string]any{"i": 4, "text": "e"})
	if got := readEvents(t, resp.Body, 1); len(got) != 1 || got[0] != `5 row {"i":4,"text":"e"}` {
		t.Errorf("live event = %q", got)
	}
}

func TestFormat(t *testing.T) {
	tests := []struct{ got, want string }{
		{FormatBytes(812), "812 B"},
		{FormatBytes(3264), "3.3 kB"},
		{FormatBytes(14_200_000), "14.2 MB"},
		{FormatMS(0.42), "0.4 ms"},
		{FormatMS(12.4), "12 ms"},
		{FormatMS(3400), "3.4 s"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
