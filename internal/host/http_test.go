package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/record"
)

// Streamable HTTP servers: a go-sdk server behind mcp.NewStreamableHTTPHandler
// on loopback, with a handler in front that records every HTTP request as
// the server received it and can refuse, stall or answer some itself.

// httpTestHeader is the header a server configured with a header requires.
const httpTestHeader = "X-Hosteval-Test"

type httpServerConfig struct {
	// legacyOnly serves sessions (Mcp-Session-Id), so the server speaks
	// 2025-11-25 and older only: the go-sdk serves 2026-07-28 statelessly.
	// Only such a server can send a request of its own (elicitation/create).
	legacyOnly bool
	// jsonResponse answers with application/json instead of an event stream.
	jsonResponse bool
	// silentDiscover never answers server/discover, as some old servers do.
	silentDiscover bool
	// header, if set, is the value every request must carry in
	// httpTestHeader; a request without it gets 401.
	header string
	// getStatus, if set, answers every GET (the standalone stream) with it.
	getStatus int
}

// httpRequest is one HTTP request as the server received it.
type httpRequest struct {
	HTTPMethod string
	Method     string // JSON-RPC method, "" for a response or no body
	Tool       string // params.name of a tools/call
	Header     string // httpTestHeader
	MCPMethod  string // the Mcp-Method header
	Protocol   string // the Mcp-Protocol-Version header
	Meta       map[string]any
	Refused    bool // answered 401 for a missing header
}

type httpServer struct {
	url string
	srv *httptest.Server
	// refuseWith, when not 0, is the HTTP status every request now gets.
	refuseWith atomic.Int64

	mu       sync.Mutex
	requests []httpRequest
	// cancelled receives the ms of a slow call whose handler saw its
	// context end before it finished.
	cancelled chan int
	// started receives the ms of each slow call as its handler starts:
	// the server has the call.
	started chan int
	// aborted receives the ms of a slow call whose HTTP request the
	// client gave up before the server answered it.
	aborted chan int
	// cancelNotes receives each notifications/cancelled the server got.
	cancelNotes chan struct{}
}

func (hs *httpServer) add(r httpRequest) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.requests = append(hs.requests, r)
}

