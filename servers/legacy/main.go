// Command legacy is a fixture MCP server over stdio that speaks only
// 2025-11-25 (the initialize handshake), like a server built before
// 2026-07-28. It has one tool, hello. The -discover flag chooses how it
// treats the server/discover probe a 2026-07-28 client starts with:
//
//	unknown      answer -32601 method not found, as an older SDK does (default)
//	silent       never answer it (the client's auto mode then waits until its
//	             deadline); the server keeps serving everything else
//	unsupported  answer -32022 (unsupported protocol version) with data listing
//	             only 2025-11-25
//
// Any other request made the 2026-07-28 way (a protocol version in _meta) is
// refused with -32022, as is discover itself in the unsupported flavour:
// that is the SDK's own answer for a revision the server does not speak.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/servers/internal/fixture"
)

const (
	version        = "0.9.0"
	legacyRevision = "2025-11-25"
	methodDiscover = "server/discover"
)

func main() { fixture.Main("legacy", run) }

func run(ctx context.Context, p *fixture.Process) error {
	fs := flag.NewFlagSet("legacy", flag.ContinueOnError)
	fs.SetOutput(p.Stderr())
	discover := fs.String("discover", "unknown", "how to treat server/discover: unknown (-32601), silent (never answer) or unsupported (-32022)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: legacy [-discover=unknown|silent|unsupported]\n\n"+
			"A server that speaks only MCP %s. Example:\n  legacy -discover=silent\n\n", legacyRevision)
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
	var hooks fixture.Hooks
	switch *discover {
	case "unknown":
		hooks.Intercept = answerDiscover(func(req *jsonrpc.Request) *jsonrpc.Response {
			return &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{
				Code:    jsonrpc.CodeMethodNotFound,
				Message: fmt.Sprintf("method %q not found", methodDiscover),
			}}
		})
	case "silent":
		hooks.Intercept = answerDiscover(func(*jsonrpc.Request) *jsonrpc.Response { return nil })
	case "unsupported":
		// The SDK answers -32022 with {"supported": ["2025-11-25"], ...}
		// itself once the server is restricted to that revision.
	default:
		return fixture.Usagef("-discover: want unknown, silent or unsupported, got %q", *discover)
	}

	srv := p.NewServer(version, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{legacyRevision},
	})
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "hello",
		Title:       "Say hello",
		Description: "Greet someone by name, e.g. {\"name\": \"Amira\"} returns \"Hello, Amira!\". Use it to check that this server answers.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
		InputSchema: fixture.Schema[helloIn](func(props map[string]*jsonschema.Schema) {
			props["name"].MinLength = new(1)
			props["name"].MaxLength = new(100)
		}),
	}, hello)
	return p.Serve(ctx, srv, hooks)
}

// answerDiscover returns an intercept hook that takes server/discover away
// from the SDK and answers it with reply (nil: never).
func answerDiscover(reply func(*jsonrpc.Request) *jsonrpc.Response) func(*jsonrpc.Request) (*jsonrpc.Response, bool) {
	return func(req *jsonrpc.Request) (*jsonrpc.Response, bool) {
		if req.Method != methodDiscover {
			return nil, false
		}
		return reply(req), true
	}
}

type helloIn struct {
	Name string `json:"name" jsonschema:"Who to greet, e.g. Amira."`
}

type helloOut struct {
	Greeting string `json:"greeting" jsonschema:"The greeting, e.g. Hello, Amira!"`
}

func hello(_ context.Context, _ *mcp.CallToolRequest, in helloIn) (*mcp.CallToolResult, helloOut, error) {
	g := fmt.Sprintf("Hello, %s!", in.Name)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: g}}}, helloOut{Greeting: g}, nil
}
