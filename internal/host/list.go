package host

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools are read from the bytes (see rawjson.go): a server's list is
// read once as a case starts, and encoding/json would scan all of it three
// times more (the page, each tool, each schema) after the SDK has decoded
// it. What the readers leave, encoding/json reads.

// listing is one complete tools/list of a server, every page in order:
// the tools as the SDK decoded them, and each as the server wrote it.
type listing struct {
	tools []*mcp.Tool
	// raw holds each tool's JSON as the server sent it (raw[i] is
	// tools[i]): the bytes of its inputSchema are sent to the model as
	// they are, key order and all, and catalog -as listed counts them.
	raw []json.RawMessage
	// taskOnly names the tools whose execution.taskSupport is "required".
	taskOnly []string
	// covers counts the change notices read while the listing was out
	// that it reflects (watch.noteChange), or is -1 when it may not
	// reflect one. A listing of several pages reflects none: an earlier
	// page was answered before a later notice.
	covers int
}

// maxToolPages bounds tools/list pagination: a server that keeps sending
// cursors is broken, and the host must not loop on it.
const maxToolPages = 100

// listTools lists every page of s's tools. A page's nextCursor, when the
// server sends one, is sent back as it is, even when it is the empty
// string: the spec makes a cursor opaque and only its absence the end
// (server/utilities/pagination, "an empty string is a valid cursor"). The
// go-sdk's types cannot tell "" from absent, so the watch reads the page
// as sent and writes an empty cursor into the next request.
func listTools(ctx context.Context, s *serverConn) (*listing, error) {
	paths := s.watch.paths
	l := &listing{}
	seen := map[string]bool{}
	var cursor *string
	for page := 0; ; page++ {
		if page == maxToolPages {
			return nil, fmt.Errorf("tools/list did not end after %d pages", maxToolPages)
		}
		ex := s.watch.open(methodToolsList)
		params := &mcp.ListToolsParams{Meta: ex.meta(nil)}
		if cursor != nil {
			params.Cursor = *cursor
			if *cursor == "" {
				// Sent as "cursor": "" by the watch; the SDK would omit it.
				params.Cursor = ex.token
				ex.rewrite = map[string]json.RawMessage{"cursor": json.RawMessage(`""`)}
			}
		}
		res, err := s.sess().ListTools(ctx, params)
		raw := s.watch.done(ex)
		switch c := s.watch.coverage(ex); {
		case page == 0:
			l.covers = c
		case c != 0 || l.covers != 0:
			l.covers = -1
		}
		if err != nil {
			if deep := s.watch.tooDeep(); deep != nil {
				// Over HTTP the SDK refuses the answer in its own words.
				return nil, fmt.Errorf("calling %q: %w", methodToolsList, deep)
			}
			return nil, err
		}
		var sent toolsPage
		if raw != nil {
			if sent, err = readToolsPage(raw, paths); err != nil {
				return nil, fmt.Errorf("tools/list result: %w", err)
			}
		} else {
			// The watch saw no answer (it always should): the page as the
			// SDK decoded it.
			sent.Tools = encodeTools(res.Tools)
			if res.NextCursor != "" {
				sent.NextCursor = &res.NextCursor
			}
		}
		l.add(res.Tools, sent.Tools, paths)
		if sent.NextCursor == nil {
			return l, nil
		}
		if seen[*sent.NextCursor] {
			return nil, fmt.Errorf("tools/list returned cursor %q twice", *sent.NextCursor)
		}
		seen[*sent.NextCursor] = true
		cursor = sent.NextCursor
	}
}

// add appends a page: the tools the SDK kept (it drops tools it finds
// invalid), each with its bytes as sent, found by name.
func (l *listing) add(tools []*mcp.Tool, sent []json.RawMessage, paths Paths) {
	byName := map[string]json.RawMessage{}
	for _, r := range sent {
		name, taskSupport, ok := readToolHead(r, paths)
		if !ok {
			continue
		}
		if _, dup := byName[name]; !dup {
			byName[name] = r
		}
		if taskSupport == "required" && !slices.Contains(l.taskOnly, name) {
			l.taskOnly = append(l.taskOnly, name)
		}
	}
	for _, t := range tools {
		raw, ok := byName[t.Name]
		if !ok {
			raw = encodeTools([]*mcp.Tool{t})[0]
		}
		l.tools = append(l.tools, t)
		l.raw = append(l.raw, raw)
	}
}

// encodeTools encodes tools as the SDK holds them, for a page the watch did
// not see.
func encodeTools(tools []*mcp.Tool) []json.RawMessage {
	out := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		out[i], _ = marshalCompact(t)
	}
	return out
}

// inputSchema returns the inputSchema of tool i as the server wrote it,
// compacted (whitespace is no part of the schema, and costs tokens), or
// nil when it sent none.
func (l *listing) inputSchema(i int, paths Paths) (json.RawMessage, error) {
	schema, err := readInputSchema(l.raw[i], paths)
	if err != nil {
		return nil, err
	}
	if isNull(schema) {
		return nil, nil
	}
	if !paths.sdk() && spaceless(schema) {
		return schema, nil
	}
	return compactJSON(schema)
}

// names returns the tools' names in order.
func (l *listing) names() []string {
	out := make([]string, len(l.tools))
	for i, t := range l.tools {
		out[i] = t.Name
	}
	return out
}
