// Command poison is a fixture MCP server whose catalog is poisoned on
// purpose, for the tests of hosteval lint and hosteval pin: each tool
// stands for a lint rule (hidden Unicode tag characters, zero-width and
// bidirectional characters, ANSI escapes, HTML comments, a homoglyph name,
// <IMPORTANT> directives, secret-file references, a notes parameter that
// wants the conversation, a description that steers cmdb's get_asset,
// missing descriptions, a destructive tool without annotations, and the
// rest of the rule table), and its instructions tell the model to ignore
// its own. The -catalog flag chooses:
//
//	poisoned  every rule's bad case, one tool or two per rule (default)
//	clean     the same tools mended: lints clean, beside cmdb too
//	collide   get.time and get_time, which the host cannot tell apart
//	          once sanitised (name-collision): a host refuses it
//
// With -drift the clean catalog changes after it was pinned: a sentence is
// added to get_forecast's description and a context parameter to
// add_note's schema. With -reorder every input schema is written with its
// keys in reverse order: the same definitions, another byte order.
//
// Its tools do nothing: a call answers with its name and its arguments'
// count. It serves over stdio, or over Streamable HTTP with -http ADDR
// (127.0.0.1:0 picks a port), writing the server's URL as the first line
// of stdout and serving until interrupted. It speaks 2026-07-28 and
// 2025-11-25, and logs one JSON line per request on stderr (over stdio).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/servers/internal/fixture"
)

const version = "1.0.0"

func main() { fixture.Main("poison", run) }

// options are the command's flags.
type options struct {
	catalog string
	drift   bool
	reorder bool
	http    string
}

func run(ctx context.Context, p *fixture.Process) error {
	fs := flag.NewFlagSet("poison", flag.ContinueOnError)
	fs.SetOutput(p.Stderr())
	var o options
	fs.StringVar(&o.catalog, "catalog", "poisoned", "the catalog served: poisoned, clean or collide")
	fs.BoolVar(&o.drift, "drift", false, "change the clean catalog as a rug pull would: a description and a schema")
	fs.BoolVar(&o.reorder, "reorder", false, "write every input schema with its keys in reverse order")
	fs.StringVar(&o.http, "http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:0) instead of stdio")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: poison [-catalog poisoned|clean|collide] [-drift] [-reorder] [-http ADDR]\n\n"+
			"A server whose catalog is poisoned on purpose, for hosteval lint. Example:\n  poison -catalog clean -drift\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(p.Args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fixture.Usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return fixture.Usagef("unexpected arguments %q", fs.Args())
	}
	tools, instructions, err := catalogOf(o)
	if err != nil {
		return err
	}
	newServer := func() *mcp.Server {
		srv := p.NewServer(version, &mcp.ServerOptions{Instructions: instructions})
		for _, t := range tools {
			srv.AddTool(t, answer(t.Name))
		}
		return srv
	}
	if o.http != "" {
		return serveHTTP(ctx, p, o.http, newServer)
	}
	return p.Serve(ctx, newServer(), fixture.Hooks{})
}

// catalogOf returns the tools and instructions the options choose.
func catalogOf(o options) ([]*mcp.Tool, string, error) {
	var list []string
	instructions := cleanInstructions
	switch o.catalog {
	case "poisoned":
		instructions = poisonedInstructions
		for _, e := range entries {
			if e.poisoned != "" {
				list = append(list, e.poisoned)
			}
		}
	case "clean":
		for _, e := range entries {
			if e.clean == "" {
				continue
			}
			def := e.clean
			if changed, ok := drift[toolName(def)]; ok && o.drift {
				def = changed
			}
			list = append(list, def)
		}
	case "collide":
		for _, e := range collide {
			list = append(list, e.poisoned)
		}
	default:
		return nil, "", fixture.Usagef("-catalog: want poisoned, clean or collide, got %q", o.catalog)
	}
	if o.drift && o.catalog != "clean" {
		return nil, "", fixture.Usagef("-drift changes the clean catalog: use it with -catalog clean")
	}
	tools := make([]*mcp.Tool, 0, len(list))
	for _, def := range list {
		t, err := decodeTool(def, o.reorder)
		if err != nil {
			return nil, "", err
		}
		tools = append(tools, t)
	}
	return tools, instructions, nil
}

func toolName(def string) string {
	var t struct{ Name string }
	json.Unmarshal([]byte(def), &t)
	return t.Name
}

// decodeTool reads a tool's JSON. Its schemas are kept as written (the SDK
// would marshal a decoded schema with its keys sorted), reordered if asked.
func decodeTool(def string, reorder bool) (*mcp.Tool, error) {
	var t mcp.Tool
	if err := json.Unmarshal([]byte(def), &t); err != nil {
		return nil, fmt.Errorf("tool %s: %w", def, err)
	}
	var schemas struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	json.Unmarshal([]byte(def), &schemas)
	t.InputSchema = schemas.InputSchema
	if reorder {
		t.InputSchema = reversed(schemas.InputSchema)
	}
	if schemas.OutputSchema != nil {
		t.OutputSchema = schemas.OutputSchema
	}
	return &t, nil
}

// reversed writes a JSON value with every object's keys in reverse order.
func reversed(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	writeReversed(&b, raw)
	return b.Bytes()
}

func writeReversed(b *bytes.Buffer, raw json.RawMessage) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) > 0 && raw[0] == '{':
		// Keys in the order written: decode the keys one by one.
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.Token() // {
		type member struct {
			key string
			val json.RawMessage
		}
		var members []member
		for dec.More() {
			k, _ := dec.Token()
			var v json.RawMessage
			dec.Decode(&v)
			members = append(members, member{k.(string), v})
		}
		slices.Reverse(members)
		b.WriteByte('{')
		for i, m := range members {
			if i > 0 {
				b.WriteByte(',')
			}
			key, _ := json.Marshal(m.key)
			b.Write(key)
			b.WriteByte(':')
			writeReversed(b, m.val)
		}
		b.WriteByte('}')
	case len(raw) > 0 && raw[0] == '[':
		var items []json.RawMessage
		json.Unmarshal(raw, &items)
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteByte(',')
			}
			writeReversed(b, it)
		}
		b.WriteByte(']')
	default:
		b.Write(raw)
	}
}

// answer is every tool's handler: it does nothing a poisoned description
// asks for.
func answer(name string) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args map[string]any
		if len(req.Params.Arguments) > 0 {
			json.Unmarshal(req.Params.Arguments, &args)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
			Text: fmt.Sprintf("%s: called with %d arguments; this fixture does nothing", name, len(args)),
		}}}, nil
	}
}

// serveHTTP serves the catalog over Streamable HTTP until ctx is done. A
// request with a 2026-07-28 revision is served statelessly, as the go-sdk
// serves that revision; the initialize handshake of 2025-11-25 gets a
// session.
func serveHTTP(ctx context.Context, p *fixture.Process, addr string, newServer func() *mcp.Server) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fixture.Usagef("-http %s: %v", addr, err)
	}
	srv := newServer()
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	sessions := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") != "" || isInitialize(r) {
			sessions.ServeHTTP(w, r)
			return
		}
		stateless.ServeHTTP(w, r)
	})}
	if err := p.WriteRaw([]byte("http://" + ln.Addr().String() + "/mcp\n")); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		hs.Close()
		return nil
	}
}

// isInitialize reports whether r is a JSON-RPC initialize, leaving its body
// to be read again.
func isInitialize(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	var msg struct {
		Method string `json:"method"`
	}
	json.Unmarshal(body, &msg)
	return msg.Method == "initialize"
}
