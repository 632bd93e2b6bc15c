package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/record"
)

// serverConn is the host's client for one server: one mcp.Client and its
// session, the child process behind a stdio server, and what the host learnt
// when it connected.
type serverConn struct {
	spec    ServerSpec
	session *mcp.ClientSession
	proc    *process // nil for an HTTP server
	// stderr keeps what the server's processes write on stderr.
	stderr *stderrKeeper
	// stdio is the connection's transport over the process's pipes (nil
	// for an HTTP or in-process server).
	stdio pipeState
	info  record.Server
	// watch follows the connection's messages as the server wrote them
	// (see watch.go).
	watch *watch
	// ends notes the sessions the server ended (HTTP only: session.go);
	// reinitMu makes one new session of however many calls saw the end.
	ends     *sessionEnds
	reinitMu sync.Mutex
	// shared is set for a Pool's server: hosts that use it leave it running.
	shared bool
	// orphans counts the processes its stops found left outside the
	// server's process group, and ended (orphans.go).
	orphans atomic.Int64
	// catalog is set for a server whose tools come from a catalog: no
	// session, nothing to close, and nothing is ever sent to it.
	catalog *Catalog

	// listMu serialises listings; listedChanges is the watch's count of
	// tools/list_changed notifications when the current listing started.
	listMu        sync.Mutex
	listedChanges int

	mu sync.Mutex
	// listing is the server's tools as last listed; a new listing replaces
	// it whole (see follow.go).
	listing *listing
	// defs caches a shared server's rendered definitions (see def).
	defs map[string]json.RawMessage
	// dead says why the server can no longer be used ("" while it can).
	dead string
	// calls are the host's calls in flight on this server, oldest first, so
	// that a 2025-11-25 server's elicitation/create request, which names no
	// call, is counted against the call that caused it.
	calls []*callState
}

// listed reports whether the server's tools are known: it connected, or
// its tools come from a catalog.
func (s *serverConn) listed() bool { return s.sess() != nil || s.catalog != nil }

// inputStall returns the write to the server that ended with its context
// while the pipe was full, or nil.
func (s *serverConn) inputStall() *stalledWrite {
	if s.stdio == nil {
		return nil
	}
	return s.stdio.stall()
}

// answerOverLimit returns why the answer of ex was not read, when it was
// over the host's limit for one message (or such a message ended the
// connection), or nil.
func (s *serverConn) answerOverLimit(ex *exchange) *answerTooLarge {
	if s.watch != nil {
		if e := s.watch.answerOverLimit(ex); e != nil {
			return e
		}
	}
	if s.stdio == nil {
		return nil
	}
	return s.stdio.overLimit()
}

func (s *serverConn) deadReason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dead
}

func (s *serverConn) markDead(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead == "" {
		s.dead = reason
	}
}

func (s *serverConn) begin(c *callState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
}

func (s *serverConn) end(c *callState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = slices.DeleteFunc(s.calls, func(x *callState) bool { return x == c })
}

// close ends the session and stops the process.
func (s *serverConn) close() {
	s.endInput()
	if s.proc != nil {
		s.proc.stop()
	}
}

// endInput closes, for a stdio server, its input, then the connection:
// the server's grace to exit starts here (process.stop waits out the
// rest). The input goes first: the session's close, which waits for its
// goroutines, took 0.3 ms, which the grace, and a server that exits at
// the end of its input, waited out. Closing twice is harmless: close calls
// it again.
func (s *serverConn) endInput() {
	if s.proc != nil {
		s.proc.endInput()
	}
	if cs := s.sess(); cs != nil {
		cs.Close()
	}
}

func (s *serverConn) negotiated() string {
	cs := s.sess()
	if cs == nil || cs.InitializeResult() == nil {
		return ""
	}
	return cs.InitializeResult().ProtocolVersion
}

// newest returns the newest revision in a list (revisions sort as dates).
func newest(revisions []string) string {
	if len(revisions) == 0 {
		return ""
	}
	return slices.Max(revisions)
}

// currentListing returns the server's tools as last listed (empty before
// the first listing).
func (s *serverConn) currentListing() *listing {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listing == nil {
		return &listing{}
	}
	return s.listing
}

// setListing replaces the server's tools; the definitions rendered from the
// old ones go with them.
func (s *serverConn) setListing(l *listing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listing, s.defs = l, nil
}

// maxMessageBytes bounds one message from a stdio server. The SDK's
// default (16 MiB) ends the connection on a large but legitimate result; the
// host reads up to this much and cuts it to the result budget.
const maxMessageBytes = 64 << 20

// clientOptions declares exactly what the host implements: elicitation
// (forms; url requests are declared so that servers ask rather than fail, and
// the host declines every one of them), tool list changes, and no roots,
// sampling or logging.
// The SDK's own multi-round-trip retries are off: the host runs the rounds
// itself, to record each one and to put every question to the person.
func (h *Host) clientOptions(server string) *mcp.ClientOptions {
	opts := &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Logger:         slog.New(slog.DiscardHandler),
		// Set, it makes the SDK open a subscriptions/listen stream on a
		// 2026-07-28 connection to a server that offers tools.listChanged.
		// The watch reads the notifications themselves (see follow.go).
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {},
	}
	if !h.opts.NoElicitation {
		opts.Capabilities.Elicitation = &mcp.ElicitationCapabilities{
			Form: &mcp.FormElicitationCapabilities{},
			URL:  &mcp.URLElicitationCapabilities{},
		}
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return h.legacyElicit(ctx, server, req.Params), nil
		}
	}
	return opts
}

// undeclared answers the server's requests for what the host did not
// declare, sampling and roots, with -32601 (method not found), as any
// method the client does not implement: the go-sdk's client answers
// sampling with its own -31001 and roots with an empty list, which says
// the host has roots and none of them (issue 24).
func undeclared(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "sampling/createMessage", "roots/list":
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method + " (this host declares no " + strings.SplitN(method, "/", 2)[0] + ")"}
		}
		return next(ctx, method, req)
	}
}

// newStderr returns what keeps a server's stderr lines (stderr.go): those
// kept go to the server log (JSON lines pass through, other text is
// wrapped) and the wire trace; what was left out is said in the host's log
// and the trace.
func (h *Host) newStderr(server string) *stderrKeeper {
	wire := h.wire.forServer(server)
	pass := func(line []byte, at time.Time) {
		if wire != nil {
			wire.stderr(line)
		}
		if h.opts.ServerLog == nil {
			return
		}
		var out []byte
		if json.Valid(line) && len(line) > 0 && line[0] == '{' {
			out = append(append(out, line...), '\n')
		} else {
			out, _ = json.Marshal(map[string]any{
				"ts": at.UTC(), "operation": "server.stderr", "server": server, "text": string(line),
			})
			out = append(out, '\n')
		}
		h.logMu.Lock()
		h.opts.ServerLog.Write(out)
		h.logMu.Unlock()
	}
	budget := h.opts.StderrBytes
	note := func(bytes, lines int64) {
		text := droppedText(budget, bytes, lines)
		h.logf(slog.LevelWarn, text, "operation", "host.stderr_dropped", "server", server, "dropped_bytes", bytes, "dropped_lines", lines)
		if wire != nil {
			wire.trace.write(record.WireLine{Server: server, Stream: "stderr", Kind: "dropped", Bytes: int(bytes), Text: text})
		}
	}
	return newStderrKeeper(budget, pass, note)
}

func msSince(t time.Time) float64 {
	return float64(time.Since(t).Microseconds()) / 1000
}
