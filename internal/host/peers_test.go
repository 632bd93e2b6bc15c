package host

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/record"
)

// What the third-party servers of tools/node showed to be wrong in the host
// (docs/peers.md), pinned against a peer of our own: the test binary
// re-executed as a raw JSON-RPC server that speaks only 2025-11-25 and
// writes what the go-sdk's server types cannot (execution.taskSupport) and
// what a TypeScript server sends (image data in structuredContent, text
// wrapped as {"content": ...}, elicitation/create in the middle of a call,
// calls answered concurrently).

const rawPeerEnv = "HOSTEVAL_HOST_RAW_PEER"

func init() {
	// Before TestMain: the raw peer is this binary in another role.
	if os.Getenv(rawPeerEnv) != "" {
		runRawPeer()
		os.Exit(0)
	}
}

func rawPeerSpec(t testing.TB, name string) ServerSpec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerSpec{Name: name, Command: exe, Env: []string{rawPeerEnv + "=1"}}
}

// fakePNG is what a server sends as image data: bytes that are not text.
var fakePNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// longBase64 is binary data long enough to be taken for binary anywhere.
var longBase64 = base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x00\x01\x02\xfe\xff", 60)))

var rawPeerTools = `[
 {"name":"media","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"execution":{"taskSupport":"forbidden"}},
 {"name":"wrapped","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"weather","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"blob","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"research","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"execution":{"taskSupport":"required"}},
 {"name":"maybe_task","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"execution":{"taskSupport":"optional"}},
 {"name":"hold","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"ask","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}
]`

// rawPeerResults are the results of the tools that answer at once.
func rawPeerResults() map[string]any {
	img := map[string]any{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(fakePNG)}
	return map[string]any{
		// server-filesystem's read_media_file.
		"media": map[string]any{"content": []any{img}, "structuredContent": map[string]any{"content": []any{img}}},
		// server-filesystem's text tools.
		"wrapped": map[string]any{
			"content":           []any{map[string]any{"type": "text", "text": "[FILE] a.txt\n[DIR] sub"}},
			"structuredContent": map[string]any{"content": "[FILE] a.txt\n[DIR] sub"},
		},
		// Structured content worth reading, with binary data inside.
		"weather": map[string]any{
			"content":           []any{map[string]any{"type": "text", "text": "see structured content"}},
			"structuredContent": map[string]any{"temperature": 33, "icon": longBase64, "map": "data:image/png;base64," + base64.StdEncoding.EncodeToString(fakePNG), "radar": img},
		},
		// server-everything's get-resource-reference for a blob resource.
		"blob": map[string]any{"content": []any{map[string]any{"type": "resource", "resource": map[string]any{
			"uri": "demo://resource/dynamic/blob/1", "mimeType": "text/plain", "blob": base64.StdEncoding.EncodeToString([]byte("Resource 1: a text blob")),
		}}}},
		"research":   map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": "MCP error -32601: Tool research requires task augmentation"}}},
		"maybe_task": map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}},
	}
}

// runRawPeer serves stdin/stdout as a 2025-11-25 server. tools/call runs
// concurrently, as the TypeScript servers do: "hold" answers after
// arguments.ms, "ask" sends elicitation/create and answers with the action
// it got back.
func runRawPeer() {
	var (
		wmu     sync.Mutex
		pmu     sync.Mutex
		pending = map[string]chan json.RawMessage{}
		wg      sync.WaitGroup
		nextID  int
	)
	write := func(v any) {
		data, _ := json.Marshal(v)
		wmu.Lock()
		defer wmu.Unlock()
		os.Stdout.Write(append(data, '\n'))
	}
	reply := func(id json.RawMessage, result any) {
		write(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	var tools []any
	json.Unmarshal([]byte(rawPeerTools), &tools)
	results := rawPeerResults()

	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil {
			continue
		}
		switch {
		case msg.Method == "" && msg.ID != nil: // a response to our question
			pmu.Lock()
			ch := pending[string(msg.ID)]
			delete(pending, string(msg.ID))
			pmu.Unlock()
			if ch != nil {
				ch <- msg.Result
			}
		case msg.Method == "initialize":
			reply(msg.ID, map[string]any{"protocolVersion": Revision20251125, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "rawpeer", "version": "1"}})
		case msg.Method == "tools/list":
			reply(msg.ID, map[string]any{"tools": tools})
		case msg.Method == "tools/call":
			wg.Go(func() {
				switch msg.Params.Name {
				case "hold":
					ms, _ := msg.Params.Arguments["ms"].(float64)
					time.Sleep(time.Duration(ms) * time.Millisecond)
					reply(msg.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "held"}}})
				case "ask":
					pmu.Lock()
					nextID++
					id := fmt.Sprintf(`"q%d"`, nextID)
					ch := make(chan json.RawMessage, 1)
					pending[id] = ch
					pmu.Unlock()
					write(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": "elicitation/create", "params": map[string]any{
						"message": "Pick a color", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"color": map[string]any{"type": "string"}}},
					}})
					var answer struct {
						Action string `json:"action"`
					}
					json.Unmarshal(<-ch, &answer)
					reply(msg.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "answer: " + answer.Action}}})
				default:
					reply(msg.ID, results[msg.Params.Name])
				}
			})
		case msg.ID != nil: // server/discover, ping, ...
			if msg.Method == "ping" {
				reply(msg.ID, map[string]any{})
				continue
			}
			write(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
		}
	}
	// Input closed: answer nothing more. Calls still holding are dropped.
}

