package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/lines"
	"github.com/hosteval/hosteval/internal/record"
)

// Era detection: which revision a server speaks, decided by what the server
// did and never by how busy the machine was.
//
// A handshake request (server/discover, initialize) has a budget, and it
// runs only once the server has read the request: a Node server started by
// npx reads stdin only when its modules are loaded, which takes seconds on a
// busy machine, and that time is start-up, bounded by the connect budget
// alone. On Linux the host sees the read as the stdin pipe emptying
// (FIONREAD); elsewhere, and over HTTP, the budget runs from the write.
//
// Once a server has read server/discover and not answered it within
// pingAfter, the host sends it a ping. A server that answers the ping but not
// discover reads and serves requests and has dropped discover: it is judged
// silent after pingGrace, without waiting for the whole discover budget. A
// silent server is stopped and started again as legacy (its connection is
// left in an unknown state by a request it never answered); one that exits
// is reported as exited, with its status and the tail of its stderr, and is
// not started again.
//
// Eras remembers the servers judged silent, so that in a run only the first
// connection to each pays for finding out.

// Era reasons, as recorded in record.Server.EraReason.
const (
	reasonAnswered     = "answered discover"
	reasonLegacyMode   = "legacy mode"
	reasonIgnored      = "answered ping, not discover"
	reasonExited       = "exited"
	reasonNotJSONRPC   = "wrote something that is not JSON-RPC"
	reasonClosedStdout = "closed its stdout"
	reasonRemembered   = "remembered: "
)

const (
	methodDiscover   = "server/discover"
	methodInitialize = "initialize"
	// pingAfter is how long a server that has read server/discover may take
	// before the host checks with a ping that it reads requests at all.
	pingAfter = 100 * time.Millisecond
	// pingGrace is how long discover may still take once a ping sent after
	// it is answered (a server that runs requests concurrently).
	pingGrace = time.Second
	// handshakeTick is how often the watch looks at a handshake.
	handshakeTick = 20 * time.Millisecond
)

// errPinned ends a pinned connection whose server did not agree on
// 2026-07-28 in its answer to server/discover.
var errPinned = errors.New("pinned to " + Revision20260728 + ": no fallback to initialize")

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// pingID is the id of the host's own liveness ping; the SDK's ids are
// numbers, so it never meets one of theirs.
var pingID, _ = jsonrpc.MakeID("hosteval-ping")

// silence is why a handshake request was judged unanswered: the server read
// it and did not answer in time.
type silence struct {
	method string // server/discover or initialize
	reason string // the era reason: "no answer to discover within 20s", ...
}

func (e *silence) Error() string { return "it " + e.reason }

// pinnedSilence is a pinned connection whose server read server/discover
// and never answered it. It wraps the silence: the preflight remembers
// that verdict for the run, as it does in auto mode.
type pinnedSilence struct {
	server string
	sil    *silence
}

func (e *pinnedSilence) Error() string {
	return fmt.Sprintf("server %s did not answer server/discover (%s; pinned to %s)", e.server, e.sil.reason, Revision20260728)
}

func (e *pinnedSilence) Unwrap() error { return e.sil }

// budgetExceeded is the cause of a connection that ran out of its connect
// budget.
type budgetExceeded struct{ d time.Duration }

func (e *budgetExceeded) Error() string { return fmt.Sprintf("the connect budget of %v ran out", e.d) }

// endedError reports a server that ended (exited, closed its stdout, wrote
// something that is not JSON-RPC) before its connection was made.
type endedError struct {
	server string
	why    string // follows "it": "exited with status 7; its stderr ends: ..."
	reason string // the era reason
}

func (e *endedError) Error() string {
	return fmt.Sprintf("server %s %s", e.server, e.why)
}

