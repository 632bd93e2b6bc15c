package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/servers/internal/fixture"
)

// Faults a host must bound, each a tool added by -faults (issue 23):
//
//	deaf      stops reading stdin for good, then answers: a request
//	          larger than the pipe (64 KB on Linux) can no longer be
//	          written
//	bad_utf8  answers with a text that is not UTF-8 (Latin-1 bytes and a
//	          lone 0xff), written raw
//	endless   answers with a line that never ends, until the host stops
//	          reading, and logs how much it wrote (chaos.endless)
//	flood     writes bytes (default 1 GB) on stderr in numbered lines of
//	          100 bytes, then answers
//	stray     answers requests the host never sent (ids 987654321 and
//	          "stray"), then the call
//	orphan    starts `sleep 600` in a session of its own (setsid), out of
//	          the server's process group, holding its stderr, and answers
//	          with its pid; detach orphans it at once (a double fork),
//	          and quiet with it holds none of the server's streams
//	sampling  sends the client a sampling/createMessage request of its
//	          own (2025-11-25: sessions and stdio) and answers with what
//	          the client said (issue 24: a host that declares no sampling
//	          answers -32601)
//	roots     the same with roots/list
var faultNames = []string{"deaf", "bad_utf8", "endless", "flood", "stray", "orphan", "sampling", "roots"}

// askedOut is what the sampling and roots tools answer: the request sent,
// and the client's answer or JSON-RPC error.
type askedOut struct {
	Asked     string `json:"asked" jsonschema:"The request sent to the client."`
	Answer    any    `json:"answer,omitempty" jsonschema:"The client's result, when it gave one."`
	ErrorCode int64  `json:"error_code,omitempty" jsonschema:"The client's JSON-RPC error code, when it refused."`
	Error     string `json:"error,omitempty" jsonschema:"The error, when the request failed."`
}

// asked makes the answer of a sampling or roots tool.
func asked(method string, res any, err error) askedOut {
	out := askedOut{Asked: method}
	var werr *jsonrpc.Error
	switch {
	case errors.As(err, &werr):
		out.ErrorCode, out.Error = werr.Code, werr.Message
	case err != nil:
		out.Error = err.Error()
	default:
		out.Answer = res
	}
	return out
}

// config is what chaos's flags ask for.
type config struct {
	faults []string
	// descriptionBytes, when not zero, adds the tool verbose, whose
	// description is that long.
	descriptionBytes int
	// schemaDepth, when not zero, lists the tool deep, whose input schema
	// nests that many objects (deepList).
	schemaDepth int
}

// parseFlags reads the flags; a nil config with no error means the usage
// was asked for and printed.
func parseFlags(p *fixture.Process) (*config, error) {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(p.Stderr())
	faults := fs.String("faults", "", "comma-separated fault tools to add: "+strings.Join(faultNames, ", "))
	descriptionBytes := fs.Int("description-bytes", 0, "add the tool verbose, whose description is this many bytes of prose (e.g. 50000000)")
	schemaDepth := fs.Int("schema-depth", 0, "list only ok and the tool deep, whose input schema nests this many objects, each a property of the one above (e.g. 600)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: chaos [-faults NAMES] [-description-bytes N] [-schema-depth N]\n\n"+
			"A server that fails on purpose. Example:\n  chaos -faults deaf\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(p.Args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil
		}
		return nil, fixture.Usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return nil, fixture.Usagef("unexpected arguments %q", fs.Args())
	}
	if *descriptionBytes < 0 {
		return nil, fixture.Usagef("-description-bytes %d: want a number of bytes", *descriptionBytes)
	}
	if *schemaDepth < 0 || *schemaDepth > maxSchemaDepth {
		return nil, fixture.Usagef("-schema-depth %d: want 0 to %d", *schemaDepth, maxSchemaDepth)
	}
	cfg := &config{descriptionBytes: *descriptionBytes, schemaDepth: *schemaDepth}
	if *faults != "" {
		for name := range strings.SplitSeq(*faults, ",") {
			if !slices.Contains(faultNames, name) {
				return nil, fixture.Usagef("-faults: unknown fault %q (want %s)", name, strings.Join(faultNames, ", "))
			}
			cfg.faults = append(cfg.faults, name)
		}
	}
	return cfg, nil
}

