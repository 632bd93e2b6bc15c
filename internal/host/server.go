package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
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
	info    record.Server
	tools   []*mcp.Tool
	// tasks knows which of tools require task augmentation (stdio only).
	tasks *taskWatch
	// shared is set for a Pool's server: hosts that use it leave it running.
	shared bool
	// defs caches a shared server's rendered definitions (see def).
	defs map[string]json.RawMessage

	mu sync.Mutex
	// dead says why the server can no longer be used ("" while it can).
	dead string
	// calls are the host's calls in flight on this server, oldest first, so
	// that a 2025-11-25 server's elicitation/create request, which names no
	// call, is counted against the call that caused it.
	calls []*callState
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
	if s.session != nil {
		s.session.Close()
	}
	if s.proc != nil {
		s.proc.stop()
	}
}

// discoverProbe watches the connection handshake, so that the host can say
// what a server offered when no revision could be agreed.
type discoverProbe struct {
	mu       sync.Mutex
	answered bool // server/discover got any answer (result or error)
	// rejected: the request got no JSON-RPC answer at all (an HTTP error
	// such as 401, or no connection): neither a refusal nor silence.
	rejected  bool
	errCode   int64    // its JSON-RPC error code, if any
	supported []string // the revisions it listed
}

func (p *discoverProbe) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "server/discover" {
			return res, err
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		var werr *jsonrpc.Error
		switch {
		case errors.As(err, &werr) && isRejection(werr) && ctx.Err() == nil:
			// Not a deadline: that is silence, for which auto mode restarts.
			p.rejected = true
		case err == nil:
			p.answered = true
			if d, ok := res.(*mcp.DiscoverResult); ok {
				p.supported = d.SupportedVersions
			}
		case errors.As(err, &werr):
			p.answered = true
			p.errCode = werr.Code
			var data mcp.UnsupportedProtocolVersionData
			if json.Unmarshal(werr.Data, &data) == nil {
				p.supported = data.Supported
			}
		}
		return res, err
	}
}

// transportFailed reports whether server/discover got no JSON-RPC answer
// (see http.go): the connect error then says why, and it is no version
// question.
func (p *discoverProbe) transportFailed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rejected
}

func (p *discoverProbe) summary() (answered bool, code int64, supported []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.answered, p.errCode, slices.Clone(p.supported)
}

// connect starts (or reaches) one server and agrees on a revision as the
// protocol mode says. The returned record says what happened even when the
// connection failed.
func (h *Host) connect(ctx context.Context, spec ServerSpec) (*serverConn, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, h.opts.ConnectTimeout)
	defer cancel()
	s := &serverConn{spec: spec}
	s.info = record.Server{Operation: record.OpConnect, Name: spec.Name, Mode: string(h.opts.Protocol)}
	fail := func(err error) (*serverConn, error) {
		s.info.ConnectMS = msSince(start)
		s.info.Error = err.Error()
		s.info.Time = time.Now().UTC()
		return s, err
	}

	var (
		probe discoverProbe
		err   error
	)
	switch h.opts.Protocol {
	case ModeLegacy:
		err = h.dial(ctx, s, Revision20251125, &probe)
	case ModePinned:
		err = h.dial(ctx, s, Revision20260728, &probe)
		if err == nil && s.negotiated() != Revision20260728 {
			s.info.Offered = s.negotiated()
			s.info.VersionFailure = true
			s.close()
			s.session, s.proc = nil, nil
			err = fmt.Errorf("server %s speaks %s, not %s: the protocol mode is pinned to %s",
				spec.Name, s.info.Offered, Revision20260728, Revision20260728)
		} else if err != nil {
			if answered, code, supported := probe.summary(); !answered && !probe.transportFailed() {
				s.info.VersionFailure = ctx.Err() != nil
				err = fmt.Errorf("server %s did not answer server/discover within %v (pinned to %s): %w",
					spec.Name, h.opts.ConnectTimeout, Revision20260728, err)
			} else if code != 0 {
				s.info.VersionFailure = true
				s.info.Offered = newest(supported)
				err = fmt.Errorf("server %s refused %s (server/discover: error %d): %w", spec.Name, Revision20260728, code, err)
			}
		}
	default: // auto
		dctx, dcancel := context.WithTimeout(ctx, h.opts.DiscoverTimeout)
		err = h.dial(dctx, s, Revision20260728, &probe)
		dcancel()
		if answered, _, _ := probe.summary(); err != nil && !answered && !probe.transportFailed() && ctx.Err() == nil {
			// Some old servers never answer a method they do not know. Their
			// connection is unusable after the SDK gave up, so start afresh
			// and speak 2025-11-25 from the first message.
			h.logf(slog.LevelInfo, "server did not answer server/discover; restarting it as legacy",
				"server", spec.Name, "after", h.opts.DiscoverTimeout.String())
			s.info.Restarted = true
			err = h.dial(ctx, s, Revision20251125, &probe)
		}
	}
	if err != nil {
		return fail(err)
	}
	s.info.Protocol = s.negotiated()
	if _, _, supported := probe.summary(); len(supported) > 0 {
		s.info.Offered = newest(supported)
	} else {
		s.info.Offered = s.info.Protocol
	}
	if res := s.session.InitializeResult(); res != nil && res.ServerInfo != nil {
		s.info.ServerName, s.info.ServerVersion = res.ServerInfo.Name, res.ServerInfo.Version
	}
	tools, err := listTools(ctx, s.session)
	if err != nil {
		s.close()
		s.session, s.proc = nil, nil
		return fail(fmt.Errorf("list tools of %s: %w", spec.Name, err))
	}
	s.tools = tools
	s.info.Tools = len(tools)
	s.info.ConnectMS = msSince(start)
	s.info.Time = time.Now().UTC()
	return s, nil
}