// connect starts (or reaches) one server and agrees on a revision as the
// protocol mode says. The returned record says what happened even when the
// connection failed.
func (h *Host) connect(ctx context.Context, spec ServerSpec) (*serverConn, error) {
	start := time.Now()
	b := h.opts.budgets(spec)
	ctx, cancel := context.WithTimeoutCause(ctx, b.connect, &budgetExceeded{b.connect})
	defer cancel()
	s := &serverConn{spec: spec, stderr: h.newStderr(spec.Name)}
	s.info = record.Server{Operation: record.OpConnect, Name: spec.Name, Mode: string(h.opts.Protocol)}
	fail := func(err error) (*serverConn, error) {
		s.info.ConnectMS = msSince(start)
		s.info.Error = err.Error()
		s.info.Time = time.Now().UTC()
		if s.info.EraReason == "" {
			s.info.EraReason = failureReason(err)
		}
		// What took a budget to find out: the connect budget ran out, or
		// the server read a handshake request and never answered it (in
		// any protocol mode: pinned, the error wraps the silence).
		//
		// Only the preflight's verdict is kept. Without a preflight
		// (-preflight=false) the first case's failure does not stand for
		// the other cases, by choice: a case's connection is part of
		// what the case measures, and it is made while other cases start
		// (up to -concurrency at once), so its budget running out may be
		// the machine's load as much as the server's silence. Kept, one
		// slow start would fail every case of the server in the run,
		// each recording a connection it never tried. The preflight
		// connects each server before any case loads the machine, and is
		// on by default; turning it off asks for each case to find out
		// for itself, and pays for it.
		var over *budgetExceeded
		var sil *silence
		if h.opts.Preflight && (errors.As(context.Cause(ctx), &over) || errors.As(err, &sil)) {
			h.opts.Eras.rememberFailure(eraKey(spec), err.Error())
		}
		return s, err
	}
	// A server that never answered in the preflight would cost each case
	// the whole connect budget again: the preflight's verdict stands for
	// the run.
	if why, ok := h.opts.Eras.failedBefore(eraKey(spec)); ok {
		return fail(fmt.Errorf("server %s is not started again: it did not connect in the run's preflight (%s)", spec.Name, why))
	}

	var (
		hs  *handshake
		err error
	)
	switch h.opts.Protocol {
	case ModeLegacy:
		hs, err = h.dial(ctx, s, Revision20251125, b)
		s.info.EraReason = reasonLegacyMode
		if err != nil {
			s.info.EraReason = failureReason(err)
		}
	case ModePinned:
		hs, err = h.dial(ctx, s, Revision20260728, b)
		s.info.EraReason = hs.reason()
		var sil *silence
		switch {
		case err == nil && s.negotiated() != Revision20260728:
			s.info.Offered = s.negotiated()
			s.info.VersionFailure = true
			s.close()
			s.session, s.proc = nil, nil
			err = fmt.Errorf("server %s speaks %s, not %s: the protocol mode is pinned to %s",
				spec.Name, s.info.Offered, Revision20260728, Revision20260728)
		case errors.As(err, &sil):
			s.info.VersionFailure = true
			s.info.EraReason = sil.reason
			err = &pinnedSilence{server: spec.Name, sil: sil}
		case errors.Is(err, errPinned):
			// The server's first answer did not agree on 2026-07-28: the
			// legacy handshake the SDK would fall back to was never sent.
			s.info.VersionFailure = true
			_, code, supported := hs.summary()
			s.info.Offered = newest(supported)
			what := "its answer to server/discover offers " + orNothing(strings.Join(supported, ", "))
			if code != 0 {
				what = fmt.Sprintf("server/discover: error %d", code)
			}
			err = fmt.Errorf("server %s does not speak %s (%s): the protocol mode is pinned to %s", spec.Name, Revision20260728, what, Revision20260728)
		case err != nil:
			if _, code, supported := hs.summary(); code != 0 {
				s.info.VersionFailure = true
				s.info.Offered = newest(supported)
				err = fmt.Errorf("server %s refused %s (server/discover: error %d): %w", spec.Name, Revision20260728, code, err)
			}
		}
	default:
		hs, err = h.auto(ctx, s, b)
	}
	if err != nil {
		return fail(err)
	}
	s.info.Protocol = s.negotiated()
	if _, _, supported := hs.summary(); len(supported) > 0 {
		s.info.Offered = newest(supported)
	} else {
		s.info.Offered = s.info.Protocol
	}
	if res := s.session.InitializeResult(); res != nil && res.ServerInfo != nil {
		s.info.ServerName, s.info.ServerVersion = res.ServerInfo.Name, res.ServerInfo.Version
	}
	// The listing waits, a moment at most, for the server to read what
	// the handshake wrote last (notifications/initialized). A server that
	// changes its tools as it is initialized (server-everything registers
	// some) announces it while it handles that notice; when it has not
	// read the listing's request by then, the listing reflects the change
	// (watch.noteChange). Read together with it, the request may have
	// been handled first for all the host can tell, and the server is
	// listed again (3-4 ms): it was, in about half the runs of the
	// 100-call job, a server that woke up a fraction of a millisecond
	// late.
	if s.proc != nil {
		s.proc.awaitInputRead(inputReadWait)
	}
	// A change the server announces from here on is after this listing.
	s.listedChanges = s.watch.changed()
	tools, err := listTools(ctx, s)
	if err != nil {
		if s.proc != nil {
			if why := s.proc.ended(false); why != "" {
				err = fmt.Errorf("%w (it %s)", err, why)
			}
		}
		if cause := context.Cause(ctx); cause != nil {
			err = fmt.Errorf("%w: %w", err, cause)
		}
		s.close()
		s.session, s.proc = nil, nil
		return fail(fmt.Errorf("list tools of %s: %w", spec.Name, err))
	}
	s.setListing(tools)
	// A server that says its tools changed while they were being listed
	// (server-everything does, as it registers tools on
	// notifications/initialized) is listed again now, once: at the first
	// model request the round trip would wait for the case's own set-up.
	// A failure leaves that to the first model request.
	switch n := s.watch.changed(); {
	case n == s.listedChanges:
	case tools.covers > 0 && n == s.listedChanges+tools.covers:
		// Every notice came before the server had read the request
		// (watch.noteChange): the listing already reflects them.
		s.listedChanges = n
	default:
		if err := s.relist(ctx, h.opts.ToolTimeout); err != nil {
			h.logf(slog.LevelInfo, "the server said its tools changed while they were listed; listing them again failed: the first model request tries again",
				"server", spec.Name, "error", err.Error())
		}
	}
	s.info.Tools = len(s.currentListing().tools)
	s.info.ConnectMS = msSince(start)
	s.info.Time = time.Now().UTC()
	return s, nil
}

