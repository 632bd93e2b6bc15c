package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/text"
)

// A 2025-11-25 server over Streamable HTTP may end a session at any time;
// from then on it answers HTTP 404 to every request with the session's id,
// and the client must start a new session with a fresh initialize, without
// the id (basic/transports, session management). Before, every later call
// failed with the dead id ("session not found" in a JSON body), or the
// server was marked dead (a plain-text 404).
//
// The HTTP tap notes each session id a server answered 404 to, and marks
// the exchange whose own POST got it: the server refused that request, so
// it ran nothing and the request can be sent again on the new session. A
// call whose request the server had already taken when the session ended
// was interrupted: whether it ran is not known, and it is not sent again.

// sessionEnds is the session ids a server answered HTTP 404 to.
type sessionEnds struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (e *sessionEnds) note(id string) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ids == nil {
		e.ids = map[string]bool{}
	}
	e.ids[id] = true
}

// ended reports whether the server ended cs's session.
func (e *sessionEnds) ended(cs *mcp.ClientSession) bool {
	if e == nil || cs == nil || cs.ID() == "" {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ids[cs.ID()]
}

// sessionEnded reports whether the server ended cs's session, after err
// ended a request on it. A stream the server ends with the session can
// end before the 404 that says so comes back on another request: a
// request that failed below JSON-RPC on a session is followed by a ping,
// whose 404 tells.
func (h *Host) sessionEnded(ctx context.Context, s *serverConn, cs *mcp.ClientSession, err error) bool {
	if s.ends == nil || cs == nil || cs.ID() == "" {
		return false
	}
	if s.ends.ended(cs) {
		return true
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) && !isRejection(werr) {
		return false // the server's own answer
	}
	b := h.opts.budgets(s.spec)
	pctx, cancel := context.WithTimeout(ctx, b.connect)
	defer cancel()
	cs.Ping(pctx, nil)
	return s.ends.ended(cs)
}

// sess returns the server's current session.
func (s *serverConn) sess() *mcp.ClientSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session
}

// reinitialize starts a new session with s when the server ended the one
// it had, once however many calls saw the end: a caller that finds cs
// already replaced goes on with the new session. A server that cannot
// be reached again is dead for the host.
func (h *Host) reinitialize(ctx context.Context, s *serverConn, cs *mcp.ClientSession) error {
	s.reinitMu.Lock()
	defer s.reinitMu.Unlock()
	if s.sess() != cs {
		return nil
	}
	b := h.opts.budgets(s.spec)
	ctx, cancel := context.WithTimeoutCause(ctx, b.connect, &budgetExceeded{b.connect})
	defer cancel()
	revision := s.negotiated()
	// The SDK sends no DELETE for a session it knows is missing (a
	// plain-text 404); after a JSON one its DELETE gets a 404 too.
	cs.Close()
	if _, err := h.dial(ctx, s, revision, b); err != nil {
		why := "its session ended and a new one could not be started"
		s.markDead(why)
		h.logf(slog.LevelWarn, "the server ended its session; a new one could not be started", "server", s.spec.Name, "error", err.Error())
		h.step("host", s.spec.Name+" ended its session; a new one could not be started: "+text.Shorten(err.Error(), 200), nil)
		return fmt.Errorf("%s: %w", why, err)
	}
	s.mu.Lock()
	s.info.Reinitialized++
	s.info.ReinitializedAt = time.Now().UTC()
	s.mu.Unlock()
	h.logf(slog.LevelInfo, "the server ended its session (HTTP 404): a new session started", "server", s.spec.Name,
		"ended", cs.ID(), "session", s.sess().ID())
	h.step("host", s.spec.Name+" ended its session (HTTP 404): a new session started", map[string]any{"server": s.spec.Name})
	return nil
}

// sessionEndText is what the model reads of a call the end of its
// session stopped, after the host started a new session (or could not).
func (h *Host) sessionEndText(s *serverConn, err error, refused bool) string {
	if err != nil {
		return fmt.Sprintf("error: the server %s ended its session and a new one could not be started, so its tools can't be used now.", s.spec.Name)
	}
	if refused {
		return fmt.Sprintf("error: the server %s ended its session twice in a row, so the call was not run. It may work later.", s.spec.Name)
	}
	return fmt.Sprintf("error: the call was interrupted: the server %s ended its session while the call was running, so it is not known whether it finished. The host started a new session. Don't repeat a call that changes something without checking first.", s.spec.Name)
}
