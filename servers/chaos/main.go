// Command chaos is a fixture MCP server over stdio with one tool per fault,
// to prove that a host survives its servers:
//
//	crash          the process logs a line and exits (status 3) mid-call
//	hang           the call never returns, even when cancelled
//	garbage        writes a line that is not JSON to stdout, then answers
//	huge           answers with a 20 MB result (size adjustable)
//	weird_content  answers with a content item of an unknown type ("hologram")
//	plain_error    fails with a JSON-RPC error whose code is 0
//	ok             a healthy tool, to show the host carries on
//
// The -faults flag adds tools for faults a host must bound (faults.go), and
// other flags make the server misbehave as a whole; the default tool list
// is the seven above.
//
// It speaks 2026-07-28 and 2025-11-25 and logs one JSON line per answered
// request on stderr.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/servers/internal/fixture"
)

const (
	version          = "1.0.0"
	crashStatus      = 3
	defaultHugeBytes = 20_000_000
	maxHugeBytes     = 64_000_000
	garbageLine      = "garbage: this line is not JSON-RPC, a server printed it to stdout by mistake\n"
)

func main() { fixture.Main("chaos", run) }

func run(ctx context.Context, p *fixture.Process) error {
	cfg, err := parseFlags(p)
	if cfg == nil || err != nil {
		return err
	}
	srv := p.NewServer(version, &mcp.ServerOptions{
		Instructions: "A server that fails on purpose, one tool per fault. Only ok behaves.",
	})
	addTools(srv, p)
	addFaults(srv, p, cfg)
	hooks := fixture.Hooks{Rewrite: rewrite}
	if cfg.schemaDepth > 0 {
		hooks.Intercept, hooks.InterceptHTTP = deepList(cfg.schemaDepth), true
	}
	return p.Serve(ctx, srv, hooks)
}

type noInput struct{}

type okIn struct {
	Message string `json:"message,omitempty" jsonschema:"Any text to echo back, e.g. ping."`
}

type okOut struct {
	OK      bool   `json:"ok" jsonschema:"Always true."`
	Message string `json:"message" jsonschema:"The message, echoed."`
}

type hugeIn struct {
	Bytes int `json:"bytes,omitempty" jsonschema:"Size of the data field in bytes (default 20000000, at most 64000000)."`
}

type hugeOut struct {
	Bytes int    `json:"bytes" jsonschema:"Size of data in bytes."`
	Data  string `json:"data" jsonschema:"Filler."`
}

type noteOut struct {
	Note string `json:"note" jsonschema:"What the tool did."`
}

