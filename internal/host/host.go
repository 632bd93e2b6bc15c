// Package host is an MCP host: it starts MCP servers, one client each,
// gathers their tools into one namespaced table, hands that table to a model,
// runs the calls the model proposes with every check the host owes the
// person, and asks the person, never the model, when a server needs a
// decision.
//
// What it owns, in the order a call meets it:
//   - servers: stdio child processes (own pipes, own process group, always
//     reaped, short terminate grace) or Streamable HTTP endpoints, connected
//     concurrently within their budgets; protocol modes auto, legacy and
//     pinned; the negotiated revision, and why, recorded per server; an
//     honest cause when a server dies (exit status, signal, a closed stdout,
//     bytes that are not JSON-RPC);
//   - the tool table: server__tool names, sanitised, collisions refused,
//     allow/deny lists, description overrides, definitions rendered once
//     with each server's inputSchema as it sent it; a new table between
//     model requests when a server says its tools changed (follow.go);
//   - the call: unknown names, bad arguments, approval for effects, the
//     per-round timeout and the server's progress, protocol errors, tool
//     errors, dead servers, the input_required rounds run by the host
//     itself, answers that the protocol makes invalid, the result budget;
//   - the wire: what the SDK's types lose, read and written as the server
//     wrote it (watch.go); a stdio connection of the host's own, which
//     splits a message's envelope on the bytes where the SDK's decodes it
//     three times (stdio.go);
//   - the person: Elicitor and Approver, one question at a time;
//   - the turn loop (Conversation), and events: one host.tool_call record per
//     call and one host.model_request record per model request, joinable
//     with the servers' logs on trace_id + step through the request _meta.
//
// # The timing model
//
// Every wait has a named budget. A budget exists to catch a broken server,
// never a slow machine: each default holds on a busy 2-core CI runner (load
// average 25) starting npm servers, and the person's time is never a tool's
// time. The host owns the first six; the last two are listed so that the
// whole model is in one place.
//
//	budget      what it measures                                default  scenario host:        servers.yaml        flag
//	connect     one server, whole: start, handshake (a restart  60s      connect_timeout       connect_timeout     -connect-timeout
//	            included), tools/list
//	discover    the answer to server/discover, counted from     20s      discover_timeout      discover_timeout    -discover-timeout
//	            when the server has read it
//	initialize  the answer to the 2025-11-25 initialize,        20s      initialize_timeout    initialize_timeout  -initialize-timeout
//	            counted from when the server has read it
//	tool        each round of a tool call, counted from when    10s      tool_timeout          -                   -tool-timeout
//	            its request starts to go out, the person's
//	            time excluded; then "no answer within N s"
//	max tool    a round that the server's progress extends      2m       max_tool_time         -                   -max-tool-time
//	            (progress_extends, -progress-extends: each
//	            report gives the round "tool" again from then)
//	person      the person's answer to an approval or a         none     person_timeout        -                   -person-timeout
//	            server's question; then no
//	model       each attempt of one model request (an attempt   2m       model openai.timeout  -                   (internal/model)
//	            that times out is retried, max_retries)
//	case        one case's turns and checks, counted once its   60s      timeout               -                   (the runner)
//	            servers are connected
//
// A server's own values in servers.yaml (an npx or JVM server is known to
// start slowly) override the host's; a scenario's host: block and the flags
// set the host's. Flags exist on every command that starts servers (run,
// tools, catalog, chat, lab, conformance-client, init). internal/budget
// declares the host's budgets, these and the limits of a turn and a call,
// once: Options embeds them.
//
// Why the handshake budgets hold on a slow machine: a Node server started by
// npx reads stdin only once its modules are loaded, seconds later on a busy
// runner. The host sees the read (the stdin pipe empties, FIONREAD, on Linux;
// elsewhere and over HTTP the budget runs from the write), so start-up is
// bounded by the connect budget alone and the discover budget measures only
// the server's silence. A server that has read discover and answers a ping
// but not discover is judged silent a second later; one that exits is
// reported at once, with its status and the end of its stderr, and is not
// started again. The connection record says why its revision was chosen
// (era_reason), and Eras remembers silent servers so that a run pays for
// finding out once per server (see connect.go).
//
// Why the tool budget holds on a slow machine: a round's clock starts as
// its request starts to go to the server (clock.go), not before the SDK
// encodes it, so a busy host's own work is not the server's time, and what
// the host says (no answer; the server stopped reading) depends on the
// server, not on the load.
package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hosteval/hosteval/internal/buildinfo"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
)

// Version is hosteval's version, sent as clientInfo.version and recorded in
// run.json: the binary's module version (see internal/buildinfo). Set once
// at start-up and never written.
var Version = buildinfo.Read().Version