// seen returns the requests received so far that match keep.
func (hs *httpServer) seen(keep func(httpRequest) bool) []httpRequest {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	var out []httpRequest
	for _, r := range hs.requests {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func (hs *httpServer) calls(tool string) []httpRequest {
	return hs.seen(func(r httpRequest) bool { return r.Method == "tools/call" && r.Tool == tool })
}

type lookupIn struct {
	Key string `json:"key"`
}

type lookupOut struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type askOut struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

type slowIn struct {
	MS int `json:"ms"`
}

type failIn struct {
	Code int64 `json:"code"`
}

type noArgs struct{}

// gatedTool is answered by the handler in front of the server, with HTTP 403
// and a JSON-RPC error in the body, the way an API gateway refuses a call.
const gatedTool = "gated"

func newHTTPServer(t *testing.T, cfg httpServerConfig) *httpServer {
	t.Helper()
	hs := &httpServer{cancelled: make(chan int, 8), started: make(chan int, 8), aborted: make(chan int, 8), cancelNotes: make(chan struct{}, 8)}
	done := make(chan struct{})
	s := mcp.NewServer(&mcp.Implementation{Name: "httptest", Version: "1"}, nil)
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	mcp.AddTool(s, &mcp.Tool{Name: "lookup", Description: "Look a key up.", Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, in lookupIn) (*mcp.CallToolResult, lookupOut, error) {
			return nil, lookupOut{Key: in.Key, Value: "value of " + in.Key}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Ask the person for a colour.", Annotations: readOnly},
		func(_ context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, askOut, error) {
			// Under 2025-11-25 the SDK turns these input requests into an
			// elicitation/create request inside the call, and calls again.
			r, _ := req.Params.InputResponses["colour"].(*mcp.ElicitResult)
			if r == nil {
				return &mcp.CallToolResult{RequestState: "asked-once", InputRequests: mcp.InputRequestMap{
					"colour": &mcp.ElicitParams{Message: "Which colour?", RequestedSchema: map[string]any{
						"type": "object",
						"properties": map[string]any{
							"color": map[string]any{"type": "string", "enum": []any{"red", "blue"}},
							"size":  map[string]any{"type": "integer", "default": 3},
						},
					}},
				}}, askOut{}, nil
			}
			return nil, askOut{Action: r.Action, Content: r.Content}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Take ms milliseconds.", Annotations: readOnly},
		func(ctx context.Context, _ *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, lookupOut, error) {
			select {
			case hs.started <- in.MS:
			default:
			}
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
				return nil, lookupOut{Value: "slept"}, nil
			case <-ctx.Done():
				select {
				case hs.cancelled <- in.MS:
				default:
				}
				return nil, lookupOut{}, ctx.Err()
			case <-done:
				return nil, lookupOut{}, nil
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Answer with a JSON-RPC error.", Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, in failIn) (*mcp.CallToolResult, lookupOut, error) {
			return nil, lookupOut{}, &jsonrpc.Error{Code: in.Code, Message: "forbidden: you have no access to this organization"}
		})
	mcp.AddTool(s, &mcp.Tool{Name: gatedTool, Description: "Refused at the gateway.", Annotations: readOnly},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, lookupOut, error) {
			return nil, lookupOut{Value: "not refused"}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "Change something (not read-only)."},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, lookupOut, error) {
			return nil, lookupOut{Value: "written"}, nil
		})

	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: !cfg.legacyOnly, JSONResponse: cfg.jsonResponse})
	hs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string         `json:"name"`
				Meta      map[string]any `json:"_meta"`
				Arguments slowIn         `json:"arguments"`
			} `json:"params"`
		}
		json.Unmarshal(body, &msg)
		rec := httpRequest{
			HTTPMethod: r.Method, Method: msg.Method, Header: r.Header.Get(httpTestHeader),
			MCPMethod: r.Header.Get("Mcp-Method"), Protocol: r.Header.Get("Mcp-Protocol-Version"), Meta: msg.Params.Meta,
		}
		if msg.Method == "tools/call" {
			rec.Tool = msg.Params.Name
		}
		if cfg.header != "" && rec.Header != cfg.header {
			rec.Refused = true
			hs.add(rec)
			http.Error(w, "missing or wrong "+httpTestHeader, http.StatusUnauthorized)
			return
		}
		if status := hs.refuseWith.Load(); status != 0 {
			rec.Refused = true
			hs.add(rec)
			http.Error(w, "refused", int(status))
			return
		}
		hs.add(rec)
		if msg.Method == "notifications/cancelled" {
			select {
			case hs.cancelNotes <- struct{}{}:
			default:
			}
		}
		switch {
		case cfg.getStatus != 0 && r.Method == http.MethodGet:
			http.Error(w, "no stream", cfg.getStatus)
			return
		case cfg.silentDiscover && msg.Method == "server/discover":
			select {
			case <-r.Context().Done():
			case <-done:
			}
			return
		case rec.Tool == gatedTool:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32003,"message":"refused by the gateway"}}`, msg.ID)
			return
		}
		if rec.Method != "tools/call" {
			mcpHandler.ServeHTTP(w, r)
			return
		}
		// The request's context ends when the handler returns; ending
		// before means the client went away with the call unanswered.
		served, watched := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case <-r.Context().Done():
				select {
				case <-served:
					return
				default:
				}
				select {
				case hs.aborted <- msg.Params.Arguments.MS:
				default:
				}
			case <-served:
			}
		}()
		mcpHandler.ServeHTTP(w, r)
		close(served)
		<-watched
	}))
	hs.url = hs.srv.URL + "/mcp"
	// Registered before any host's Close: cleanups run last first, so hosts
	// end their sessions while the server still answers.
	t.Cleanup(func() {
		close(done)
		hs.srv.Close()
	})
	return hs
}

func httpSpec(name, url string) ServerSpec {
	return ServerSpec{Name: name, URL: url}
}

func TestHTTPCallsBehaveAsOverStdio(t *testing.T) {
	t.Parallel()
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResponse), func(t *testing.T) {
			hs := newHTTPServer(t, httpServerConfig{jsonResponse: jsonResponse})
			h := startHost(t, Options{Servers: []ServerSpec{httpSpec("web", hs.url)}})

			if s := h.Servers()[0]; s.Protocol != Revision20260728 || s.Tools != 6 || s.ServerName != "httptest" {
				t.Errorf("server = %+v, want 2026-07-28, 6 tools, httptest", s)
			}
			var names []string
			for _, tool := range h.Tools() {
				names = append(names, fmt.Sprintf("%s auto=%v", tool.Name, tool.AutoRun))
			}
			slices.Sort(names)
			want := []string{"web__ask auto=true", "web__fail auto=true", "web__gated auto=true", "web__lookup auto=true", "web__slow auto=true", "web__write auto=false"}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("tool table (-want +got):\n%s", diff)
			}

			tests := []struct {
				name, tool, args string
				wantOutcome      string
				wantText         string
				wantSent         bool
			}{
				{"read-only lookup", "web__lookup", `{"key": "k1"}`, record.OutcomeOK, `{"key":"k1","value":"value of k1"}`, true},
				{"unknown tool", "web__nothing", `{}`, record.OutcomeUnknownTool, `error: there is no tool named "web__nothing". Use only the tools you were given.`, false},
				{"arguments not an object", "web__lookup", `["k1"]`, record.OutcomeBadArguments, "error: the arguments must be a JSON object, not an array.", false},
				{"not approved", "web__write", `{}`, record.OutcomeDenied, "error: the user did not approve running web__write, so nothing was done. Don't retry unless they ask for it.", false},
			}
			for _, tt := range tests {
				before := len(hs.seen(func(r httpRequest) bool { return r.Method == "tools/call" }))
				text, ev := call(t, h, tt.tool, tt.args)
				if ev.Outcome != tt.wantOutcome || text != tt.wantText {
					t.Errorf("%s: outcome %s, text %q; want %s, %q", tt.name, ev.Outcome, text, tt.wantOutcome, tt.wantText)
				}
				sent := len(hs.seen(func(r httpRequest) bool { return r.Method == "tools/call" })) - before
				if want := map[bool]int{true: 1, false: 0}[tt.wantSent]; sent != want {
					t.Errorf("%s: the server got %d tools/call requests, want %d", tt.name, sent, want)
				}
				if tt.wantSent && (ev.Protocol != Revision20260728 || ev.Rounds != 1 || !ev.Structured) {
					t.Errorf("%s: protocol %q, rounds %d, structured %v; want 2026-07-28, 1, true", tt.name, ev.Protocol, ev.Rounds, ev.Structured)
				}
			}
		})
	}
}

func TestHTTPTurnCarriesCorrelationMeta(t *testing.T) {
	t.Parallel()
	var hostLog logLines
	hs := newHTTPServer(t, httpServerConfig{})
	h := startHost(t, Options{
		Servers: []ServerSpec{httpSpec("web", hs.url)}, Log: &hostLog,
		Elicitor: Canned{Answers: []CannedAnswer{{Server: "web", Key: "colour", Action: ActionAccept, Content: map[string]any{"color": "blue"}}}},
	})
	m := script(t, `