// auto agrees on a revision in auto mode: discover first, then initialize on
// the same connection when discover is refused, or on a fresh start when it
// went unanswered. A server remembered as silent goes straight to
// initialize, and is probed afresh if that fails.
func (h *Host) auto(ctx context.Context, s *serverConn, b budgets) (*handshake, error) {
	name := s.spec.Name
	key := eraKey(s.spec)
	if memo, ok := h.opts.Eras.recall(key); ok {
		hs, err := h.dial(ctx, s, memo.Revision, b)
		if err == nil {
			s.info.EraReason = reasonRemembered + memo.Reason
			return hs, nil
		}
		var ended *endedError
		if errors.As(err, &ended) || ctx.Err() != nil {
			s.info.EraReason = failureReason(err)
			return hs, err
		}
		h.opts.Eras.forget(key)
		h.logf(slog.LevelInfo, "the remembered revision did not work; probing the server again",
			"server", name, "revision", memo.Revision, "error", err.Error())
	}
	hs, err := h.dial(ctx, s, Revision20260728, b)
	var sil *silence
	if !errors.As(err, &sil) {
		s.info.EraReason = hs.reason()
		if err != nil {
			s.info.EraReason = failureReason(err)
		}
		return hs, err
	}
	// The connection of a request never answered is in an unknown state:
	// start afresh, speaking 2025-11-25 from the first message.
	h.logf(slog.LevelInfo, "server did not answer server/discover; restarting it as legacy",
		"server", name, "why", sil.reason)
	s.info.Restarted = true
	s.info.EraReason = sil.reason
	hs, err = h.dial(ctx, s, Revision20251125, b)
	if err != nil {
		return hs, fmt.Errorf("server %s did not answer server/discover (%s), and after a restart as legacy: %w", name, sil.reason, err)
	}
	h.opts.Eras.remember(key, eraMemo{Revision: Revision20251125, Reason: sil.reason})
	return hs, nil
}