// Host is a running MCP host. Create it with Start and stop it with Close.
// Its methods are safe for concurrent use, but a Conversation is not.
type Host struct {
	opts      Options
	sessionID string
	servers   map[string]*serverConn
	order     []*serverConn
	// table is the tool table in use; follow.go replaces it between model
	// requests when a server's tools change.
	table atomic.Pointer[toolTable]
	wire  *wireTrace
	// listMu serialises refreshes of the table.
	listMu sync.Mutex

	// metaSession and metaTrace are the session ID and the last call's
	// trace ID as _meta values: boxed once, not per request (callMeta).
	metaSession any
	metaTrace   atomic.Pointer[traceValue]

	logMu    sync.Mutex // serialises Log and ServerLog writes
	personMu sync.Mutex // one question to the person at a time
	stepMu   sync.Mutex
}

// Start starts and connects every server concurrently, lists their tools and
// builds the table. A server that fails to connect does not stop the others:
// it is in Servers with its error, and offers no tools. Start fails only for
// what makes the whole host unusable: two servers of one name, or ctx
// ending. A server two of whose tools become one name (see collisions)
// is in Servers with that configuration error, and offers no tools.
func Start(ctx context.Context, opts Options) (*Host, error) {
	opts = opts.withDefaults()
	if err := opts.Paths.check(); err != nil {
		return nil, err
	}
	h := &Host{opts: opts, sessionID: opts.SessionID, servers: map[string]*serverConn{}}
	if h.sessionID == "" {
		h.sessionID = NewID()
	}
	h.metaSession = h.sessionID
	if opts.Wire != nil {
		h.wire = &wireTrace{w: opts.Wire, start: time.Now(), budget: opts.WireBytes}
	}
	if err := checkSpecs(opts.Servers); err != nil {
		return nil, err
	}

	conns := make([]*serverConn, len(opts.Servers))
	var g errgroup.Group
	for i, spec := range opts.Servers {
		if spec.Catalog != nil {
			// Nothing to start: its tools are read once, for every host.
			s, err := spec.Catalog.conn(spec, opts.Protocol)
			if err != nil {
				g.Wait()
				for _, s := range conns {
					if s != nil && !s.shared && s.catalog == nil {
						s.close()
					}
				}
				return nil, err
			}
			conns[i] = s
			continue
		}
		g.Go(func() error {
			var s *serverConn
			var err error
			if spec.Shareable && opts.Pool != nil {
				s, err = opts.Pool.get(ctx, spec, opts)
			} else {
				s, err = h.connect(ctx, spec)
			}
			conns[i] = s
			if err != nil {
				h.logf(slog.LevelWarn, "server did not connect", "server", spec.Name, "error", err.Error())
			}
			return nil
		})
	}
	g.Wait()
	// A collision is the configuration error of its server alone: the
	// other servers' tools make the table.
	for i, why := range collisions(conns) {
		if why != "" {
			conns[i] = refused(conns[i], why)
		}
	}
	for _, s := range conns {
		h.servers[s.spec.Name] = s
		h.order = append(h.order, s)
		h.emitJSON(s.info)
	}
	if err := ctx.Err(); err != nil {
		h.Close()
		return nil, err
	}
	table, err := h.buildTable(opts)
	if err != nil {
		h.Close()
		return nil, err
	}
	h.table.Store(table)
	for _, name := range taskOnlyTools(h.order) {
		h.logf(slog.LevelInfo, "tool not offered: it requires task augmentation, which this host does not implement", "tool", name)
	}
	for _, s := range h.order {
		if s.session != nil && h.stepping() {
			names := s.currentListing().names()
			h.step("host", fmt.Sprintf("discovered %s: %s", text.Count(len(names), "tool"), strings.Join(names, ", ")),
				map[string]any{"protocol": s.info.Protocol, "server": s.spec.Name})
		}
	}
	return h, nil
}

// tab returns the tool table in use.
func (h *Host) tab() *toolTable { return h.table.Load() }

// Close stops every server, concurrently, and waits until each is reaped.
func (h *Host) Close() error {
	var wg sync.WaitGroup
	for _, s := range h.order {
		if !s.shared && s.catalog == nil {
			wg.Go(s.close)
		}
	}
	wg.Wait()
	if lines, bytes := h.wire.finish(); lines > 0 {
		h.logf(slog.LevelWarn, "the wire trace left messages out: over its budget", "operation", "host.wire_dropped",
			"dropped_lines", lines, "dropped_bytes", bytes, "wire_bytes", h.opts.WireBytes)
	}
	return nil
}

// SessionID is the host session's id, as sent in every request's _meta.
func (h *Host) SessionID() string { return h.sessionID }

// Servers describes every server connection, in the order they were given.
// What a server's stderr lost to its budget, and the processes it left
// outside its group, are known once the server has stopped (after Close).
func (h *Host) Servers() []record.Server {
	out := make([]record.Server, len(h.order))
	for i, s := range h.order {
		s.mu.Lock()
		out[i] = s.info
		s.mu.Unlock()
		out[i].StderrDroppedBytes, out[i].StderrDroppedLines = s.stderr.dropped()
		out[i].Orphans = int(s.orphans.Load())
		out[i].UnknownAnswers = s.watch.unknownAnswers()
	}
	return out
}

// Tools returns the whole table, offered or not, in a stable order.
func (h *Host) Tools() []*Tool { return h.tab().ordered }

// Offered returns the tools offered to the model.
func (h *Host) Offered() []*Tool { return h.tab().offered }