- call: "web__lookup {key: k1}"
- call: web__ask
- answer: It is blue.
`)
	res, err := h.NewConversation(m, "").Ask(context.Background(), "what colour?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != "It is blue." || len(res.Calls) != 2 {
		t.Fatalf("answer %q after %d calls, want It is blue. after 2", res.Answer, len(res.Calls))
	}
	// Each round of each call reaches the server with the host's session,
	// the turn's trace and the call's step, in _meta and as a traceparent,
	// next to the SDK's own per-request keys.
	var got []string
	for _, r := range hs.seen(func(r httpRequest) bool { return r.Method == "tools/call" }) {
		if r.Meta[record.MetaSessionID] != h.SessionID() || r.Meta[record.MetaTraceID] != res.TraceID {
			t.Errorf("%s: _meta session %v, trace %v; want %s, %s", r.Tool, r.Meta[record.MetaSessionID], r.Meta[record.MetaTraceID], h.SessionID(), res.TraceID)
		}
		step, _ := r.Meta[record.MetaStep].(float64)
		if want := fmt.Sprintf("00-%s-%016x-01", res.TraceID, int(step)); r.Meta[record.MetaTraceparent] != want {
			t.Errorf("%s: traceparent %v, want %s", r.Tool, r.Meta[record.MetaTraceparent], want)
		}
		if r.Meta["io.modelcontextprotocol/protocolVersion"] != Revision20260728 || r.Protocol != Revision20260728 || r.MCPMethod != "tools/call" {
			t.Errorf("%s: _meta protocolVersion %v, Mcp-Protocol-Version %q, Mcp-Method %q; want 2026-07-28 twice and tools/call",
				r.Tool, r.Meta["io.modelcontextprotocol/protocolVersion"], r.Protocol, r.MCPMethod)
		}
		got = append(got, fmt.Sprintf("%s step %v", r.Tool, step))
	}
	if want := []string{"lookup step 1", "ask step 2", "ask step 2"}; !slices.Equal(got, want) {
		t.Errorf("tools/call requests = %v, want %v", got, want)
	}
	events := hostLog.entries(map[string]any{"operation": record.OpToolCall, "trace_id": res.TraceID})
	if len(events) != 2 || events[1]["outcome"] != "ok" || events[1]["rounds"] != 2.0 || events[1]["asked_user"] != true {
		t.Errorf("host.tool_call events = %v, want 2, the second ok after 2 rounds, asked_user", events)
	}
}

func TestHTTPElicitation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		mode         Mode
		legacyOnly   bool
		jsonResponse bool
		answer       ElicitAnswer
		wantText     string
		wantRounds   int
	}{
		// The host fills the schema's defaults (size) the person left out.
		{"input_required", ModeAuto, false, false, ElicitAnswer{Action: ActionAccept, Content: map[string]any{"color": "red"}},
			`{"action":"accept","content":{"color":"red","size":3}}`, 2},
		{"input_required declined", ModeAuto, false, false, ElicitAnswer{Action: ActionDecline}, `{"action":"decline"}`, 2},
		// 2025-11-25: elicitation/create arrives on the call's event stream.
		{"elicitation/create", ModeLegacy, true, false, ElicitAnswer{Action: ActionAccept, Content: map[string]any{"color": "red"}},
			`{"action":"accept","content":{"color":"red","size":3}}`, 1},
		{"elicitation/create from a 2025-11-25 server", ModeAuto, true, false, ElicitAnswer{Action: ActionCancel},
			`{"action":"cancel"}`, 1},
		// A server that answers calls with application/json (and the
		// TypeScript SDK's servers, whatever they answer with) sends its
		// request on the session's standalone stream (GET), not the call's.
		{"elicitation/create on the standalone stream", ModeLegacy, true, true, ElicitAnswer{Action: ActionAccept, Content: map[string]any{"color": "blue"}},
			`{"action":"accept","content":{"color":"blue","size":3}}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := newHTTPServer(t, httpServerConfig{legacyOnly: tt.legacyOnly, jsonResponse: tt.jsonResponse})
			el := &recordingElicitor{answer: tt.answer}
			h := startHost(t, Options{Servers: []ServerSpec{httpSpec("web", hs.url)}, Protocol: tt.mode, Elicitor: el, Budgets: budget.Budgets{ToolTimeout: 3 * time.Second}})
			text, ev := call(t, h, "web__ask", `{}`)
			if text != tt.wantText || ev.Outcome != record.OutcomeOK || ev.Rounds != tt.wantRounds || !ev.AskedUser || ev.Elicitations != 1 {
				t.Errorf("text %s, outcome %s, rounds %d, asked %v, elicitations %d; want %s, ok, %d, true, 1",
					text, ev.Outcome, ev.Rounds, ev.AskedUser, ev.Elicitations, tt.wantText, tt.wantRounds)
			}
			if len(el.asked) != 1 {
				t.Fatalf("the person was asked %d times, want 1", len(el.asked))
			}
			if q := el.asked[0]; q.Server != "web" || q.Tool != "ask" || q.Message != "Which colour?" || q.Schema["properties"] == nil {
				t.Errorf("question = %+v, want web's ask asking Which colour? with a schema", q)
			}
			if got := len(hs.calls("ask")); got != tt.wantRounds {
				t.Errorf("the server got %d tools/call requests, want %d", got, tt.wantRounds)
			}
		})
	}
}