// maxUnknownLogged is how many answers to unknown ids a connection logs
// one by one.
const maxUnknownLogged = 10

// idText is a JSON-RPC id as the server wrote it.
func idText(id jsonrpc.ID) string {
	b, err := json.Marshal(id.Raw())
	if err != nil {
		return fmt.Sprint(id.Raw())
	}
	return string(b)
}

// failureReason is the era reason of a connection that failed.
func failureReason(err error) string {
	var ended *endedError
	var sil *silence
	switch {
	case errors.As(err, &ended):
		return ended.reason
	case errors.As(err, &sil):
		return sil.reason
	}
	return ""
}

// dial starts the server (or opens its URL, or its in-process transport)
// and connects an mcp.Client asking for revision, filling s.session and
// s.proc. It returns the handshake it watched; on error nothing is left
// running.
func (h *Host) dial(ctx context.Context, s *serverConn, revision string, b budgets) (*handshake, error) {
	name := s.spec.Name
	hs := &handshake{pinned: h.opts.Protocol == ModePinned}
	client := mcp.NewClient(&mcp.Implementation{Name: h.opts.ClientName, Version: Version}, h.clientOptions(name))
	client.AddSendingMiddleware(hs.middleware)
	client.AddReceivingMiddleware(undeclared)

	wire := h.wire.forServer(name)
	// A new session after the server ended one keeps the watch: the
	// exchanges of the calls that wait on it are its.
	w := s.watch
	renew := w != nil && s.sess() != nil
	if !renew {
		w = newWatch(h.opts.Paths)
		w.onUnknown = func(id jsonrpc.ID, n int64) {
			// Counted always, logged up to a point: a server may write
			// such answers without end.
			switch {
			case n <= maxUnknownLogged:
				h.logf(slog.LevelWarn, fmt.Sprintf("the server answered a request the host never sent (id %s), or answered one twice: the answer was not used", idText(id)),
					"operation", "host.unknown_answer", "server", name, "id", id.Raw(), "count", n)
			case n == maxUnknownLogged+1:
				h.logf(slog.LevelWarn, "more answers to requests the host never sent: counted on the server's record (unknown_answers), not logged",
					"operation", "host.unknown_answer", "server", name, "count", n)
			}
		}
	}
	var transport mcp.Transport
	var proc *process
	var stdio pipeState
	switch {
	case s.spec.Transport != nil:
		t, err := s.spec.Transport(ctx)
		if err != nil {
			return hs, fmt.Errorf("connect %s: %w", name, err)
		}
		transport = t
	case s.spec.URL != "":
		if s.ends == nil {
			s.ends = &sessionEnds{}
		}
		t, err := httpTransport(s.spec, wire, w, s.ends)
		if err != nil {
			return hs, fmt.Errorf("connect %s: %w", name, err)
		}
		transport = t
	default:
		p, err := startProcess(s.spec, h.opts.TerminateGrace, h.opts.Groups, s.stderr)
		if err != nil {
			return hs, fmt.Errorf("start %s: %w", name, err)
		}
		proc = p
		if h.opts.Started != nil {
			h.opts.Started()
		}
		w.mu.Lock()
		w.unread = func() bool { return p.input() == inputPending }
		w.mu.Unlock()
		p.orphaned = func(found []orphan) {
			s.orphans.Add(int64(len(found)))
			h.logf(slog.LevelWarn, orphansText(found), "operation", "host.orphans", "server", name, "orphans", len(found))
		}
		var r io.ReadCloser = p.stdout
		var tap io.Writer
		if wire != nil {
			r = &tapReader{r: p.stdout, tap: lines.NewWriter(func(l []byte) { wire.message("stdout", "<-", l) })}
			tap = lines.NewWriter(func(l []byte) { wire.message("stdin", "->", l) })
		}
		// Results up to maxMessageBytes are read (and then cut to the
		// result budget); a larger line ends the connection.
		transport, stdio = h.stdio(r, p.stdin, tap)
	}
	if s.spec.URL == "" {
		// The streamable HTTP connection cannot be wrapped: its tap does
		// the same on the bodies (see http.go).
		transport = watchTransport{handshakeTransport{guardedTransport{transport}, hs}, w}
	}

	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := hs.watch(cctx, cancel, proc, b)
	cs, err := client.Connect(cctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: revision})
	stop()
	if err != nil {
		return hs, connectFailure(name, context.Cause(cctx), hs, proc, err)
	}
	s.mu.Lock()
	s.session = cs
	s.mu.Unlock()
	if !renew {
		s.proc, s.watch, s.stdio = proc, w, stdio
	}
	return hs, nil
}

