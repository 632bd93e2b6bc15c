package web_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/internal/web"
	"github.com/hosteval/hosteval/internal/web/lab"
	"github.com/hosteval/hosteval/internal/web/view"
)

// serveOver serves h as the commands do (web.Serve on a loopback
// listener) and returns its URL, without the last slash.
func serveOver(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := web.Listen("", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- web.Serve(ctx, ln, h) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return strings.TrimSuffix(web.URL(ln), "/")
}

// TestGuard: view (which shows every record, wire trace and transcript of
// a results folder) and lab (which runs a host for the person) keep other
// sites out alike, over real HTTP: a name rebound to 127.0.0.1 gets 421
// (DNS rebinding), and a request that may change something must come from
// the page's own origin as JSON. Before issue 23 view answered any Host.
func TestGuard(t *testing.T) {
	v, err := view.New(view.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	l, err := lab.Start(context.Background(), lab.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for _, srv := range []struct {
		name string
		h    http.Handler
	}{{"view", v}, {"lab", l.Handler()}} {
		t.Run(srv.name, func(t *testing.T) {
			url := serveOver(t, srv.h)
			_, port, _ := net.SplitHostPort(strings.TrimPrefix(url, "http://"))
			tests := []struct {
				name, method, contentType, origin, host string
				want                                    int
			}{
				{"its own page", "GET", "", "", "", http.StatusOK},
				{"by the name localhost", "GET", "", "", "localhost:" + port, http.StatusOK},
				{"a rebound name", "GET", "", "", "evil.example:" + port, http.StatusMisdirectedRequest},
				{"a rebound name on port 80", "GET", "", "", "evil.example", http.StatusMisdirectedRequest},
				{"a rebound name posting", "POST", "application/json", "", "evil.example:" + port, http.StatusMisdirectedRequest},
				{"a form of another site", "POST", "application/x-www-form-urlencoded", "https://evil.example", "", http.StatusForbidden},
				{"text/plain from nowhere", "POST", "text/plain", "", "", http.StatusUnsupportedMediaType},
				{"JSON from another origin", "POST", "application/json", "http://127.0.0.1:1", "", http.StatusForbidden},
			}
			for _, tt := range tests {
				var body *strings.Reader
				if tt.method == "POST" {
					body = strings.NewReader(`{}`)
				} else {
					body = strings.NewReader("")
				}
				req, _ := http.NewRequest(tt.method, url+"/", body)
				if tt.contentType != "" {
					req.Header.Set("Content-Type", tt.contentType)
				}
				if tt.origin != "" {
					req.Header.Set("Origin", tt.origin)
				}
				if tt.host != "" {
					req.Host = tt.host
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tt.want {
					t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.want)
				}
			}
		})
	}
}

// TestGuardPublic: on an interface other machines reach (view -public),
// any name is answered (the person chose to publish), but the rules on
// requests that may change something hold.
func TestGuardPublic(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	srv := httptest.NewServer(web.Guard(ok, false))
	defer srv.Close()
	for _, tt := range []struct {
		method, contentType, origin string
		want                        int
	}{
		{"GET", "", "", http.StatusOK},
		{"POST", "application/x-www-form-urlencoded", "https://evil.example", http.StatusForbidden},
	} {
		req, _ := http.NewRequest(tt.method, srv.URL, strings.NewReader("{}"))
		req.Host = "results.example:8080"
		if tt.contentType != "" {
			req.Header.Set("Content-Type", tt.contentType)
		}
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s as results.example: status %d, want %d", tt.method, resp.StatusCode, tt.want)
		}
	}
}
