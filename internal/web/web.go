// Package web is the local web layer that `hosteval view` (read-only pages
// over a results folder) and `hosteval lab` (the host as a chat page) are
// built on: a listener on the loopback interface, a server that stops with
// its context, the page frame and stylesheet every page shares, a
// server-sent events stream for live pages, and the headers that keep a
// page from running anything but its own scripts.
//
// It is the standard library only (net/http, html/template, embed): no Node
// build step. Every string that came from a model, a server or a scenario
// reaches a page through html/template, which escapes it for its context;
// the Content-Security-Policy forbids inline scripts as a second wall, so a
// page's scripts are files under static/.
//
// The pages themselves live with the commands that serve them; this
// package owns only what they share.
package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"
)

// DefaultAddr listens on the loopback interface on a free port.
const DefaultAddr = "127.0.0.1:0"

// ErrNotLoopback is returned by Listen for an address another machine
// could reach, unless the caller allows it.
var ErrNotLoopback = errors.New("not a loopback address")

// Listen listens on addr (DefaultAddr when empty). Results and a live host
// are not for the network: an address that is not loopback is refused
// unless public is set, and then the caller has said so on purpose.
func Listen(addr string, public bool) (net.Listener, error) {
	if addr == "" {
		addr = DefaultAddr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", addr, err)
	}
	if !public && !isLoopback(host) {
		return nil, fmt.Errorf("listen address %q: %w (use 127.0.0.1, or allow it on purpose)", addr, ErrNotLoopback)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	return ln, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL is the address a person opens for a listener.
func URL(ln net.Listener) string { return "http://" + ln.Addr().String() + "/" }

// Serve serves h on ln until ctx ends, then shuts down: open event streams
// are closed by their requests' contexts, other requests get a moment to
// finish. It returns nil after a shutdown caused by ctx.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           Secure(Guard(h, listensOnLoopback(ln))),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// listensOnLoopback reports whether ln takes connections only from this
// machine.
func listensOnLoopback(ln net.Listener) bool {
	host, _, err := net.SplitHostPort(ln.Addr().String())
	return err == nil && isLoopback(host)
}

// Guard keeps other web sites out, the one guard of every page served
// (Serve applies it): view shows every record, wire trace and transcript
// of a results folder, and lab runs a host that acts for the person. On
// the loopback interface (loopback), a request must name a loopback host,
// or it is refused with 421: a page whose name an attacker rebinds to
// 127.0.0.1 reaches the listener, but under its own name (DNS rebinding).
// Whatever the interface, a request that may change something (not GET or
// HEAD) must come from the page's own origin as JSON, which a form of
// another site cannot send without a preflight that is never answered.
func Guard(h http.Handler, loopback bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loopback && !loopbackHost(r.Host) {
			http.Error(w, "hosteval answers only on the loopback interface (127.0.0.1 or localhost)", http.StatusMisdirectedRequest)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if origin := r.Header.Get("Origin"); origin != "" && origin != "http://"+r.Host {
				http.Error(w, "a page of another origin may not send requests here", http.StatusForbidden)
				return
			}
			if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
				http.Error(w, "want a JSON body (Content-Type: application/json)", http.StatusUnsupportedMediaType)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header names this machine.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	return isLoopback(strings.Trim(host, "[]"))
}

// contentSecurityPolicy allows the page's own scripts, styles and images
// and nothing else: no inline script, no other origin, no framing.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Secure adds the headers every page gets.
func Secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", contentSecurityPolicy)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.ServeHTTP(w, r)
	})
}

// ReadOnly refuses every method that could change something, for pages
// that only show what is on disk.
func ReadOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "read-only: only GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// WriteJSON writes v as JSON with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v) // the status is sent; a failed write has no one to tell
}