// A call given up (the host's timeout, or the caller's context) ends its
// HTTP request and sends notifications/cancelled. A go-sdk server stops the
// work only in a session (2025-11-25): a stateless server gets the
// notification as a request of its own, and does not stop a handler when
// its client goes away, so there the test can only see the request end.
// A 2025-11-25 session opens the optional standalone stream (a GET); a
// server whose GET fails keeps its session, and its calls still work.
func TestHTTPBrokenStandaloneStream(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusMethodNotAllowed, http.StatusNotFound, http.StatusInternalServerError, http.StatusBadGateway} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			hs := newHTTPServer(t, httpServerConfig{legacyOnly: true, getStatus: status})
			h := startHost(t, Options{Servers: []ServerSpec{httpSpec("web", hs.url)}, Protocol: ModeLegacy,
				Elicitor: Canned{Answers: []CannedAnswer{{Action: ActionAccept, Content: map[string]any{"color": "red"}}}}})
			if gets := hs.seen(func(r httpRequest) bool { return r.HTTPMethod == http.MethodGet }); len(gets) != 1 {
				t.Errorf("%d GET requests, want 1 (the standalone stream, asked for once)", len(gets))
			}
			for _, c := range [][2]string{{"web__lookup", `{"key": "k"}`}, {"web__ask", `{}`}} {
				if text, ev := call(t, h, c[0], c[1]); ev.Outcome != record.OutcomeOK {
					t.Errorf("%s: outcome %s (%s), want ok", c[0], ev.Outcome, text)
				}
			}
		})
	}
}

