package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// trace is the host's wire trace of one server: lines as wire.go writes
// them.
func trace(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

func line(ms float64, server, dir, kind, id, method, message string) string {
	l := map[string]any{"ms": ms, "server": server, "stream": "stdin", "dir": dir, "kind": kind, "method": method, "message": json.RawMessage(message)}
	if id != "" {
		l["id"] = json.RawMessage(id)
	}
	data, _ := json.Marshal(l)
	return string(data)
}

func TestRecorderPairsRequestsAndAnswers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cmdb.yaml")
	r := NewRecorder(map[string]string{"cmdb": path})
	text := trace(
		line(1, "cmdb", "->", "request", "1", "server/discover", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"x":1}}}`),
		line(3, "cmdb", "<-", "result", "1", "server/discover", `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`),
		line(4, "cmdb", "->", "request", "2", "ping", `{"jsonrpc":"2.0","id":2,"method":"ping"}`),
		line(5, "cmdb", "->", "notification", "", "notifications/initialized", `{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		// An answer traced before its request: the server was quicker than
		// the host's tap.
		line(6, "cmdb", "<-", "result", "3", "", `{"jsonrpc":"2.0","id":3,"result":{"content":[],"structuredContent":{"n":1.50}}}`),
		line(6, "cmdb", "->", "request", "3", "tools/call", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get","arguments":{"b":2,"a":1},"_meta":{"trace":"t1"}}}`),
		line(7, "cmdb", "->", "request", "4", "tools/call", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get","arguments":{"a":9}}}`),
		line(9, "cmdb", "<-", "error", "4", "tools/call", `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"no such a"}}`),
		line(9, "other", "->", "request", "5", "tools/call", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x"}}`),
		line(10, "cmdb", "->", "request", "6", "tools/list", `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"cursor":"p2"}}`),
	)
	// In pieces, as a writer may get it.
	for _, piece := range []string{text[:50], text[50:51], text[51:]} {
		if _, err := r.Write([]byte(piece)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Exchange{
		{Method: "server/discover", Result: json.RawMessage(`{"supportedVersions":["2026-07-28"]}`), LatencyMS: 2},
		{Method: "tools/call", Params: json.RawMessage(`{"arguments":{"a":1,"b":2},"name":"get"}`), Result: json.RawMessage(`{"content":[],"structuredContent":{"n":1.50}}`)},
		{Method: "tools/call", Params: json.RawMessage(`{"arguments":{"a":9},"name":"get"}`), Error: json.RawMessage(`{"code":-32602,"message":"no such a"}`), LatencyMS: 2},
		{Method: "tools/list", Params: json.RawMessage(`{"cursor":"p2"}`)},
	}
	if diff := cmp.Diff(want, c.exchanges); diff != "" {
		t.Errorf("exchanges (-want +got):\n%s", diff)
	}
	data, _ := os.ReadFile(path)
	for _, s := range []string{"unanswered: true", "n: 1.50", "server: cmdb"} {
		if !strings.Contains(string(data), s) {
			t.Errorf("the cassette lacks %q:\n%s", s, data)
		}
	}
}

// connect is a client session with the stand-in of c.
func connect(t *testing.T, c *Cassette) *mcp.ClientSession {
	t.Helper()
	tr, err := c.Transport(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func writeCassette(t *testing.T, exchanges ...Exchange) *Cassette {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := write(path, "s", exchanges); err != nil {
		t.Fatal(err)
	}
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var initialize = Exchange{Method: "initialize", Result: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"recorded","version":"7.1"}}`)}

func TestStandInAnswersAsRecorded(t *testing.T) {
	c := writeCassette(t, initialize,
		Exchange{Method: "tools/list", Result: json.RawMessage(`{"tools":[{"name":"get","description":"Get it.","inputSchema":{"type":"object"}}]}`)},
		Exchange{Method: "tools/call", Params: json.RawMessage(`{"arguments":{"a":1},"name":"get"}`), Result: json.RawMessage(`{"content":[{"type":"text","text":"first"}]}`)},
		Exchange{Method: "tools/call", Params: json.RawMessage(`{"arguments":{"a":1},"name":"get"}`), Result: json.RawMessage(`{"content":[{"type":"text","text":"second"}]}`)},
		Exchange{Method: "tools/call", Params: json.RawMessage(`{"arguments":{"a":2},"name":"get"}`), Error: json.RawMessage(`{"code":-32602,"message":"no a=2"}`)},
	)
	cs := connect(t, c)
	if got := cs.InitializeResult(); got.ProtocolVersion != "2025-11-25" || got.ServerInfo.Name != "recorded" {
		t.Errorf("handshake = %+v, want the recorded revision and server", got)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Description != "Get it." {
		t.Fatalf("tools/list = %+v, %v", tools, err)
	}
	call := func(args map[string]any) (string, error) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get", Arguments: args})
		if err != nil {
			return "", err
		}
		return res.Content[0].(*mcp.TextContent).Text, nil
	}
	// In the order recorded, the last repeating.
	for _, want := range []string{"first", "second", "second"} {
		if got, err := call(map[string]any{"a": 1}); got != want || err != nil {
			t.Errorf("call = %q, %v; want %q", got, err, want)
		}
	}
	var werr *jsonrpc.Error
	if _, err := call(map[string]any{"a": 2}); !errors.As(err, &werr) || werr.Code != -32602 || werr.Message != "no a=2" {
		t.Errorf("recorded error = %v, want -32602 no a=2", err)
	}
	_, err = call(map[string]any{"a": 3})
	if !errors.As(err, &werr) || werr.Code != MissCode || !strings.Contains(werr.Message, `tools/call {"arguments":{"a":3},"name":"get"} is not recorded; recorded: {"arguments":{"a":1},"name":"get"}, {"arguments":{"a":1},"name":"get"}, {"arguments":{"a":2},"name":"get"}`) {
		t.Errorf("a call not recorded = %v", err)
	}
	if got := c.Misses(); len(got) != 1 || !strings.HasPrefix(got[0], "server cassette "+c.Path()+": ") {
		t.Errorf("misses = %q, want the one call", got)
	}
	if _, err := cs.ListPrompts(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "no prompts/list request is") {
		t.Errorf("prompts/list = %v, want a miss", err)
	}
}

func TestStandInNeverAnswersWhatWasNeverAnswered(t *testing.T) {
	c := writeCassette(t, initialize, Exchange{Method: "tools/call", Params: json.RawMessage(`{"arguments":{},"name":"hang"}`)})
	cs := connect(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hang"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call the server never answered = %v, want no answer", err)
	}
	if len(c.Misses()) != 0 {
		t.Errorf("misses = %q, want none", c.Misses())
	}
}

func TestOpenRefusesBadFiles(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"not a cassette", "exchanges: []\n", "not a server cassette"},
		{"another version", "hosteval_server_cassette: 2\nexchanges: []\n", "format version 2, want 1"},
		{"a misspelt key", "hosteval_server_cassette: 1\nexchanges:\n  - {method: ping, reslt: {}}\n", `line 3: unknown key "reslt"`},
		{"no answer", "hosteval_server_cassette: 1\nexchanges:\n  - {method: tools/list}\n", "exchanges[0]: want a result, an error, or unanswered: true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.yaml")
			os.WriteFile(path, []byte(tt.text), 0o644)
			if _, err := Open(path); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none.yaml")); err == nil || !strings.Contains(err.Error(), "not recorded yet") {
		t.Errorf("Open of a missing file = %v", err)
	}
}