// stdio is the connection over a server's pipes, reading r and writing
// in (each write copied to tap, when set): the host's own (stdio.go), or
// with Options.Paths sdk the go-sdk's, which it is held equal to
// (FuzzStdioFrames), its writes bounded as the host's are (sdkPipe).
func (h *Host) stdio(r io.ReadCloser, in *os.File, tap io.Writer) (mcp.Transport, pipeState) {
	if h.opts.Paths.sdk() {
		var w io.WriteCloser = in
		if tap != nil {
			w = &tapWriter{w: in, tap: tap}
		}
		deep := &deepReader{r: r}
		t := &sdkPipe{Transport: &mcp.IOTransport{Reader: deep, Writer: w, MaxLineLength: maxMessageBytes}, in: in, deep: deep}
		return t, t
	}
	t := &stdioTransport{r: r, w: in, tap: tap, maxLine: maxMessageBytes}
	return t, t
}

// connectFailure says why a connection attempt failed, as honestly as the
// host can tell, and stops the process.
func connectFailure(name string, cause error, hs *handshake, proc *process, err error) error {
	if errors.Is(err, errPinned) {
		// The host ended it: the server's exit that follows is not news.
		if proc != nil {
			proc.stop()
		}
		return fmt.Errorf("connect %s: %w", name, err)
	}
	var sil *silence
	if errors.As(cause, &sil) {
		if proc != nil {
			proc.stop()
		}
		return fmt.Errorf("connect %s: %w", name, sil)
	}
	if proc != nil {
		if cause == nil {
			// The connection failed by itself (a write met a broken
			// pipe, a read met EOF): that news can beat the news of the
			// exit that caused it, on a busy machine.
			proc.waitExit(exitWait)
		}
		// Look before stopping: after stop, the process was killed by us.
		why := proc.ended(false)
		reason := reasonClosedStdout
		switch {
		case proc.stdout.garbage() != "":
			reason = reasonNotJSONRPC
		case proc.waitExit(0):
			reason = reasonExited
		}
		proc.stop()
		if why != "" {
			why += " before it connected"
			if reason == reasonExited {
				if tail := proc.stderrTail(); tail != "" {
					why += "; its stderr ends: " + tail
				}
			}
			return &endedError{server: name, why: why, reason: reason}
		}
	}
	var budget *budgetExceeded
	if errors.As(cause, &budget) {
		return fmt.Errorf("server %s did not connect within %v: %s", name, budget.d, hs.progress())
	}
	return fmt.Errorf("connect %s: %w", name, err)
}

// handshake follows one connection attempt: the discover answer, as the
// client's sending middleware sees it, and the handshake request in flight
// with its answer, as the connection sees them.
type handshake struct {
	// pinned refuses to send initialize: a pinned host speaks 2026-07-28
	// or nothing, and the SDK falls back to initialize when discover does
	// not agree.
	pinned bool

	mu sync.Mutex
	// What server/discover got.
	answered  bool // any answer (result or error)
	rejected  bool // no JSON-RPC answer at all (an HTTP error such as 401)
	errCode   int64
	supported []string
	// discoverErr is how server/discover failed (nil: it did not).
	discoverErr error
	// The handshake request in flight, from the connection (or, over HTTP,
	// from the middleware).
	watched bool // a connection reports requests and answers
	method  string
	seq     int // counts handshake requests, to tell one from the next
	id      jsonrpc.ID
	written time.Time
	replied bool
	read    bool // the server was seen to read it
	// The liveness ping.
	conn         mcp.Connection
	pingSent     bool
	pingAnswered time.Time
}