func TestHTTPTimeoutAndCancellation(t *testing.T) {
	t.Parallel()
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			t.Parallel()
			hs := newHTTPServer(t, httpServerConfig{legacyOnly: legacy})
			var wire logLines
			mode := ModeAuto
			if legacy {
				mode = ModeLegacy
			}
			// Only the call that must time out gets the tiny budget; the
			// round's time starts as its request goes out, so the host's
			// own time on a busy machine is not in it.
			h := startHost(t, Options{Servers: []ServerSpec{httpSpec("web", hs.url)}, Protocol: mode, Budgets: budget.Budgets{ToolTimeout: 300 * time.Millisecond}, Wire: &wire})
			// The waits below are guards against a hang, not budgets: each
			// ends with the signal it waits for.
			await := func(what string, c <-chan int, ms int) {
				t.Helper()
				for {
					select {
					case got := <-c:
						if got == ms {
							return
						}
					case <-time.After(time.Minute):
						t.Errorf("%s: the server did not see the call given up", what)
						return
					}
				}
			}

			text, ev := call(t, h, "web__slow", `{"ms": 120000}`)
			if want := "error: no answer within 0.3 seconds. The server may still finish the work: don't repeat a call that changes something."; text != want || ev.Outcome != record.OutcomeTimeout {
				t.Errorf("timeout: outcome %s, text %q; want timeout, %q", ev.Outcome, text, want)
			}
			// Not a timing test: the host stopped waiting well before the
			// server's 120 s, whatever the load.
			if ev.MS < 300 || ev.MS > 60000 {
				t.Errorf("the host waited %.0f ms, want 300 and not the server's 120000", ev.MS)
			}
			// The host tells the server. Whether the server's handler
			// stops depends on whether the server had the call when the
			// notice came (it ignores one for a call it does not know),
			// which only the cancellation below waits for.
			wire.waitFor(t, map[string]any{"stream": "http", "dir": "->", "method": "notifications/cancelled"}, time.Minute)
			select {
			case <-hs.cancelNotes:
			case <-time.After(time.Minute):
				t.Errorf("timeout: the server got no notifications/cancelled")
			}

			// The caller gives the call up once the server has it.
			h.setToolTimeout(time.Minute)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type answer struct {
				text string
				ev   record.Call
			}
			answered := make(chan answer, 1)
			go func() {
				text, ev := h.Call(ctx, CallRequest{Name: "web__slow", Arguments: `{"ms": 120001}`, TraceID: NewID(), Step: 2})
				answered <- answer{text, ev}
			}()
			for ms := 0; ms != 120001; {
				select {
				case ms = <-hs.started:
				case <-time.After(time.Minute):
					t.Fatal("the server never started the call to cancel")
				}
			}
			cancel()
			a := <-answered
			if want := "error: the call was cancelled before the server answered."; a.text != want || a.ev.Outcome != record.OutcomeError {
				t.Errorf("cancelled: outcome %s, text %q; want error, %q", a.ev.Outcome, a.text, want)
			}
			// The server had the call: a 2025-11-25 session's handler
			// stops at the notice; a stateless server sees its request
			// end unanswered.
			if legacy {
				await("cancel", hs.cancelled, 120001)
			} else {
				await("cancel", hs.aborted, 120001)
			}

			if text, ev := call(t, h, "web__lookup", `{"key": "after"}`); ev.Outcome != record.OutcomeOK {
				t.Errorf("the next call: outcome %s (%s), want ok", ev.Outcome, text)
			}
		})
	}
}