func addFaults(srv *mcp.Server, p *fixture.Process, cfg *config) {
	harmless := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	empty := fixture.Schema[noInput](nil)
	if n := cfg.descriptionBytes; n > 0 {
		mcp.AddTool(srv, &mcp.Tool{
			Name:        "verbose",
			Description: verboseDescription(n),
			Annotations: harmless,
			InputSchema: empty,
		}, func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, noteOut, error) {
			return nil, noteOut{Note: "a tool whose description is long"}, nil
		})
	}
	for _, name := range cfg.faults {
		switch name {
		case "sampling":
			mcp.AddTool(srv, &mcp.Tool{
				Name:        "sampling",
				Description: "Ask the client for a model's answer (sampling/createMessage) and answer with what it said. Takes no arguments.",
				Annotations: harmless,
				InputSchema: empty,
			}, func(ctx context.Context, req *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, askedOut, error) {
				res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
					MaxTokens: 16, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}},
				})
				return nil, asked("sampling/createMessage", res, err), nil
			})
		case "roots":
			mcp.AddTool(srv, &mcp.Tool{
				Name:        "roots",
				Description: "Ask the client for its roots (roots/list) and answer with what it said. Takes no arguments.",
				Annotations: harmless,
				InputSchema: empty,
			}, func(ctx context.Context, req *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, askedOut, error) {
				res, err := req.Session.ListRoots(ctx, nil)
				return nil, asked("roots/list", res, err), nil
			})
		case "deaf":
			mcp.AddTool(srv, &mcp.Tool{
				Name:        "deaf",
				Description: "Stop reading stdin for good, then answer: a request larger than the pipe (64 KB on Linux) can no longer be written to this server. Takes no arguments.",
				Annotations: harmless,
				InputSchema: empty,
			}, func(_ context.Context, req *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, noteOut, error) {
				p.StopReading()
				p.Log.Note("chaos.deaf", "stopped reading stdin on purpose", fixture.CorrelationFrom(req.Params.Meta))
				return nil, noteOut{Note: "this server reads nothing more from stdin"}, nil
			})
		case "endless":
			// A write to a closed stdout kills a Go program with
			// SIGPIPE; noticed, it fails, and the server can say how
			// much it wrote.
			signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
			mcp.AddTool(srv, &mcp.Tool{
				Name:        "endless",
				Description: "Answer with a line on stdout that never ends, until the host stops reading; then log how many bytes were written. Takes no arguments.",
				Annotations: harmless,
				InputSchema: empty,
			}, func(_ context.Context, req *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, noteOut, error) {
				n, err := writeEndless(p)
				p.Log.Note("chaos.endless", fmt.Sprintf("wrote %d bytes of an endless answer: %v", n, err), fixture.CorrelationFrom(req.Params.Meta))
				return nil, noteOut{}, err
			})
		case "flood":
			mcp.AddTool(srv, &mcp.Tool{
				Name:        "flood",
				Description: "Write `bytes` bytes (default 1000000000) on stderr, in lines of 100 bytes numbered from 0 (\"flood 000000000 xxx...\"), then answer, e.g. {\"bytes\": 64000000}.",
				Annotations: harmless,
				InputSchema: fixture.Schema[floodIn](func(props map[string]*jsonschema.Schema) {
					props["bytes"].Minimum = new(1.0)
					props["bytes"].Default = []byte("1000000000")
				}),
			}, func(_ context.Context, _ *mcp.CallToolRequest, in floodIn) (*mcp.CallToolResult, floodOut, error) {
				n := in.Bytes
				if n == 0 {
					n = 1_000_000_000
				}
				lines, err := flood(p.Stderr(), n)
				return nil, floodOut{Lines: lines}, err
			})
		case "stray":
			mcp.AddTool(srv, &mcp.Tool{
				Name:        "stray",
				Description: "Answer two requests the client never sent (ids 987654321 and \"stray\"), then this call. Takes no arguments.",
				Annotations: harmless,
				InputSchema: empty,
			}, func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, noteOut, error) {
				if err := p.WriteRaw([]byte(strayAnswers)); err != nil {
					return nil, noteOut{}, err
				}
				return nil, noteOut{Note: "answered two requests never sent"}, nil
			})
		case "orphan":
			mcp.AddTool(srv, &mcp.Tool{
				Name: "orphan",
				Description: "Start `sleep 600` in a session of its own (setsid), out of this server's process group and holding its stderr, and answer with its pid. " +
					"With detach, start it through a shell that exits at once, so that it is orphaned while the server runs, e.g. {\"detach\": true}; " +
					"with quiet too, the sleep holds none of this server's streams, e.g. {\"detach\": true, \"quiet\": true}.",
				Annotations: harmless,
				InputSchema: fixture.Schema[orphanIn](nil),
			}, func(_ context.Context, req *mcp.CallToolRequest, in orphanIn) (*mcp.CallToolResult, orphanOut, error) {
				pid, err := startOrphan(in.Detach, in.Quiet)
				if err != nil {
					return nil, orphanOut{}, err
				}
				p.Log.Note("chaos.orphan", fmt.Sprintf("started sleep %d out of the process group", pid), fixture.CorrelationFrom(req.Params.Meta))
				return nil, orphanOut{PID: pid}, nil
			})
		case "bad_utf8":
			mcp.AddTool(srv, &mcp.Tool{
				Name:        "bad_utf8",
				Description: "Answer at once with a text that is not UTF-8 (Latin-1 bytes and a lone 0xff), which JSON does not allow. Takes no arguments.",
				Annotations: harmless,
				InputSchema: empty,
			}, func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, noteOut, error) {
				// The bytes are put on the wire by rewrite: the SDK's
				// encoder would replace them.
				return nil, noteOut{Note: "placeholder"}, nil
			})
		}
	}
}