func startRawPeer(t *testing.T, opts Options) *Host {
	t.Helper()
	if len(opts.Servers) == 0 {
		opts.Servers = []ServerSpec{rawPeerSpec(t, "peer")}
	}
	h, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if s := h.Servers()[0]; s.Error != "" || s.Protocol != Revision20251125 {
		t.Fatalf("raw peer: protocol %q, error %q", s.Protocol, s.Error)
	}
	return h
}

// TestResultTextOfPeers pins what the model reads of the results that the
// third-party servers send: never base64, and text as text.
func TestResultTextOfPeers(t *testing.T) {
	t.Parallel()
	h := startRawPeer(t, Options{})
	tests := []struct {
		tool       string
		want       string
		structured bool
	}{
		// server-filesystem's read_media_file: base64 in structuredContent.
		{"media", "[image, image/png, 16 bytes: not shown]", false},
		// server-filesystem's {"content": "<the text>"}: the text, unescaped.
		{"wrapped", "[FILE] a.txt\n[DIR] sub", false},
		// Structured content is still preferred, with its binary data noted.
		{"weather", `{"icon":"[base64, 300 bytes: not shown]","map":"[data URI, image/png, 16 bytes: not shown]","radar":"[image, image/png, 16 bytes: not shown]","temperature":33}`, true},
		// A text/plain blob is text.
		{"blob", "[resource demo://resource/dynamic/blob/1, text/plain]\nResource 1: a text blob", false},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			text, ev := h.Call(t.Context(), CallRequest{Name: "peer__" + tt.tool, TraceID: NewID(), Step: 1})
			if ev.Outcome != record.OutcomeOK {
				t.Fatalf("outcome %s: %s", ev.Outcome, text)
			}
			if diff := cmp.Diff(tt.want, text); diff != "" {
				t.Errorf("text the model reads (-want +got):\n%s", diff)
			}
			if ev.Structured != tt.structured {
				t.Errorf("structured = %t, want %t", ev.Structured, tt.structured)
			}
		})
	}
}

// TestTaskOnlyToolsAreNotOffered: a tool with execution.taskSupport
// "required" always fails without task augmentation, which the host does
// not implement (server-everything's simulate-research-query). It stays in
// the table, so the harness and deny lists can name it, but the model is
// not offered it, and a call of it sends nothing.
func TestTaskOnlyToolsAreNotOffered(t *testing.T) {
	t.Parallel()
	h := startRawPeer(t, Options{})
	var all, offered []string
	for _, tool := range h.Tools() {
		all = append(all, tool.Name)
	}
	for _, tool := range h.Offered() {
		offered = append(offered, tool.Name)
	}
	wantAll := []string{"peer__media", "peer__wrapped", "peer__weather", "peer__blob", "peer__research", "peer__maybe_task", "peer__hold", "peer__ask"}
	if diff := cmp.Diff(wantAll, all); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	wantOffered := []string{"peer__media", "peer__wrapped", "peer__weather", "peer__blob", "peer__maybe_task", "peer__hold", "peer__ask"}
	if diff := cmp.Diff(wantOffered, offered); diff != "" {
		t.Errorf("offered (-want +got):\n%s", diff)
	}
	if strings.Contains(string(h.ToolsJSON()), "research") {
		t.Errorf("the tools array names the task-only tool: %s", h.ToolsJSON())
	}
	if len(h.UnknownNames()) != 0 {
		t.Errorf("unknown names %v, want none", h.UnknownNames())
	}

	_, ev := h.Call(t.Context(), CallRequest{Name: "peer__research", TraceID: NewID(), Step: 1})
	if ev.Outcome != record.OutcomeUnknownTool || ev.Rounds != 0 {
		t.Errorf("model's call: outcome %s, rounds %d; want unknown_tool, 0 (nothing sent)", ev.Outcome, ev.Rounds)
	}
	text, ev := h.Check(t.Context(), CallRequest{Name: "peer__research", TraceID: NewID(), Step: 1})
	if ev.Outcome != record.OutcomeToolError || !strings.Contains(text, "requires task augmentation") {
		t.Errorf("harness's call: outcome %s, text %q; want the server's tool error", ev.Outcome, text)
	}
}

// peerElicitor accepts every question and remembers it.
type peerElicitor struct {
	mu    sync.Mutex
	asked []string
}

func (e *peerElicitor) Elicit(_ context.Context, req ElicitRequest) (ElicitAnswer, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = append(e.asked, req.Server+": "+req.Message)
	return ElicitAnswer{Action: ActionAccept, Content: map[string]any{"color": "red"}}, nil
}