func (hs *handshake) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != methodDiscover && method != methodInitialize {
			return next(ctx, method, req)
		}
		if method == methodInitialize && hs.pinned {
			hs.mu.Lock()
			answered, cause := hs.answered, hs.discoverErr
			hs.mu.Unlock()
			if !answered && cause != nil {
				return nil, cause // no answer at all (an HTTP 401): say that
			}
			return nil, errPinned
		}
		hs.mu.Lock()
		if !hs.watched {
			hs.seq++
			hs.method, hs.written, hs.replied = method, time.Now(), false
		}
		hs.mu.Unlock()
		res, err := next(ctx, method, req)
		hs.mu.Lock()
		defer hs.mu.Unlock()
		if !hs.watched && ctx.Err() == nil {
			hs.replied = true
		}
		if method != methodDiscover {
			return res, err
		}
		hs.discoverErr = err
		var werr *jsonrpc.Error
		switch {
		case errors.As(err, &werr) && isRejection(werr) && ctx.Err() == nil:
			hs.rejected = true
		case err == nil:
			hs.answered = true
			if d, ok := res.(*mcp.DiscoverResult); ok {
				hs.supported = d.SupportedVersions
			}
		case errors.As(err, &werr):
			hs.answered = true
			hs.errCode = werr.Code
			var data mcp.UnsupportedProtocolVersionData
			if json.Unmarshal(werr.Data, &data) == nil {
				hs.supported = data.Supported
			}
		}
		return res, err
	}
}

// summary says what server/discover got.
func (hs *handshake) summary() (answered bool, code int64, supported []string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.answered, hs.errCode, slices.Clone(hs.supported)
}

// reason is the era reason of a handshake that ended with an answer to
// server/discover, or "".
func (hs *handshake) reason() string {
	answered, code, _ := hs.summary()
	switch {
	case !answered:
		return ""
	case code != 0:
		return fmt.Sprintf("discover error code %d", code)
	}
	return reasonAnswered
}

// progress says how far a handshake got, for a connection that ran out of
// time.
func (hs *handshake) progress() string {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	switch {
	case hs.method == "":
		return "it was never sent a request"
	case hs.replied:
		return "it answered " + hs.method + ", then did not finish"
	case hs.watched && !hs.read:
		return "it had not read " + hs.method + " yet (still starting?)"
	}
	return "it did not answer " + hs.method
}

// inFlight is the handshake request in flight, as handshake keeps it.
type inFlight struct {
	method  string
	seq     int
	id      jsonrpc.ID
	written time.Time
	replied bool
	read    bool
}

// sending notes a handshake request about to be written to the server (its
// answer may arrive before the write returns), and returns the request it
// replaces, for unsent to restore.
func (hs *handshake) sending(method string, id jsonrpc.ID) inFlight {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	prev := inFlight{hs.method, hs.seq, hs.id, hs.written, hs.replied, hs.read}
	hs.seq++
	hs.method, hs.id, hs.written, hs.replied, hs.read = method, id, time.Time{}, false, false
	return prev
}

// unsent restores the request in flight before a write that failed: the
// server never got the new one.
func (hs *handshake) unsent(prev inFlight) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.method, hs.seq, hs.id, hs.written, hs.replied, hs.read = prev.method, prev.seq, prev.id, prev.written, prev.replied, prev.read
}

// wrote notes that the request being sent is written: its budget may run
// from now on, once the server reads it.
func (hs *handshake) wrote(id jsonrpc.ID) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.id == id {
		hs.written = time.Now()
	}
}