// maxSchemaDepth keeps deep's answer within what encoding/json writes
// (10,000 levels; each object of the schema is two).
const maxSchemaDepth = 4000

// deepList answers tools/list, before the SDK can (its decoder refuses a
// schema nested past 1,000 levels), with ok and the tool deep, whose input
// schema nests depth objects: {"type":"object","properties":{"a":...}}.
func deepList(depth int) func(req *jsonrpc.Request) (*jsonrpc.Response, bool) {
	schema := strings.Repeat(`{"type":"object","properties":{"a":`, depth-1) + `{"type":"object"}` + strings.Repeat(`}}`, depth-1)
	result := json.RawMessage(`{"tools":[{"name":"ok","inputSchema":{"type":"object"}},` +
		`{"name":"deep","description":"A tool whose input schema nests ` + strconv.Itoa(depth) + ` objects.","inputSchema":` + schema + `}]}`)
	return func(req *jsonrpc.Request) (*jsonrpc.Response, bool) {
		if req.Method != "tools/list" {
			return nil, false
		}
		return &jsonrpc.Response{ID: req.ID, Result: result}, true
	}
}

// strayAnswers are stray's answers to requests never sent: a result and
// an error.
const strayAnswers = `{"jsonrpc":"2.0","id":987654321,"result":{"content":[]}}` + "\n" +
	`{"jsonrpc":"2.0","id":"stray","error":{"code":-32603,"message":"an answer to nothing"}}` + "\n"

type orphanIn struct {
	Detach bool `json:"detach,omitempty" jsonschema:"Start it through a shell that exits at once (a double fork)."`
	Quiet  bool `json:"quiet,omitempty" jsonschema:"With detach: the sleep holds none of this server's streams (its stdin, stdout and stderr are /dev/null), as a daemon that closes its files before it forks."`
}

type orphanOut struct {
	PID int `json:"pid" jsonschema:"The pid of the sleep started."`
}

// badUTF8Line is bad_utf8's answer as written: "café" in Latin-1 and a
// byte that starts no character, in a text content item.
func badUTF8Line(resp *jsonrpc.Response) []byte {
	id, err := json.Marshal(resp.ID.Raw())
	if err != nil {
		return nil
	}
	line := []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"caf`)
	line = append(line, 0xe9, ' ', 0xff)
	return append(line, []byte(`"}]}}`+"\n")...)
}

// writeEndless writes the start of an answer and then x for ever, until a
// write fails; it returns the bytes written.
func writeEndless(p *fixture.Process) (int64, error) {
	start := []byte(`{"jsonrpc":"2.0","id":"endless","result":{"content":[{"type":"text","text":"`)
	if err := p.WriteRaw(start); err != nil {
		return 0, err
	}
	n := int64(len(start))
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for {
		if err := p.WriteRaw(chunk); err != nil {
			return n, err
		}
		n += int64(len(chunk))
	}
}

type floodIn struct {
	Bytes int `json:"bytes,omitempty" jsonschema:"Bytes to write on stderr (default 1000000000), in lines of 100."`
}

type floodOut struct {
	Lines int `json:"lines" jsonschema:"Lines written."`
}

// floodLine is the size of a flood line, its newline included.
const floodLine = 100

// flood writes n bytes (rounded up to whole lines) on w in lines of
// floodLine bytes, "flood 000000042 xxx...\n", a batch of lines a write,
// and returns the lines written.
func flood(w io.Writer, n int) (int, error) {
	lines := (n + floodLine - 1) / floodLine
	const batch = 640
	buf := make([]byte, 0, batch*floodLine)
	pad := bytes.Repeat([]byte("x"), floodLine)
	for i := 0; i < lines; {
		buf = buf[:0]
		for j := 0; j < batch && i < lines; j, i = j+1, i+1 {
			start := len(buf)
			buf = fmt.Appendf(buf, "flood %09d ", i)
			buf = append(buf, pad[:floodLine-1-(len(buf)-start)]...)
			buf = append(buf, '\n')
		}
		if _, err := w.Write(buf); err != nil {
			return i, err
		}
	}
	return lines, nil
}

// verboseDescription is n bytes of prose: a sentence again and again.
func verboseDescription(n int) string {
	const sentence = "Returns the full record of one host, its owner and its on-call notes; ask for less with a filter. "
	return strings.Repeat(sentence, n/len(sentence)+1)[:n]
}
