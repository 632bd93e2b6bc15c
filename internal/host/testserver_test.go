package host

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/servers/fixturetest"
)

// The host's own test server, for behaviour the fixture servers in servers/
// have no reason to show: url-mode questions, two questions in one round,
// state-only retries, a server that never stops asking, tool names that
// collide once sanitised. Call-level tests run it in process, over
// mcp.NewInMemoryTransports (memorySpec); a test of the process path
// re-executes the test binary as a stdio server (testServerSpec), as the
// go-sdk's tests do.

const testServerEnv = "HOSTEVAL_HOST_TEST_SERVER"

// fixtureBin is the folder of the fixture servers' binaries, built once.
var fixtureBin string

func TestMain(m *testing.M) {
	if os.Getenv(testServerEnv) != "" {
		runTestServer()
		return
	}
	// A fuzz worker runs only a fuzz target: it needs no fixture servers,
	// and building them in every worker would leave no time to fuzz.
	flag.Parse()
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		os.Exit(m.Run())
	}
	// The tests spend their time waiting on server processes and timers,
	// not on the CPU: run more of them at once than there are cores,
	// unless -parallel says otherwise.
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		flag.Set("test.parallel", strconv.Itoa(max(8, 4*runtime.GOMAXPROCS(0))))
	}
	os.Exit(fixturetest.MainAll(m, &fixtureBin))
}

// fixture returns a spec that starts the fixture server name.
func fixture(name string, env ...string) ServerSpec {
	return ServerSpec{Name: name, Command: filepath.Join(fixtureBin, name), Env: env}
}

// testServerSpec returns a spec that starts the test server as a process.
func testServerSpec(t testing.TB, name string, env ...string) ServerSpec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerSpec{Name: name, Command: exe, Env: append([]string{testServerEnv + "=1"}, env...)}
}

// testServerOptions choose the test server's optional behaviour.
type testServerOptions struct {
	collide bool // add tools a.b and a_b, which sanitise alike
	process bool // it runs as a process: add close_stdout
	// modernOnly refuses initialize: it speaks 2026-07-28 only.
	modernOnly bool
}

// memorySpec returns a spec that connects to a fresh test server in this
// process, over in-memory transports: each connection gets its own server
// session, as each start gets its own process.
func memorySpec(t testing.TB, name string, o testServerOptions) ServerSpec {
	t.Helper()
	srv := newTestServer(o)
	return ServerSpec{Name: name, Transport: func(ctx context.Context) (mcp.Transport, error) {
		clientEnd, serverEnd := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, serverEnd, nil)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { ss.Close() })
		return clientEnd, nil
	}}
}

type empty struct{}

// capsOut is what a client declared, as the server received it.
type capsOut struct {
	Elicitation *mcp.ElicitationCapabilities `json:"elicitation,omitempty"`
	Roots       *mcp.RootCapabilities        `json:"roots,omitempty"`
	Sampling    *mcp.SamplingCapabilities    `json:"sampling,omitempty"`
}

type echoOut struct {
	Answers map[string]any `json:"answers,omitempty"`
	Rounds  int            `json:"rounds"`
}

func runTestServer() {
	s := newTestServer(testServerOptions{collide: os.Getenv("HOSTTEST_COLLIDE") != "", process: true})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

func newTestServer(o testServerOptions) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "hosttest", Version: "1"}, nil)
	if o.modernOnly {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "initialize" {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "this server speaks 2026-07-28 only"}
				}
				return next(ctx, method, req)
			}
		})
	}
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	form := func(msg string) *mcp.ElicitParams {
		return &mcp.ElicitParams{Message: msg, RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"color": map[string]any{"type": "string", "enum": []any{"red", "blue"}},
				"size":  map[string]any{"type": "integer", "default": 3},
			},
		}}
	}
	answers := func(req *mcp.CallToolRequest) map[string]any {
		out := map[string]any{}
		for k, v := range req.Params.InputResponses {
			if r, ok := v.(*mcp.ElicitResult); ok {
				out[k] = map[string]any{"action": r.Action, "content": r.Content}
			}
		}
		return out
	}
	rounds := func(req *mcp.CallToolRequest) int {
		n, _ := strconv.Atoi(req.Params.RequestState)
		return n
	}

	mcp.AddTool(s, &mcp.Tool{Name: "two_questions", Annotations: readOnly},
		func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, echoOut, error) {
			if len(req.Params.InputResponses) == 0 {
				return &mcp.CallToolResult{RequestState: "1", InputRequests: mcp.InputRequestMap{
					"first": form("first question"), "second": form("second question"),
				}}, echoOut{}, nil
			}
			return nil, echoOut{Answers: answers(req), Rounds: 2}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "url_ask", Annotations: readOnly},
		func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, echoOut, error) {
			if len(req.Params.InputResponses) == 0 {
				return &mcp.CallToolResult{RequestState: "1", InputRequests: mcp.InputRequestMap{
					"login": &mcp.ElicitParams{Mode: "url", Message: "sign in", URL: "https://example.com/login", ElicitationID: "e1"},
				}}, echoOut{}, nil
			}
			return nil, echoOut{Answers: answers(req), Rounds: 2}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "state_only", Annotations: readOnly},
		func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, echoOut, error) {
			if n := rounds(req); n < 2 {
				// Shed load twice: no questions, just come back.
				return &mcp.CallToolResult{RequestState: strconv.Itoa(n + 1), InputRequests: mcp.InputRequestMap{}}, echoOut{}, nil
			}
			return nil, echoOut{Rounds: 3}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "ask_forever", Annotations: readOnly},
		func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, echoOut, error) {
			n := rounds(req) + 1
			return &mcp.CallToolResult{RequestState: strconv.Itoa(n), InputRequests: mcp.InputRequestMap{
				"again": form(fmt.Sprintf("question %d", n)),
			}}, echoOut{}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "caps", Annotations: readOnly},
		func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, capsOut, error) {
			var caps *mcp.ClientCapabilities
			if req.Session.InitializeParams() != nil {
				caps = req.Session.InitializeParams().Capabilities
			} else {
				caps = req.ClientCapabilities()
			}
			// RootsV2, not Roots: the SDK's Roots field is a struct that
			// marshals as {} whether or not the client declared roots.
			return nil, capsOut{Elicitation: caps.Elicitation, Roots: caps.RootsV2, Sampling: caps.Sampling}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write_thing"}, // not read-only: needs approval
		func(_ context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, echoOut, error) {
			return nil, echoOut{Rounds: 1}, nil
		})
	if o.collide {
		for _, name := range []string{"a.b", "a_b"} {
			mcp.AddTool(s, &mcp.Tool{Name: name, Annotations: readOnly},
				func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, echoOut, error) {
					return nil, echoOut{}, nil
				})
		}
	}
	if o.process {
		// A server whose stdout ends while it keeps running.
		mcp.AddTool(s, &mcp.Tool{Name: "close_stdout", Annotations: readOnly},
			func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, echoOut, error) {
				os.Stdout.Close()
				select {}
			})
	}
	return s
}