// received notes a response from the server and reports whether it is the
// answer to the host's ping, which the SDK must not see.
func (hs *handshake) received(resp *jsonrpc.Response) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if resp.ID == pingID {
		if hs.pingAnswered.IsZero() {
			hs.pingAnswered = time.Now()
		}
		return true
	}
	if hs.method != "" && resp.ID == hs.id {
		hs.replied = true
	}
	return false
}

// watch starts the goroutine that judges the handshake while the client
// connects, and returns the function that stops it and waits for it.
func (hs *handshake) watch(ctx context.Context, cancel context.CancelCauseFunc, proc *process, b budgets) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { hs.judge(ctx, done, cancel, proc, b) })
	return func() {
		close(done)
		wg.Wait()
	}
}

// judge ends the connection attempt (through cancel) when the process
// exits, or when a handshake request the server has read goes unanswered
// past its budget, or while the server answers a ping.
func (hs *handshake) judge(ctx context.Context, done <-chan struct{}, cancel context.CancelCauseFunc, proc *process, b budgets) {
	var exited <-chan struct{}
	if proc != nil {
		exited = proc.exited
	}
	tick := time.NewTicker(handshakeTick)
	defer tick.Stop()
	var (
		seq    int
		readAt time.Time
	)
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-exited:
			cancel(errors.New("the server exited"))
			return
		case <-tick.C:
		}
		now := time.Now()
		hs.mu.Lock()
		method, replied, written, pingAnswered := hs.method, hs.replied, hs.written, hs.pingAnswered
		if hs.seq != seq {
			seq, readAt = hs.seq, time.Time{}
		}
		hs.mu.Unlock()
		if method == "" || replied || written.IsZero() {
			continue
		}
		if readAt.IsZero() {
			state := inputUnknown
			if proc != nil {
				state = proc.input()
			}
			switch state {
			case inputUnknown:
				readAt = written
			case inputAllRead:
				readAt = now
			case inputPending:
				continue // still starting: only the connect budget runs
			case inputClosed:
				// The attempt ended as this tick came: the last look
				// decides what the error says (handshake.progress).
				continue
			}
			hs.mu.Lock()
			hs.read = true
			hs.mu.Unlock()
		}
		budget, short := b.discover, "discover"
		if method == methodInitialize {
			budget, short = b.initialize, "initialize"
		}
		if method == methodDiscover {
			if !pingAnswered.IsZero() && now.Sub(pingAnswered) >= pingGrace {
				cancel(&silence{method: method, reason: reasonIgnored})
				return
			}
			if now.Sub(readAt) >= pingAfter {
				hs.ping(ctx)
			}
		}
		if now.Sub(readAt) >= budget {
			cancel(&silence{method: method, reason: fmt.Sprintf("no answer to %s within %v", short, budget)})
			return
		}
	}
}

// ping sends the liveness ping once, on a watched connection.
func (hs *handshake) ping(ctx context.Context) {
	hs.mu.Lock()
	conn := hs.conn
	if conn == nil || hs.pingSent {
		hs.mu.Unlock()
		return
	}
	hs.pingSent = true
	hs.mu.Unlock()
	conn.Write(ctx, &jsonrpc.Request{ID: pingID, Method: "ping"})
}

// handshakeTransport reports a connection's handshake requests and their
// answers to a handshake, and carries its ping.
type handshakeTransport struct {
	mcp.Transport
	hs *handshake
}

func (t handshakeTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.hs.mu.Lock()
	t.hs.watched, t.hs.conn = true, conn
	t.hs.mu.Unlock()
	return handshakeConn{conn, t.hs}, nil
}

type handshakeConn struct {
	mcp.Connection
	hs *handshake
}

func (c handshakeConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || (req.Method != methodDiscover && req.Method != methodInitialize) {
		return c.Connection.Write(ctx, msg)
	}
	prev := c.hs.sending(req.Method, req.ID)
	err := c.Connection.Write(ctx, msg)
	if err != nil {
		c.hs.unsent(prev)
		return err
	}
	c.hs.wrote(req.ID)
	return nil
}

func (c handshakeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if resp, ok := msg.(*jsonrpc.Response); ok && err == nil && c.hs.received(resp) {
			continue
		}
		return msg, err
	}
}