func (e *peerElicitor) questions() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.asked...)
}

// TestSharedServerQuestionsGoToTheirHost: a shared server's
// elicitation/create names no call. With one host's call in flight it is
// that host's question; with calls of two hosts in flight it could be
// either's, and it is declined rather than put to the wrong person.
func TestSharedServerQuestionsGoToTheirHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		otherHold bool // host A has a call in flight when B's call asks
		wantA     []string
		wantB     []string
		wantText  string
	}{
		{"alone", false, nil, []string{"peer: Pick a color"}, "answer: accept"},
		{"another case's call in flight", true, nil, nil, "answer: decline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := rawPeerSpec(t, "peer")
			spec.Shareable = true
			pool := NewPool(Options{})
			defer pool.Close()
			elA, elB := &peerElicitor{}, &peerElicitor{}
			a := startRawPeer(t, Options{Servers: []ServerSpec{spec}, Pool: pool, Elicitor: elA})
			b := startRawPeer(t, Options{Servers: []ServerSpec{spec}, Pool: pool, Elicitor: elB})
			if a.servers["peer"] != b.servers["peer"] {
				t.Fatal("the two hosts do not share the server")
			}

			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			if tt.otherHold {
				wg.Go(func() {
					a.Call(ctx, CallRequest{Name: "peer__hold", Arguments: `{"ms": 5000}`, TraceID: NewID(), Step: 1})
				})
				waitInFlight(t, a.servers["peer"], 1)
			}
			text, ev := b.Call(t.Context(), CallRequest{Name: "peer__ask", TraceID: NewID(), Step: 1})
			cancel()
			wg.Wait()

			if text != tt.wantText {
				t.Errorf("B's result %q, want %q", text, tt.wantText)
			}
			if diff := cmp.Diff(tt.wantA, elA.questions()); diff != "" {
				t.Errorf("A's person was asked (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantB, elB.questions()); diff != "" {
				t.Errorf("B's person was asked (-want +got):\n%s", diff)
			}
			if got, want := ev.AskedUser, len(tt.wantB) > 0; got != want {
				t.Errorf("B's call asked_user = %t, want %t", got, want)
			}
		})
	}
}

// waitInFlight waits until n calls are in flight on s.
func waitInFlight(t *testing.T, s *serverConn, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		got := len(s.calls)
		s.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls in flight after 5 s, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestScrubBinary pins which strings count as binary data.
func TestScrubBinary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"short base64-looking word stays", "SGVsbG8=", "SGVsbG8="},
		{"long text stays", strings.Repeat("plain words ", 40), strings.Repeat("plain words ", 40)},
		{"long base64 goes", longBase64, "[base64, 300 bytes: not shown]"},
		{"unpadded base64 goes", strings.TrimRight(longBase64, "="), "[base64, 300 bytes: not shown]"},
		{"long lowercase hex stays", strings.Repeat("0123456789abcdef", 20), strings.Repeat("0123456789abcdef", 20)},
		{"long filler stays", strings.Repeat("x", 1000), strings.Repeat("x", 1000)},
		{"a data URI goes", "data:application/gzip;base64,H4sIAAAAAAAA", "[data URI, application/gzip, 9 bytes: not shown]"},
		{"a data URI that is not base64 stays", "data:text/plain,hello", "data:text/plain,hello"},
		{"a blob", map[string]any{"uri": "file:///x", "mimeType": "application/zip", "blob": "UEsDBA=="}, "[resource file:///x, application/zip, 4 bytes: not shown]"},
		{"audio", map[string]any{"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="}, "[audio, audio/wav, 4 bytes: not shown]"},
		{"nested in a list", []any{map[string]any{"n": json.Number("1"), "img": map[string]any{"type": "image", "data": "AAAA"}}}, []any{map[string]any{"n": json.Number("1"), "img": "[image, 3 bytes: not shown]"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, scrubBinary(tt.in)); diff != "" {
				t.Errorf("scrubBinary (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWrapsContent pins when structured content only wraps the content.
func TestWrapsContent(t *testing.T) {
	t.Parallel()
	text := []mcp.Content{&mcp.TextContent{Text: "alpha"}}
	tests := []struct {
		name    string
		v       any
		content []mcp.Content
		want    bool
	}{
		{"the same text", map[string]any{"content": "alpha"}, text, true},
		{"other text", map[string]any{"content": "beta"}, text, false},
		{"two fields", map[string]any{"content": "alpha", "n": json.Number("1")}, text, false},
		{"a field that names its text", map[string]any{"greeting": "alpha"}, text, false},
		{"content blocks", map[string]any{"content": []any{map[string]any{"type": "text", "text": "alpha"}}}, text, true},
		{"a list of data", map[string]any{"items": []any{map[string]any{"type": "host", "name": "a"}}}, text, false},
		{"no content", map[string]any{"content": ""}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wrapsContent(tt.v, tt.content); got != tt.want {
				t.Errorf("wrapsContent = %t, want %t", got, tt.want)
			}
		})
	}
}