// ToolsJSON returns the tools array exactly as it is sent with every model
// request (with the next one, when a server's tools changed since).
func (h *Host) ToolsJSON() []byte { return h.tab().json }

// ToolDefs measures the tools array sent with every model request.
func (h *Host) ToolDefs() record.ToolDefs { return h.tab().toolDefs() }

// UnknownNames lists names given in the allow and deny lists or the
// description overrides that are not in the table.
func (h *Host) UnknownNames() []string { return h.tab().unknown }

// Offers reports whether the model is offered a tool of this name.
func (h *Host) Offers(name string) bool {
	t := h.tab().all[name]
	return t != nil && t.Offered
}

// ModelTools returns the offered tools in the model's shape.
func (h *Host) ModelTools() []model.Tool { return h.tab().modelTools() }

// NewID returns a random 128-bit id as 32 hex digits: the shape of a W3C
// trace id, used for sessions and traces alike.
func NewID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// emit logs a call's event. The log line carries argument keys, not values,
// and no result text: logs are for joining and counting, and arguments and
// results may hold what a log should not. Records keep both.
func (h *Host) emit(ev record.Call) {
	if h.opts.Calls != nil {
		h.opts.Calls(ev)
	}
	if h.opts.Log == nil {
		return // before ev is copied into an interface for nothing
	}
	ev.Arguments, ev.Result = nil, ""
	h.emitJSON(ev)
}

func (h *Host) emitJSON(v any) {
	if h.opts.Log == nil {
		return
	}
	if vl, ok := h.opts.Log.(ValueLog); ok {
		h.logMu.Lock()
		vl.LogValue(v)
		h.logMu.Unlock()
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	h.logMu.Lock()
	h.opts.Log.Write(append(data, '\n'))
	h.logMu.Unlock()
}

// A ValueLog is an Options.Log that takes the host's events (calls, model
// requests, connections, tool changes) as values, in order with the lines
// written to it, and encodes each one as a JSON line only if it keeps the
// log: a run that keeps the logs of failed cases only does not encode those
// of the cases that pass. A value handed over is not changed afterwards.
type ValueLog interface {
	io.Writer
	LogValue(v any)
}

// logf writes a plain log line in the same JSON-lines stream.
func (h *Host) logf(level slog.Level, msg string, args ...any) {
	if h.opts.Log == nil {
		return
	}
	h.logMu.Lock()
	defer h.logMu.Unlock()
	slog.New(slog.NewJSONHandler(h.opts.Log, nil)).Log(context.Background(), level, msg, args...)
}

// stepping reports whether anyone follows the steps: a step's text and
// data on the call path are built only then.
func (h *Host) stepping() bool { return h.opts.Steps != nil }

func (h *Host) step(who, text string, data map[string]any) {
	if h.opts.Steps == nil {
		return
	}
	h.stepMu.Lock()
	defer h.stepMu.Unlock()
	h.opts.Steps(Step{Who: who, Text: text, Data: data})
}

// ErrConfig marks an error in what the user configured (two tools whose
// names collide, two servers of one name, a server with a bad URL): the
// command exits 2, not 3, because no server is broken. Test with errors.Is.
var ErrConfig = errors.New("configuration error")

// checkSpecs refuses, before anything starts, server specs that cannot
// work whatever the servers do.
func checkSpecs(specs []ServerSpec) error {
	seen := map[string]bool{}
	for _, spec := range specs {
		if spec.Name == "" {
			return fmt.Errorf("%w: a server has no name", ErrConfig)
		}
		if seen[spec.Name] {
			return fmt.Errorf("%w: two servers are named %q", ErrConfig, spec.Name)
		}
		seen[spec.Name] = true
		ways := 0
		for _, set := range []bool{spec.Command != "", spec.URL != "", spec.Transport != nil, spec.Catalog != nil} {
			if set {
				ways++
			}
		}
		if ways != 1 {
			return fmt.Errorf("%w: server %s: give exactly one of a command, a URL and a catalog", ErrConfig, spec.Name)
		}
		if spec.URL != "" {
			u, err := url.Parse(spec.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("%w: server %s: url %q is not an http or https URL", ErrConfig, spec.Name, spec.URL)
			}
			for k := range spec.Headers {
				if strings.HasPrefix(http.CanonicalHeaderKey(k), "Mcp-") {
					return fmt.Errorf("%w: server %s: header %s: Mcp-* headers belong to the protocol and are set by the transport", ErrConfig, spec.Name, k)
				}
			}
		}
	}
	return nil
}

// buildTable builds the host's first table, or takes the run's when every
// server is a shared one that connected, or a catalog.
func (h *Host) buildTable(opts Options) (*toolTable, error) {
	tables := opts.Tables
	if tables == nil && opts.Pool != nil {
		tables = &opts.Pool.tables
	}
	if tables == nil {
		return buildTable(h.order, opts)
	}
	for _, s := range h.order {
		if !(s.shared && s.session != nil) && s.catalog == nil {
			return buildTable(h.order, opts)
		}
	}
	return tables.table(h.order, opts)
}