// The go-sdk reads JSON-RPC codes -32003 and -32004 as its own "connection
// closed", and a host that let it would call a live HTTP server dead. The
// httpTap guards the codes in every body, as codeGuard does for stdio.
func TestHTTPProtocolErrorKeepsItsCode(t *testing.T) {
	t.Parallel()
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResponse), func(t *testing.T) {
			hs := newHTTPServer(t, httpServerConfig{jsonResponse: jsonResponse})
			var wire logLines
			h := startHost(t, Options{Servers: []ServerSpec{httpSpec("web", hs.url)}, Wire: &wire})
			tests := []struct {
				tool, args string
				wantCode   int
				wantText   string
			}{
				{"web__fail", `{"code": -32003}`, -32003, "error: forbidden: you have no access to this organization"},
				{"web__fail", `{"code": -32004}`, -32004, "error: forbidden: you have no access to this organization"},
				{"web__fail", `{"code": -32000}`, -32000, "error: forbidden: you have no access to this organization"},
				// HTTP 403 with the error in a JSON body.
				{"web__gated", `{}`, -32003, "error: refused by the gateway"},
			}
			for _, tt := range tests {
				text, ev := call(t, h, tt.tool, tt.args)
				if ev.Outcome != record.OutcomeError || code(ev) != fmt.Sprint(tt.wantCode) || text != tt.wantText {
					t.Errorf("%s %s: outcome %s, code %s, text %q; want error, %d, %q", tt.tool, tt.args, ev.Outcome, code(ev), text, tt.wantCode, tt.wantText)
				}
				if _, ev := call(t, h, "web__lookup", `{"key": "still"}`); ev.Outcome != record.OutcomeOK {
					t.Errorf("after %s %s: lookup outcome %s, want ok: the server is alive", tt.tool, tt.args, ev.Outcome)
				}
			}
			// The wire trace keeps what the server sent, not the guard's shift.
			var codes []float64
			for _, e := range wire.entries(map[string]any{"stream": "http", "dir": "<-", "kind": "error"}) {
				msg, _ := e["message"].(map[string]any)
				errObj, _ := msg["error"].(map[string]any)
				codes = append(codes, errObj["code"].(float64))
			}
			if want := []float64{-32003, -32004, -32000, -32003}; !slices.Equal(codes, want) {
				t.Errorf("error codes in the wire trace = %v, want %v", codes, want)
			}
		})
	}
}