func addTools(srv *mcp.Server, p *fixture.Process) {
	harmless := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	empty := fixture.Schema[noInput](nil)

	mcp.AddTool(srv, &mcp.Tool{
		Name:        "crash",
		Description: "Crash the server: the process exits in the middle of the call, and the call never gets an answer. Takes no arguments.",
		// Not read-only: it takes the server down for everyone using it.
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)},
		InputSchema: empty,
	}, func(_ context.Context, req *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, noteOut, error) {
		p.Log.Note("chaos.crash", "exiting mid-call on purpose, status 3", fixture.CorrelationFrom(req.Params.Meta))
		p.Exit(crashStatus)
		return nil, noteOut{}, nil // not reached
	})

	mcp.AddTool(srv, &mcp.Tool{
		Name:        "hang",
		Description: "Never answer: the call blocks for good and ignores cancellation. Takes no arguments.",
		Annotations: harmless,
		InputSchema: empty,
	}, func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, noteOut, error) {
		select {} // a handler stuck in code that cannot be interrupted
	})

	mcp.AddTool(srv, &mcp.Tool{
		Name:        "garbage",
		Description: "Write a line that is not JSON to stdout (the MCP channel), then answer normally. Takes no arguments.",
		Annotations: harmless,
		InputSchema: empty,
	}, func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, noteOut, error) {
		if err := p.WriteRaw([]byte(garbageLine)); err != nil {
			return nil, noteOut{}, err
		}
		return nil, noteOut{Note: "wrote a non-JSON line to stdout before this answer"}, nil
	})

	mcp.AddTool(srv, &mcp.Tool{
		Name:        "huge",
		Description: "Answer with a huge result: a data field of 20 MB by default, or of `bytes` bytes, e.g. {\"bytes\": 5000000}.",
		Annotations: harmless,
		InputSchema: fixture.Schema[hugeIn](func(props map[string]*jsonschema.Schema) {
			props["bytes"].Minimum = new(1.0)
			props["bytes"].Maximum = new(float64(maxHugeBytes))
			props["bytes"].Default = []byte("20000000")
		}),
	}, func(_ context.Context, _ *mcp.CallToolRequest, in hugeIn) (*mcp.CallToolResult, hugeOut, error) {
		// The data is filled in on the wire (see rewrite): the SDK would
		// encode 20 MB twice over, which takes seconds.
		return &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: "a huge result: see structuredContent"}},
		}, hugeOut{Bytes: in.Bytes}, nil
	})

	mcp.AddTool(srv, &mcp.Tool{
		Name:        "weird_content",
		Description: "Answer with a content item of a type no client knows (\"hologram\") next to a text item. Takes no arguments.",
		Annotations: harmless,
		InputSchema: empty,
	}, func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, noteOut, error) {
		// The SDK only writes content types it knows; rewrite swaps this
		// placeholder for the hologram on the wire.
		return &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: "placeholder"}},
		}, noteOut{Note: "the content holds an item of unknown type hologram"}, nil
	})

	mcp.AddTool(srv, &mcp.Tool{
		Name:        "plain_error",
		Description: "Fail with a JSON-RPC error whose code is 0 and whose message is plain text. Takes no arguments.",
		Annotations: harmless,
		InputSchema: empty,
	}, func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, noteOut, error) {
		return nil, noteOut{}, &jsonrpc.Error{Code: 0, Message: "something went wrong"}
	})

	mcp.AddTool(srv, &mcp.Tool{
		Name:        "ok",
		Description: "A healthy tool: answers {ok: true, message} at once, echoing message (e.g. {\"message\": \"ping\"}).",
		Annotations: harmless,
		InputSchema: fixture.Schema[okIn](func(props map[string]*jsonschema.Schema) {
			props["message"].MaxLength = new(1000)
		}),
	}, func(_ context.Context, _ *mcp.CallToolRequest, in okIn) (*mcp.CallToolResult, okOut, error) {
		return nil, okOut{OK: true, Message: in.Message}, nil
	})
}

// hugeMarker stands in for the data of a huge answer until the answer is
// on its way out.
const hugeMarker = "@@huge-data@@"

// hugeLine is the wire line of a huge answer: the SDK's answer, with its
// empty data field filled with n bytes.
func hugeLine(resp *jsonrpc.Response) []byte {
	var res map[string]json.RawMessage
	var out hugeOut
	if json.Unmarshal(resp.Result, &res) != nil || json.Unmarshal(res["structuredContent"], &out) != nil {
		return nil // not ours to change: write the answer as it is
	}
	res["structuredContent"] = json.RawMessage(fmt.Sprintf(`{"bytes":%d,"data":%q}`, out.Bytes, hugeMarker))
	small, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": resp.ID.Raw(), "result": res})
	if err != nil {
		return nil
	}
	i := bytes.Index(small, []byte(hugeMarker))
	line := make([]byte, 0, len(small)+out.Bytes)
	line = append(line, small[:i]...)
	line = append(line, bytes.Repeat([]byte("x"), out.Bytes)...)
	line = append(line, small[i+len(hugeMarker):]...)
	return append(line, '\n')
}

// weirdContent is what weird_content's answer carries on the wire.
var weirdContent = json.RawMessage(`[{"type":"hologram","hologram":{"frames":24,"uri":"holo://chaos/cube"}},` +
	`{"type":"text","text":"a hologram of a rotating cube"}]`)

// rewrite produces the faults the SDK would never write: a content item of
// an unknown type, and an answer of tens of megabytes.
func rewrite(tool string, resp *jsonrpc.Response) []byte {
	if resp.Error != nil {
		return nil
	}
	switch tool {
	case "huge":
		return hugeLine(resp)
	case "bad_utf8":
		return badUTF8Line(resp)
	case "weird_content":
		var res map[string]json.RawMessage
		if err := json.Unmarshal(resp.Result, &res); err != nil {
			return nil
		}
		res["content"] = weirdContent
		if b, err := json.Marshal(res); err == nil {
			resp.Result = b
		}
	}
	return nil
}