func (s *serverConn) negotiated() string {
	if s.session == nil || s.session.InitializeResult() == nil {
		return ""
	}
	return s.session.InitializeResult().ProtocolVersion
}

// newest returns the newest revision in a list (revisions sort as dates).
func newest(revisions []string) string {
	if len(revisions) == 0 {
		return ""
	}
	return slices.Max(revisions)
}

// maxMessageBytes bounds one message from a stdio server. The SDK's
// default (16 MiB) ends the connection on a large but legitimate result; the
// host reads up to this much and cuts it to the result budget.
const maxMessageBytes = 64 << 20

// maxToolPages bounds tools/list pagination: a server that keeps sending
// cursors is broken, and the host must not loop on it.
const maxToolPages = 100

func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	seen := map[string]bool{}
	params := &mcp.ListToolsParams{}
	for page := 0; ; page++ {
		if page == maxToolPages {
			return nil, fmt.Errorf("tools/list did not end after %d pages", maxToolPages)
		}
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			return nil, err
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			return tools, nil
		}
		if seen[res.NextCursor] {
			return nil, fmt.Errorf("tools/list returned cursor %q twice", res.NextCursor)
		}
		seen[res.NextCursor] = true
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
}

// dial starts the server (or opens its URL) and connects an mcp.Client
// asking for revision, filling s.session and s.proc. On error nothing is
// left running.
func (h *Host) dial(ctx context.Context, s *serverConn, revision string, probe *discoverProbe) error {
	name := s.spec.Name
	client := mcp.NewClient(&mcp.Implementation{Name: h.opts.ClientName, Version: Version}, h.clientOptions(name))
	client.AddSendingMiddleware(probe.middleware)

	wire := h.wire.forServer(name)
	var transport mcp.Transport
	var proc *process
	if s.spec.URL != "" {
		t, err := httpTransport(s.spec, wire)
		if err != nil {
			return fmt.Errorf("connect %s: %w", name, err)
		}
		transport = t
	} else {
		p, err := startProcess(s.spec, h.opts.TerminateGrace, h.opts.Groups, h.stderrSink(name, wire))
		if err != nil {
			return fmt.Errorf("start %s: %w", name, err)
		}
		proc = p
		var r io.ReadCloser = p.stdout
		var w io.WriteCloser = p.stdin
		if wire != nil {
			r = &tapReader{r: p.stdout, tap: &lineWriter{fn: func(l []byte) { wire.message("stdout", "<-", l) }}}
			w = &tapWriter{w: p.stdin, tap: &lineWriter{fn: func(l []byte) { wire.message("stdin", "->", l) }}}
		}
		// Results up to maxMessageBytes are read (and then cut to the
		// result budget); a larger line ends the connection.
		transport = guardedTransport{&mcp.IOTransport{Reader: r, Writer: w, MaxLineLength: maxMessageBytes}}
		s.tasks = newTaskWatch()
		transport = taskWatchTransport{transport, s.tasks}
	}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		if proc != nil {
			proc.stop()
			if status := proc.exitStatus(); status != "" && ctx.Err() == nil {
				err = fmt.Errorf("%w (the server %s)", err, status)
			}
		}
		return fmt.Errorf("connect %s: %w", name, err)
	}
	s.session, s.proc = cs, proc
	return nil
}

// clientOptions declares exactly what the host implements: elicitation
// (forms; url requests are declared so that servers ask rather than fail, and
// the host declines every one of them), and no roots, sampling or logging.
// The SDK's own multi-round-trip retries are off: the host runs the rounds
// itself, to record each one and to put every question to the person.
func (h *Host) clientOptions(server string) *mcp.ClientOptions {
	opts := &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Logger:         slog.New(slog.DiscardHandler),
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

// stderrSink returns what handles a server's stderr lines: the server log
// (JSON lines pass through, other text is wrapped) and the wire trace.
func (h *Host) stderrSink(server string, wire *serverWire) func([]byte) {
	return func(line []byte) {
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
				"ts": time.Now().UTC(), "operation": "server.stderr", "server": server, "text": string(line),
			})
			out = append(out, '\n')
		}
		h.logMu.Lock()
		h.opts.ServerLog.Write(out)
		h.logMu.Unlock()
	}
}

func msSince(t time.Time) float64 {
	return float64(time.Since(t).Microseconds()) / 1000
}