func TestHTTPProtocolModes(t *testing.T) {
	t.Parallel()
	servers := map[string]httpServerConfig{
		"modern": {},
		"old":    {legacyOnly: true},
		"silent": {silentDiscover: true},
	}
	tests := []struct {
		server string
		mode   Mode
		want   record.Server // Protocol, Offered, Restarted, VersionFailure
		errHas string
	}{
		{"modern", ModeAuto, record.Server{Protocol: "2026-07-28", Offered: "2026-07-28", EraReason: "answered discover"}, ""},
		{"modern", ModeLegacy, record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", EraReason: "legacy mode"}, ""},
		{"modern", ModePinned, record.Server{Protocol: "2026-07-28", Offered: "2026-07-28", EraReason: "answered discover"}, ""},
		{"old", ModeAuto, record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", EraReason: "answered discover"}, ""},
		{"old", ModeLegacy, record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", EraReason: "legacy mode"}, ""},
		{"old", ModePinned, record.Server{Offered: "2025-11-25", VersionFailure: true, EraReason: "answered discover"},
			"server web does not speak 2026-07-28 (its answer to server/discover offers 2025-11-25, 2025-06-18"},
		// Over HTTP there is no ping: the discover budget decides.
		{"silent", ModeAuto, record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", Restarted: true, EraReason: "no answer to discover within 2s"}, ""},
		{"silent", ModePinned, record.Server{VersionFailure: true, EraReason: "no answer to discover within 2s"},
			"server web did not answer server/discover (no answer to discover within 2s; pinned to 2026-07-28)"},
	}
	for _, tt := range tests {
		t.Run(tt.server+"/"+string(tt.mode), func(t *testing.T) {
			t.Parallel()
			hs := newHTTPServer(t, servers[tt.server])
			h, err := Start(context.Background(), Options{Servers: []ServerSpec{httpSpec("web", hs.url)}, Protocol: tt.mode,
				Budgets: budget.Budgets{Connect: budget.Connect{DiscoverTimeout: 2 * time.Second}}})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if !checkConnection(t, h, tt.want, tt.errHas) {
				return
			}
			if text, ev := call(t, h, "web__lookup", `{"key": "k"}`); ev.Outcome != record.OutcomeOK || ev.Protocol != tt.want.Protocol {
				t.Errorf("lookup: outcome %s (%s) over %s, want ok over %s", ev.Outcome, text, ev.Protocol, tt.want.Protocol)
			}
			// Every POST after the handshake names the negotiated revision
			// in Mcp-Protocol-Version: for a 2025-11-25 session the SDK takes
			// it from the handshake, which is why the host must not wrap
			// the HTTP connection.
			for _, r := range hs.seen(func(r httpRequest) bool { return r.Method == "tools/call" || r.Method == "tools/list" }) {
				if r.Protocol != tt.want.Protocol {
					t.Errorf("%s went with Mcp-Protocol-Version %q, want %q", r.Method, r.Protocol, tt.want.Protocol)
				}
			}
			if discover := hs.seen(func(r httpRequest) bool { return r.Method == "server/discover" }); tt.mode == ModeLegacy && len(discover) != 0 {
				t.Errorf("legacy mode sent %d server/discover requests, want none", len(discover))
			}
		})
	}
}

func TestHTTPHeadersOnEveryRequest(t *testing.T) {
	t.Parallel()
	const secret = "s3cret"
	for _, mode := range []Mode{ModeAuto, ModeLegacy} {
		t.Run(string(mode), func(t *testing.T) {
			hs := newHTTPServer(t, httpServerConfig{header: secret, legacyOnly: mode == ModeLegacy})
			spec := httpSpec("web", hs.url)
			spec.Headers = map[string]string{httpTestHeader: secret, "Accept": "text/html"}
			h := startHost(t, Options{Servers: []ServerSpec{spec}, Protocol: mode,
				Elicitor: Canned{Answers: []CannedAnswer{{Action: ActionAccept, Content: map[string]any{"color": "red"}}}}})
			if _, ev := call(t, h, "web__lookup", `{"key": "k"}`); ev.Outcome != record.OutcomeOK {
				t.Errorf("lookup outcome %s, want ok", ev.Outcome)
			}
			if _, ev := call(t, h, "web__ask", `{}`); ev.Outcome != record.OutcomeOK {
				t.Errorf("ask outcome %s, want ok", ev.Outcome)
			}
			h.Close() // a 2025-11-25 session ends with a DELETE
			all := hs.seen(func(httpRequest) bool { return true })
			var methods []string
			for _, r := range all {
				if r.Header != secret || r.Refused {
					t.Errorf("%s %s went without the header (%q)", r.HTTPMethod, r.Method, r.Header)
				}
				methods = append(methods, r.HTTPMethod)
			}
			if mode == ModeLegacy && !slices.Contains(methods, http.MethodDelete) {
				t.Errorf("HTTP methods seen = %v, want a DELETE at close", methods)
			}
		})
	}

	// A server that refuses the host at the HTTP level (401, no JSON-RPC
	// error in the body) is not a server that refused a revision, nor one
	// that stayed silent: no version failure, no restart as legacy.
	for _, mode := range []Mode{ModeAuto, ModePinned} {
		t.Run("missing/"+string(mode), func(t *testing.T) {
			hs := newHTTPServer(t, httpServerConfig{header: secret})
			h, err := Start(context.Background(), Options{Servers: []ServerSpec{httpSpec("web", hs.url)}, Protocol: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			s := h.Servers()[0]
			// Pinned mode stops at discover's own failure (the SDK adds
			// "rejected by transport" to it); auto mode tries initialize.
			if !strings.HasPrefix(s.Error, "connect web: ") || !strings.Contains(s.Error, "Unauthorized") || s.Tools != 0 || s.VersionFailure || s.Restarted {
				t.Errorf("server = %+v, want a connect error ending Unauthorized, no tools, no version failure, no restart", s)
			}
			var got []string
			for _, r := range hs.seen(func(httpRequest) bool { return true }) {
				got = append(got, r.Method)
			}
			want := []string{"server/discover", "initialize"}
			if mode == ModePinned {
				want = want[:1] // pinned never falls back to initialize
			}
			if !slices.Equal(got, want) {
				t.Errorf("requests = %v, want %v", got, want)
			}
			if _, ev := call(t, h, "web__lookup", `{}`); ev.Outcome != record.OutcomeUnknownTool {
				t.Errorf("lookup outcome %s, want unknown_tool", ev.Outcome)
			}
		})
	}
}

func TestHTTPWireTrace(t *testing.T) {
	t.Parallel()
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResponse), func(t *testing.T) {
			hs := newHTTPServer(t, httpServerConfig{jsonResponse: jsonResponse})
			var wire logLines
			h := startHost(t, Options{Servers: []ServerSpec{httpSpec("web", hs.url)}, Wire: &wire})
			call(t, h, "web__lookup", `{"key": "traced"}`)
			var got []string
			for _, e := range wire.entries(map[string]any{"server": "web", "stream": "http"}) {
				if m := fmt.Sprint(e["method"]); strings.HasPrefix(m, "subscriptions/") || strings.HasPrefix(m, "notifications/subscriptions/") {
					continue // the subscriptions/listen stream runs beside the calls
				}
				got = append(got, fmt.Sprintf("%s %s %s", e["dir"], e["kind"], e["method"]))
			}
			// The server offers tools.listChanged: the host listens for it.
			wire.waitFor(t, map[string]any{"server": "web", "dir": "->", "method": "subscriptions/listen"}, 10*time.Second)
			want := []string{
				"-> request server/discover", "<- result server/discover",
				"-> request tools/list", "<- result tools/list",
				"-> request tools/call", "<- result tools/call",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("wire trace (-want +got):\n%s", diff)
			}
			res := wire.entries(map[string]any{"dir": "<-", "method": "tools/call"})
			if len(res) != 1 || !strings.Contains(fmt.Sprint(res[0]["message"]), "value of traced") {
				t.Errorf("tools/call result in the trace = %v, want the lookup's value", res)
			}
		})
	}
}

// A failure below JSON-RPC is told as what it is, never recorded as the
// server's error code. After a rejected request (unreachable, 503) the
// session goes on; after any other HTTP error the SDK gives the session up,
// and the host stops sending.
func TestHTTPFailureBelowJSONRPC(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// refuse sets the failure up; recovered says whether the server
		// answers again afterwards.
		refuse    func(*httpServer)
		recovered bool
		wantText  []string // the two failed calls' texts start with these
		wantSent  int      // tools/call requests that reached the handler
	}{
		{"unreachable", func(hs *httpServer) { hs.srv.CloseClientConnections(); hs.srv.Close() }, false,
			[]string{"error: the request to the server web failed (", "error: the request to the server web failed ("}, 0},
		{"503", func(hs *httpServer) { hs.refuseWith.Store(http.StatusServiceUnavailable) }, true,
			[]string{"error: the request to the server web failed (", "error: the request to the server web failed ("}, 2},
		{"401", func(hs *httpServer) { hs.refuseWith.Store(http.StatusUnauthorized) }, true,
			[]string{"error: the connection to the server web failed (", "error: the server web has stopped working (its connection failed)"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := newHTTPServer(t, httpServerConfig{})
			h := startHost(t, Options{Servers: []ServerSpec{httpSpec("web", hs.url)}, Budgets: budget.Budgets{ToolTimeout: 2 * time.Second}})
			tt.refuse(hs)
			for i, want := range tt.wantText {
				text, ev := call(t, h, "web__lookup", `{"key": "k"}`)
				if ev.Outcome != record.OutcomeError || ev.ErrorCode != nil || !strings.HasPrefix(text, want) {
					t.Errorf("call %d: outcome %s, code %s, text %q; want error, no code, starting %q", i+1, ev.Outcome, code(ev), text, want)
				}
			}
			if got := len(hs.calls("lookup")); got != tt.wantSent {
				t.Errorf("%d tools/call requests reached the server, want %d", got, tt.wantSent)
			}
			if !tt.recovered {
				return
			}
			hs.refuseWith.Store(0)
			_, ev := call(t, h, "web__lookup", `{"key": "k"}`)
			if dead := tt.wantText[1] != tt.wantText[0]; (ev.Outcome == record.OutcomeOK) == dead {
				t.Errorf("after the server recovered: outcome %s, want ok only when the session was not given up", ev.Outcome)
			}
		})
	}
}

func TestHTTPProtocolHeadersCannotBeConfigured(t *testing.T) {
	t.Parallel()
	hs := newHTTPServer(t, httpServerConfig{})
	spec := httpSpec("web", hs.url)
	spec.Headers = map[string]string{"mcp-protocol-version": "1999-01-01"}
	h, err := Start(context.Background(), Options{Servers: []ServerSpec{spec}})
	if err == nil {
		h.Close()
		t.Fatal("Start succeeded, want a configuration error")
	}
	want := "configuration error: server web: header mcp-protocol-version: Mcp-* headers belong to the protocol and are set by the transport"
	if err.Error() != want || !errors.Is(err, ErrConfig) {
		t.Errorf("error = %q (ErrConfig: %t), want %q", err, errors.Is(err, ErrConfig), want)
	}
	if n := len(hs.seen(func(httpRequest) bool { return true })); n != 0 {
		t.Errorf("the server got %d requests, want none", n)
	}
}
