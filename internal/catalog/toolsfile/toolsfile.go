// Package toolsfile reads and writes a tools file (hosteval catalog -save):
// one server's tools as its tools/list returned them, every page in order
// and each tool byte for byte, with what the server said of itself: a scenario's `catalog: FILE` stands in
// for the server with it, so that a route-only eval of a third-party
// catalog needs neither the server nor its credentials. Its shape is the
// result of tools/list ({"tools": [...]}) with a few keys added, so a
// tools/list result saved by another tool reads as one too.
//
//	{"kind": "hosteval.tools", "schema": 1, "server": "cmdb", "protocol": "2026-07-28",
//	 "server_name": "cmdb", "server_version": "1.0.0", "tools": [
//	{"name": "get_asset", ...},
//	{"name": "find_assets", ...}
//	]}
//
// It is a leaf on the standard library, so that scenario reads a catalog
// file without the catalog's measures and tables.
package toolsfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Kind is the "kind" of a tools file, and Schema its version.
const (
	Kind   = "hosteval.tools"
	Schema = 1
)

// Tools is one server's tools as a tools file holds them.
type Tools struct {
	Kind   string `json:"kind,omitempty"`
	Schema int    `json:"schema,omitempty"`
	// Server is the server's name where the tools were listed (its tools'
	// prefix, server__tool); Protocol the revision negotiated then.
	Server        string `json:"server,omitempty"`
	Protocol      string `json:"protocol,omitempty"`
	ServerName    string `json:"server_name,omitempty"`
	ServerVersion string `json:"server_version,omitempty"`
	// Instructions are the server's instructions, as it gave them.
	Instructions string `json:"instructions,omitempty"`
	// Tools are the tool objects as the server wrote them.
	Tools []json.RawMessage `json:"tools"`
}

// Write writes a tools file: the head on the first line, then one
// tool a line exactly as the server wrote it (compacted), so that a diff
// of two saves shows the tools that changed.
func Write(w io.Writer, t Tools) error {
	t.Kind, t.Schema = Kind, Schema
	tools := t.Tools
	t.Tools = nil
	head, err := marshalNoEscape(t)
	if err != nil {
		return err
	}
	// The head without its closing brace and its null tools, then the list.
	head = bytes.TrimSuffix(head, []byte(`,"tools":null}`))
	var b bytes.Buffer
	b.Write(head)
	b.WriteString(`,"tools":[`)
	for i, raw := range tools {
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			return fmt.Errorf("tool %d: %w", i+1, err)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		b.Write(c.Bytes())
	}
	b.WriteString("\n]}\n")
	_, err = w.Write(b.Bytes())
	return err
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Read reads a tools file, or a bare tools/list result: every tool
// must be a JSON object.
func Read(data []byte) (*Tools, error) {
	var head struct {
		Kind       string  `json:"kind"`
		NextCursor *string `json:"nextCursor"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("read tools: %w", err)
	}
	var t Tools
	switch {
	case head.Kind != "" && head.Kind != Kind:
		return nil, fmt.Errorf("read tools: kind %q, want %q (a file of hosteval catalog -save)", head.Kind, Kind)
	case head.NextCursor != nil:
		return nil, errors.New("read tools: a page of tools/list with a nextCursor: save every page (hosteval catalog -save)")
	case head.Kind == "":
		// A tools/list result as another client saved it.
		var bare struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(data, &bare); err != nil {
			return nil, fmt.Errorf("read tools: %w", err)
		}
		t.Tools = bare.Tools
	default:
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("read tools: %w", err)
		}
	}
	switch {
	case t.Kind != "" && t.Schema != Schema:
		return nil, fmt.Errorf("read tools: schema %d, want %d", t.Schema, Schema)
	case t.Tools == nil:
		return nil, errors.New(`read tools: no "tools" list`)
	}
	for i, raw := range t.Tools {
		if len(bytes.TrimSpace(raw)) == 0 || bytes.TrimSpace(raw)[0] != '{' {
			return nil, fmt.Errorf("read tools: tool %d is not an object", i+1)
		}
	}
	return &t, nil
}
