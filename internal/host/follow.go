package host

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/record"
)

// A tool table that follows the servers. A server says its tools changed
// with notifications/tools/list_changed: on the stream of a call it is
// answering, on a 2025-11-25 session, or on the subscriptions/listen stream
// the SDK opens on a 2026-07-28 connection to a server that offers
// tools.listChanged. The watch notes each one as it is read: in order with
// the answers around it on one stream (stdio, or a call's own event stream),
// so a notification a server sends before a call's result is seen before the
// call returns. Over Streamable HTTP a subscriptions/listen stream is a
// stream of its own, which nothing orders with a call's answer: a change is
// taken at the first model request after the host has read it. Before each model request the turn loop
// asks refresh to list those servers' tools again, every page, and to
// build a new table when they differ; that request, and every later one,
// gets the new table. A table is never changed while a model request is
// out: the calls of the model's answer are checked against the table it
// was given. Each server whose tools changed makes one host.tools_changed
// event, in the case log and the record.

// Refresh lists again the tools of every server that said they changed
// since they were last listed, and makes the table in use follow, as a
// turn does before each model request: a manual panel, which makes no
// model request, calls it before each call and each listing of the tools.
// The changes are made as of traceID, the panel's.
func (h *Host) Refresh(ctx context.Context, traceID string) []record.ToolChange {
	return h.refresh(ctx, traceID, 0, 0)
}

// refresh lists again the tools of every server that said they changed
// and, when any differ from the table in use, makes a new table the one in
// use. It returns one change per server whose tools differ, made as of
// model request index of turn (trace) of the conversation.
func (h *Host) refresh(ctx context.Context, traceID string, turn, index int) []record.ToolChange {
	h.listMu.Lock()
	defer h.listMu.Unlock()
	for _, s := range h.order {
		cs := s.sess()
		if cs == nil || s.watch == nil || s.deadReason() != "" {
			continue
		}
		err := s.relist(ctx, h.opts.ToolTimeout)
		if err != nil && ctx.Err() == nil && s.ends.ended(cs) && h.reinitialize(ctx, s, cs) == nil {
			// tools/list is safe to send again, on the new session.
			err = s.relist(ctx, h.opts.ToolTimeout)
		}
		if err != nil {
			h.logf(slog.LevelWarn, "the server said its tools changed; listing them again failed: the table keeps its tools",
				"server", s.spec.Name, "error", err.Error())
			h.step("host", s.spec.Name+" said its tools changed; listing them again failed: "+err.Error(), nil)
		}
	}
	old := h.tab()
	stale := false
	for _, s := range h.order {
		if s.sess() != nil && old.listings[s.spec.Name] != s.currentListing() {
			stale = true
		}
	}
	if !stale {
		return nil
	}
	table, err := buildTable(h.order, h.opts)
	if err != nil {
		// A new tool that collides: the old table stays, and the model
		// keeps what it had.
		h.logf(slog.LevelWarn, "a server's tools changed, but the new table cannot be built: the table keeps its tools", "error", err.Error())
		h.step("host", "the tools changed, but the new table cannot be built: "+err.Error(), nil)
		return nil
	}
	h.table.Store(table)
	defs := table.toolDefs()
	var changes []record.ToolChange
	for _, s := range h.order {
		before, after := old.listings[s.spec.Name], table.listings[s.spec.Name]
		if before == after || after == nil {
			continue
		}
		if before == nil {
			before = &listing{}
		}
		added, removed, changed := diffListings(before, after)
		if len(added)+len(removed)+len(changed) == 0 {
			continue
		}
		c := record.ToolChange{
			Operation: record.OpToolsChanged, Time: time.Now().UTC(), SessionID: h.sessionID, TraceID: traceID,
			Turn: turn, Index: index, Server: s.spec.Name, Added: added, Removed: removed, Changed: changed,
			Tools: defs.Tools, ToolDefBytes: defs.Bytes, ToolDefTokens: defs.Tokens,
		}
		h.emitJSON(c)
		h.step("host", s.spec.Name+"'s tools changed: "+describeChange(c),
			map[string]any{"server": s.spec.Name, "tool_def_bytes": defs.Bytes, "tool_def_tokens": defs.Tokens})
		changes = append(changes, c)
	}
	return changes
}

// relist lists s's tools again if the server said they changed since the
// current listing started. A listing with the same tools, byte for byte,
// leaves the current one in place.
func (s *serverConn) relist(ctx context.Context, budget time.Duration) error {
	s.listMu.Lock()
	defer s.listMu.Unlock()
	n := s.watch.changed()
	if n == s.listedChanges {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	l, err := listTools(ctx, s)
	if err != nil {
		return err
	}
	s.listedChanges = n
	if cur := s.currentListing(); !sameListing(cur, l) {
		s.setListing(l)
	}
	return nil
}

func sameListing(a, b *listing) bool {
	if len(a.raw) != len(b.raw) {
		return false
	}
	for i := range a.raw {
		if !bytes.Equal(a.raw[i], b.raw[i]) {
			return false
		}
	}
	return true
}

// diffListings names the tools added, removed, and changed (listed in both,
// written differently), in listing order.
func diffListings(before, after *listing) (added, removed, changed []string) {
	index := func(l *listing) map[string]json.RawMessage {
		m := make(map[string]json.RawMessage, len(l.tools))
		for i, t := range l.tools {
			m[t.Name] = l.raw[i]
		}
		return m
	}
	was, is := index(before), index(after)
	for i, t := range after.tools {
		switch raw, ok := was[t.Name]; {
		case !ok:
			added = append(added, t.Name)
		case !bytes.Equal(raw, after.raw[i]):
			changed = append(changed, t.Name)
		}
	}
	for _, t := range before.tools {
		if _, ok := is[t.Name]; !ok {
			removed = append(removed, t.Name)
		}
	}
	return added, removed, changed
}

// describeChange says what changed, for the person following a turn.
func describeChange(c record.ToolChange) string {
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"added", c.Added}, {"removed", c.Removed}, {"changed", c.Changed}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.names, ", "))
		}
	}
	return strings.Join(parts, "; ")
}
