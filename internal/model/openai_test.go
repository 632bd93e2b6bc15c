package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hosteval/hosteval/internal/record"
)

// reply is one answer of chatServer.
type reply struct {
	status int               // 0 means 200
	header map[string]string // extra response headers
	body   string            // JSON; empty for 200 means okText
	hang   bool              // answer nothing until the client gives up
	drop   bool              // close the connection without an answer
}

// chatServer is an httptest server that speaks Chat Completions: it records
// every request and answers with replies in order, repeating the last one.
type chatServer struct {
	*httptest.Server
	replies []reply

	mu       sync.Mutex
	bodies   [][]byte
	headers  []http.Header
	arrivals []time.Time
}

func newChatServer(t *testing.T, replies ...reply) *chatServer {
	t.Helper()
	s := &chatServer{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *chatServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, body)
	s.headers = append(s.headers, r.Header.Clone())
	s.arrivals = append(s.arrivals, time.Now())
	s.mu.Unlock()

	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"wrong endpoint `+r.Method+" "+r.URL.Path+`"}}`, http.StatusNotFound)
		return
	}
	rep := okReply(okText)
	if len(s.replies) > 0 {
		rep = s.replies[min(n, len(s.replies)-1)]
	}
	switch {
	case rep.hang:
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		return
	case rep.drop:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.status != 0 {
		w.WriteHeader(rep.status)
	}
	io.WriteString(w, rep.body)
}

func (s *chatServer) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func (s *chatServer) header(i int) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.headers[i]
}

func (s *chatServer) gap(i, j int) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.arrivals[j].Sub(s.arrivals[i])
}

func (s *chatServer) body(i int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[i]
}

// completion is a Chat Completions answer with one choice.
func completion(message, usage string) string {
	u := ""
	if usage != "" {
		u = `,"usage":` + usage
	}
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1767225600,"model":"gpt-oss-120b",` +
		`"choices":[{"index":0,"finish_reason":"stop","message":` + message + `}]` + u + `}`
}

const okText = `{"role":"assistant","content":"It belongs to the platform team."}`

func okReply(message string) reply {
	return reply{body: completion(message, `{"prompt_tokens":412,"completion_tokens":37,"total_tokens":449}`)}
}

func ptr[T any](v T) *T { return &v }

// ignoreLatency leaves out the figures of a live answer a test cannot know
// (its time, its waits), and the attempts, which only a live answer has
// (TestOpenAIRetryFigures holds them).
var ignoreLatency = cmpopts.IgnoreFields(Response{}, "Latency", "Waited", "Attempts")

func newTestOpenAI(t *testing.T, srv *chatServer, cfg OpenAIConfig) *OpenAI {
	t.Helper()
	cfg.BaseURL = srv.URL + "/v1"
	if cfg.Model == "" {
		cfg.Model = "gpt-oss-120b"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	m, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// toolsJSON is rendered the way no JSON encoder would: indented, keys out
// of order, HTML characters and non-ASCII unescaped. The endpoint must
// receive exactly these bytes.
const toolsJSON = `[
  {"function": {"name": "cmdb__get_asset", "description": "[cmdb] Get one asset by hostname. Use it when 1 < n & n > 0 — e.g. jump-prod-02.",
    "parameters": {"type": "object", "properties": {"hostname": {"type": "string"}}, "required": ["hostname"]}}, "type": "function"},
  {"type":"function","function":{"name":"tickets__open_ticket","description":"","parameters":{"type":"object"}}}
]`

// conversation has every kind of message the host sends.
var conversation = []Message{
	{Role: RoleSystem, Content: "You are the help desk's assistant."},
	{Role: RoleUser, Content: "Who owns jump-prod-02? Open a ticket."},
	{Role: RoleAssistant, ToolCalls: []ToolCall{
		{ID: "call_a", Name: "cmdb__get_asset", Arguments: `{"hostname": "jump-prod-02"}`},
		{ID: "call_b", Name: "cmdb__get_asset", Arguments: `{"hostname": `},
	}},
	{Role: RoleTool, ToolCallID: "call_a", Name: "cmdb__get_asset", Content: `{"hostname":"jump-prod-02","owner":"platform"}`},
	{Role: RoleTool, ToolCallID: "call_b", Name: "cmdb__get_asset", Content: "error: the arguments were not valid JSON; send a JSON object"},
	{Role: RoleAssistant, Content: "Checking.", ToolCalls: []ToolCall{{ID: "call_c", Name: "tickets__open_ticket", Arguments: `{}`}}},
	{Role: RoleTool, ToolCallID: "call_c", Content: `{"ticket_id":"INC-7"}`},
	{Role: RoleAssistant, Content: "Opened INC-7."},
	{Role: RoleUser, Content: "Thanks. Anything else?"},
}

func TestOpenAIRequest(t *testing.T) {
	srv := newChatServer(t)
	m := newTestOpenAI(t, srv, OpenAIConfig{
		APIKey:          "sk-test",
		Temperature:     ptr(0.2),
		MaxTokens:       256,
		ReasoningEffort: "low",
		Headers:         map[string]string{"X-Gateway": "blue"},
	})
	got, err := m.Next(context.Background(), Request{Messages: conversation, ToolsJSON: json.RawMessage(toolsJSON)})
	if err != nil {
		t.Fatal(err)
	}
	want := Response{
		Text:         "It belongs to the platform team.",
		Usage:        &record.Usage{PromptTokens: 412, CompletionTokens: 37, TotalTokens: 449},
		FinishReason: "stop",
	}
	if got.Latency <= 0 {
		t.Errorf("Latency = %s, want the time the endpoint took", got.Latency)
	}
	if diff := cmp.Diff(want, got, ignoreLatency); diff != "" {
		t.Errorf("Response mismatch (-want +got):\n%s", diff)
	}
	if got, want := m.Name(), "openai:gpt-oss-120b"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}

	body := srv.body(0)
	// The tools bytes the host measured are the bytes the endpoint got.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, body)
	}
	if !bytes.Equal(fields["tools"], []byte(toolsJSON)) {
		t.Errorf("tools sent differ from Request.ToolsJSON:\n got %s\nwant %s", fields["tools"], toolsJSON)
	}
	if !bytes.Contains(body, []byte(`"tools":`+toolsJSON)) {
		t.Errorf("body does not hold the tools bytes verbatim:\n%s", body)
	}

	var sent struct {
		Model           string   `json:"model"`
		ToolChoice      string   `json:"tool_choice"`
		Temperature     *float64 `json:"temperature"`
		MaxTokens       int      `json:"max_tokens"`
		ReasoningEffort string   `json:"reasoning_effort"`
		Messages        []any    `json:"messages"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	if sent.Model != "gpt-oss-120b" || sent.ToolChoice != "auto" || sent.Temperature == nil || *sent.Temperature != 0.2 ||
		sent.MaxTokens != 256 || sent.ReasoningEffort != "low" {
		t.Errorf("request fields = %+v, want model gpt-oss-120b, tool_choice auto, temperature 0.2, max_tokens 256, reasoning_effort low", sent)
	}
	var wantMessages []any
	if err := json.Unmarshal([]byte(`[
		{"role":"system","content":"You are the help desk's assistant."},
		{"role":"user","content":"Who owns jump-prod-02? Open a ticket."},
		{"role":"assistant","tool_calls":[
			{"id":"call_a","type":"function","function":{"name":"cmdb__get_asset","arguments":"{\"hostname\": \"jump-prod-02\"}"}},
			{"id":"call_b","type":"function","function":{"name":"cmdb__get_asset","arguments":"{\"hostname\": "}}]},
		{"role":"tool","tool_call_id":"call_a","content":"{\"hostname\":\"jump-prod-02\",\"owner\":\"platform\"}"},
		{"role":"tool","tool_call_id":"call_b","content":"error: the arguments were not valid JSON; send a JSON object"},
		{"role":"assistant","content":"Checking.","tool_calls":[
			{"id":"call_c","type":"function","function":{"name":"tickets__open_ticket","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_c","content":"{\"ticket_id\":\"INC-7\"}"},
		{"role":"assistant","content":"Opened INC-7."},
		{"role":"user","content":"Thanks. Anything else?"}
	]`), &wantMessages); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantMessages, sent.Messages); diff != "" {
		t.Errorf("messages mismatch (-want +got):\n%s", diff)
	}

	h := srv.header(0)
	if got, want := h.Get("Authorization"), "Bearer sk-test"; got != want {
		t.Errorf("Authorization = %q, want %q", got, want)
	}
	if got, want := h.Get("X-Gateway"), "blue"; got != want {
		t.Errorf("X-Gateway = %q, want %q", got, want)
	}
}

func TestOpenAIRequestTools(t *testing.T) {
	tests := []struct {
		name      string
		req       Request
		wantTools string // "" means no tools and no tool_choice
	}{
		{name: "no tools", req: Request{}},
		{name: "empty tools array", req: Request{ToolsJSON: json.RawMessage(` [ ] `)}},
		{
			name: "rendered from Tools",
			req: Request{Tools: []Tool{
				{Name: "cmdb__get_asset", Description: "a < b", Parameters: json.RawMessage(`{"type":"object"}`)},
				{Name: "bare"},
			}},
			wantTools: `[{"type":"function","function":{"name":"cmdb__get_asset","description":"a < b","parameters":{"type":"object"}}},{"type":"function","function":{"name":"bare"}}]`,
		},
		{
			name:      "ToolsJSON wins over Tools",
			req:       Request{Tools: []Tool{{Name: "x"}}, ToolsJSON: json.RawMessage(`[{"type":"function","function":{"name":"y"}}]`)},
			wantTools: `[{"type":"function","function":{"name":"y"}}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newChatServer(t)
			m := newTestOpenAI(t, srv, OpenAIConfig{})
			tt.req.Messages = []Message{{Role: RoleUser, Content: "hi"}}
			if _, err := m.Next(context.Background(), tt.req); err != nil {
				t.Fatal(err)
			}
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(srv.body(0), &fields); err != nil {
				t.Fatal(err)
			}
			if got := string(fields["tools"]); got != tt.wantTools {
				t.Errorf("tools = %s, want %s", got, tt.wantTools)
			}
			_, hasChoice := fields["tool_choice"]
			if hasChoice != (tt.wantTools != "") {
				t.Errorf("tool_choice present = %v, want %v", hasChoice, tt.wantTools != "")
			}
			for _, absent := range []string{"temperature", "max_tokens", "reasoning_effort"} {
				if v, ok := fields[absent]; ok {
					t.Errorf("%s = %s, want it absent when not configured", absent, v)
				}
			}
			if h := srv.header(0).Get("Authorization"); h != "" {
				t.Errorf("Authorization = %q without an api_key, want none", h)
			}
		})
	}
}

func TestOpenAITemperatureZero(t *testing.T) {
	// A configured 0 is sent: it is the usual setting for a repeatable eval.
	srv := newChatServer(t)
	m := newTestOpenAI(t, srv, OpenAIConfig{Temperature: ptr(0.0)})
	if _, err := m.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(srv.body(0), &fields); err != nil {
		t.Fatal(err)
	}
	if got := string(fields["temperature"]); got != "0" {
		t.Errorf("temperature = %q, want 0", got)
	}
}

func TestOpenAIRequestToolsInvalid(t *testing.T) {
	srv := newChatServer(t)
	m := newTestOpenAI(t, srv, OpenAIConfig{})
	_, err := m.Next(context.Background(), Request{ToolsJSON: json.RawMessage(`{"not":"an array"}`)})
	if err == nil || !strings.Contains(err.Error(), "tools: not a JSON array") {
		t.Errorf("error = %v, want tools: not a JSON array", err)
	}
	_, err = m.Next(context.Background(), Request{Messages: []Message{{Role: "developer", Content: "x"}}})
	if err == nil || !strings.Contains(err.Error(), `messages[0]: unknown role "developer"`) {
		t.Errorf("error = %v, want messages[0]: unknown role", err)
	}
	if n := srv.requests(); n != 0 {
		t.Errorf("server saw %d requests, want 0", n)
	}
}

func TestOpenAIResponses(t *testing.T) {
	history := []Message{
		{Role: RoleUser, Content: "q"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "x1", Name: "a"}, {ID: "x2", Name: "b"}}},
		{Role: RoleTool, ToolCallID: "x1", Content: "{}"},
		{Role: RoleTool, ToolCallID: "x2", Content: "{}"},
	}
	tests := []struct {
		name  string
		reply string
		want  Response
	}{
		{
			name:  "one tool call",
			reply: completion(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_9f","type":"function","function":{"name":"cmdb__get_asset","arguments":"{\"hostname\":\"jump-prod-02\"}"}}]}`, `{"prompt_tokens":500,"completion_tokens":20,"total_tokens":520}`),
			want: Response{
				ToolCalls: []ToolCall{{ID: "call_9f", Name: "cmdb__get_asset", Arguments: `{"hostname":"jump-prod-02"}`}},
				Usage:     &record.Usage{PromptTokens: 500, CompletionTokens: 20, TotalTokens: 520},
			},
		},
		{
			name: "parallel tool calls with commentary",
			reply: completion(`{"role":"assistant","content":"Looking both up.","tool_calls":[`+
				`{"id":"c1","type":"function","function":{"name":"cmdb__get_asset","arguments":"{\"hostname\":\"a\"}"}},`+
				`{"id":"c2","type":"function","function":{"name":"cmdb__get_asset","arguments":"{\"hostname\":\"b\"}"}}]}`, ""),
			want: Response{
				Text: "Looking both up.",
				ToolCalls: []ToolCall{
					{ID: "c1", Name: "cmdb__get_asset", Arguments: `{"hostname":"a"}`},
					{ID: "c2", Name: "cmdb__get_asset", Arguments: `{"hostname":"b"}`},
				},
			},
		},
		{
			// gpt-oss leaks its harmony channel into the name; the host counts it unknown.
			name:  "garbled names and arguments",
			reply: completion(`{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_asset<|channel|>commentary","arguments":"{\"hostname\": "}},{"id":"c2","type":"function","function":{"name":"","arguments":""}}]}`, ""),
			want: Response{ToolCalls: []ToolCall{
				{ID: "c1", Name: "get_asset<|channel|>commentary", Arguments: `{"hostname": `},
				{ID: "c2", Name: "", Arguments: ""},
			}},
		},
		{
			// Continues after the two calls already in the conversation.
			name:  "missing ids and type",
			reply: completion(`{"role":"assistant","tool_calls":[{"function":{"name":"a","arguments":"{}"}},{"function":{"name":"b","arguments":"{}"}}]}`, ""),
			want: Response{ToolCalls: []ToolCall{
				{ID: "call_3", Name: "a", Arguments: "{}"},
				{ID: "call_4", Name: "b", Arguments: "{}"},
			}},
		},
		{
			name:  "custom tool call",
			reply: completion(`{"role":"assistant","tool_calls":[{"id":"c1","type":"custom","custom":{"name":"grep","input":"foo"}}]}`, ""),
			want:  Response{ToolCalls: []ToolCall{{ID: "c1", Name: "grep", Arguments: "foo"}}},
		},
		{
			name:  "refusal",
			reply: completion(`{"role":"assistant","content":null,"refusal":"I can't help with that."}`, ""),
			want:  Response{Text: "I can't help with that."},
		},
		{
			name:  "null usage",
			reply: completion(`{"role":"assistant","content":"ok"}`, "null"),
			want:  Response{Text: "ok"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newChatServer(t, reply{body: tt.reply})
			m := newTestOpenAI(t, srv, OpenAIConfig{})
			got, err := m.Next(context.Background(), Request{Messages: history})
			if err != nil {
				t.Fatal(err)
			}
			tt.want.FinishReason = "stop"
			if diff := cmp.Diff(tt.want, got, ignoreLatency); diff != "" {
				t.Errorf("Response mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenAIRetries(t *testing.T) {
	ok := okReply(okText)
	tests := []struct {
		name         string
		cfg          OpenAIConfig
		replies      []reply
		wantRequests int
		wantStatus   int    // 0: success
		wantMessage  string // of the EndpointError
	}{
		{
			name:         "429 with Retry-After 0, then success",
			replies:      []reply{{status: 429, header: map[string]string{"Retry-After": "0"}, body: `{"error":{"message":"slow down"}}`}, ok},
			wantRequests: 2,
		},
		{
			name:         "500 then success, backoff capped",
			cfg:          OpenAIConfig{MaxRetryDelay: 10 * time.Millisecond},
			replies:      []reply{{status: 500, body: `{"error":{"message":"engine crashed"}}`}, ok},
			wantRequests: 2,
		},
		{
			name:         "connection dropped, then success",
			cfg:          OpenAIConfig{MaxRetryDelay: 10 * time.Millisecond},
			replies:      []reply{{drop: true}, ok},
			wantRequests: 2,
		},
		{
			name:         "503 until the retries run out",
			cfg:          OpenAIConfig{MaxRetries: ptr(2), MaxRetryDelay: 10 * time.Millisecond},
			replies:      []reply{{status: 503, body: `{"error":{"message":"no capacity","type":"server_error"}}`}},
			wantRequests: 3,
			wantStatus:   503,
			wantMessage:  "openai:gpt-oss-120b: status 503 Service Unavailable: no capacity (3 attempts)",
		},
		{
			name:         "no retries",
			cfg:          OpenAIConfig{MaxRetries: ptr(0)},
			replies:      []reply{{status: 500, body: `{"error":{"message":"engine crashed"}}`}, ok},
			wantRequests: 1,
			wantStatus:   500,
			wantMessage:  "openai:gpt-oss-120b: status 500 Internal Server Error: engine crashed (1 attempt)",
		},
		{
			name:         "400 is not retried",
			replies:      []reply{{status: 400, body: `{"object":"error","message":"The model gpt-oss-12b does not exist.","type":"NotFoundError","code":404}`}, ok},
			wantRequests: 1,
			wantStatus:   400,
			wantMessage:  "openai:gpt-oss-120b: status 400 Bad Request: The model gpt-oss-12b does not exist. (1 attempt; not retried: check base_url and model)",
		},
		{
			// Retry-After is read: a wait longer than max_retry_delay ends
			// the retries at once, with the endpoint's answer, saying why.
			name:         "Retry-After beyond max_retry_delay",
			cfg:          OpenAIConfig{MaxRetryDelay: 50 * time.Millisecond},
			replies:      []reply{{status: 429, header: map[string]string{"Retry-After": "5"}, body: `{"error":"rate limited"}`}, ok},
			wantRequests: 1,
			wantStatus:   429,
			wantMessage:  "openai:gpt-oss-120b: status 429 Too Many Requests: rate limited (1 attempt; not retried: the endpoint asked to wait 5s (Retry-After), longer than the cap of 50ms (max_retry_delay))",
		},
		{
			name:         "Retry-After beyond the default cap",
			replies:      []reply{{status: 429, header: map[string]string{"Retry-After": "300"}, body: `{"error":"rate limited"}`}, ok},
			wantRequests: 1,
			wantStatus:   429,
			wantMessage:  "openai:gpt-oss-120b: status 429 Too Many Requests: rate limited (1 attempt; not retried: the endpoint asked to wait 5m0s (Retry-After), longer than the default cap of 2m0s (max_retry_delay sets it))",
		},
		{
			name:         "x-should-retry false",
			replies:      []reply{{status: 500, header: map[string]string{"X-Should-Retry": "false"}, body: `<html>bad gateway</html>`}, ok},
			wantRequests: 1,
			wantStatus:   500,
			wantMessage:  "openai:gpt-oss-120b: status 500 Internal Server Error: <html>bad gateway</html> (1 attempt)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newChatServer(t, tt.replies...)
			m := newTestOpenAI(t, srv, tt.cfg)
			req := Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}, ToolsJSON: json.RawMessage(toolsJSON)}
			got, err := m.Next(context.Background(), req)
			if n := srv.requests(); n != tt.wantRequests {
				t.Errorf("server saw %d requests, want %d", n, tt.wantRequests)
			}
			for i := 1; i < srv.requests(); i++ {
				if !bytes.Equal(srv.body(i), srv.body(0)) {
					t.Errorf("request %d body differs from the first:\n%s\n%s", i+1, srv.body(i), srv.body(0))
				}
			}
			if tt.wantStatus == 0 {
				if err != nil {
					t.Fatalf("Next: %v", err)
				}
				if got.Text != "It belongs to the platform team." {
					t.Errorf("Text = %q, want the answer", got.Text)
				}
				return
			}
			var ee *EndpointError
			if !errors.As(err, &ee) {
				t.Fatalf("error = %v (%T), want an *EndpointError", err, err)
			}
			if ee.StatusCode != tt.wantStatus || ee.Attempts != tt.wantRequests {
				t.Errorf("StatusCode, Attempts = %d, %d; want %d, %d", ee.StatusCode, ee.Attempts, tt.wantStatus, tt.wantRequests)
			}
			if err.Error() != tt.wantMessage {
				t.Errorf("error = %q, want %q", err, tt.wantMessage)
			}
		})
	}
}

func TestOpenAIRetryAfterIsHonoured(t *testing.T) {
	// Without Retry-After the first backoff is at most 0.5 s, so a gap of
	// 0.6 s or more between the attempts is the server's wait.
	srv := newChatServer(t, reply{status: 429, header: map[string]string{"Retry-After": "0.6"}, body: `{}`}, okReply(okText))
	m := newTestOpenAI(t, srv, OpenAIConfig{})
	if _, err := m.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if n := srv.requests(); n != 2 {
		t.Fatalf("server saw %d requests, want 2", n)
	}
	if gap := srv.gap(0, 1); gap < 600*time.Millisecond {
		t.Errorf("second attempt came %s after the first, want at least the 600ms Retry-After asked", gap)
	}
}

func TestOpenAIUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	m, err := NewOpenAI(OpenAIConfig{BaseURL: url, Model: "m", MaxRetries: ptr(1), MaxRetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
	var ee *EndpointError
	if !errors.As(err, &ee) {
		t.Fatalf("error = %v (%T), want an *EndpointError", err, err)
	}
	if ee.StatusCode != 0 || ee.Attempts != 2 || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error = %q (status %d, %d attempts), want connection refused, status 0, 2 attempts", err, ee.StatusCode, ee.Attempts)
	}
}

func TestOpenAITimeout(t *testing.T) {
	// A timed-out attempt is a transport failure, retried like a dropped
	// connection.
	srv := newChatServer(t, reply{hang: true})
	m := newTestOpenAI(t, srv, OpenAIConfig{Timeout: 100 * time.Millisecond, MaxRetries: ptr(1), MaxRetryDelay: time.Millisecond})
	_, err := m.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want context.DeadlineExceeded", err)
	}
	var ee *EndpointError
	if !errors.As(err, &ee) || ee.StatusCode != 0 {
		t.Fatalf("error = %v (%T), want an *EndpointError without a status", err, err)
	}
	if want := "openai:gpt-oss-120b: no answer within 100ms (2 attempts)"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if n := srv.requests(); n != 2 {
		t.Errorf("server saw %d requests, want 2", n)
	}
}

func TestOpenAICancelled(t *testing.T) {
	srv := newChatServer(t, reply{hang: true})
	m := newTestOpenAI(t, srv, OpenAIConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.Next(ctx, Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
		done <- err
	}()
	for srv.requests() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	var ee *EndpointError
	if errors.As(err, &ee) {
		t.Errorf("error = %v is an EndpointError; the caller cancelled, the endpoint did nothing wrong", err)
	}
}

func TestOpenAIBadAnswers(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"no choices", `{"id":"x","object":"chat.completion","choices":[]}`, "openai:gpt-oss-120b: the answer has no choices (1 attempt)"},
		{"not JSON", `{"id":`, "openai:gpt-oss-120b: the answer is not a chat completion: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newChatServer(t, reply{body: tt.body})
			m := newTestOpenAI(t, srv, OpenAIConfig{MaxRetries: ptr(0)})
			_, err := m.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
			var ee *EndpointError
			if !errors.As(err, &ee) || !strings.HasPrefix(err.Error(), tt.want) || ee.Class != FailureTransport {
				t.Errorf("error = %v (%T), want an *EndpointError starting %q", err, err, tt.want)
			}
		})
	}
}

func TestOpenAIErrorMessages(t *testing.T) {
	tests := []struct {
		body string
		want string
	}{
		{`{"error":{"message":"Invalid API key","type":"invalid_request_error"}}`, "Invalid API key"},
		{`{"error":"model not found"}`, "model not found"},
		{`{"object":"error","message":"bad tools","code":400}`, "bad tools"},
		{`{"detail":"Not Found"}`, "Not Found"},
		{`{"detail":[{"loc":["body","messages"],"msg":"field required"}]}`, `[{"loc":["body","messages"],"msg":"field required"}]`},
		{"", ""},
		{"  upstream connect error  ", "upstream connect error"},
		{strings.Repeat("x", 400), strings.Repeat("x", 300) + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := errorMessage([]byte(tt.body)); got != tt.want {
				t.Errorf("errorMessage(%q) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}

func TestOpenAIConcurrent(t *testing.T) {
	srv := newChatServer(t)
	m := newTestOpenAI(t, srv, OpenAIConfig{})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			req := Request{Messages: []Message{{Role: RoleUser, Content: fmt.Sprint("q", i)}}}
			if _, err := m.Next(context.Background(), req); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := srv.requests(); n != 4 {
		t.Errorf("server saw %d requests, want 4", n)
	}
}

func TestNewOpenAIErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  OpenAIConfig
		want string
	}{
		{"no model", OpenAIConfig{BaseURL: "http://localhost:8000/v1"}, "model: required (or set HOSTEVAL_MODEL)"},
		{"bad url", OpenAIConfig{Model: "m", BaseURL: "http://[::1"}, "base_url: parse"},
		{"not http", OpenAIConfig{Model: "m", BaseURL: "localhost:8000"}, `base_url: "localhost:8000" is not an http or https URL`},
		{"negative retries", OpenAIConfig{Model: "m", MaxRetries: ptr(-1)}, "max_retries: -1 is negative"},
		{"negative timeout", OpenAIConfig{Model: "m", Timeout: -time.Second}, "timeout: -1s is negative"},
		{"negative delay", OpenAIConfig{Model: "m", MaxRetryDelay: -time.Second}, "max_retry_delay: -1s is negative"},
		{"negative max_tokens", OpenAIConfig{Model: "m", MaxTokens: -1}, "max_tokens: -1 is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewOpenAI(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewOpenAI error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestOpenAIConfigWithEnv(t *testing.T) {
	env := map[string]string{
		EnvBaseURL: "http://vllm:8000/v1",
		EnvAPIKey:  "sk-env",
		EnvModel:   "gpt-oss-120b",
	}
	tests := []struct {
		name string
		cfg  OpenAIConfig
		want OpenAIConfig
	}{
		{"all from env", OpenAIConfig{}, OpenAIConfig{BaseURL: "http://vllm:8000/v1", APIKey: "sk-env", Model: "gpt-oss-120b"}},
		{
			"config wins",
			OpenAIConfig{BaseURL: "http://ollama:11434/v1", Model: "gpt-oss:20b", Timeout: time.Minute},
			OpenAIConfig{BaseURL: "http://ollama:11434/v1", APIKey: "sk-env", Model: "gpt-oss:20b", Timeout: time.Minute},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.cfg.WithEnv(func(k string) string { return env[k] })
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("WithEnv mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenAIConfigYAML(t *testing.T) {
	const src = `
base_url: http://localhost:8000/v1
api_key: sk-local
model: gpt-oss-120b
timeout: 90s
max_retries: 0
max_retry_delay: 500ms
temperature: 0
max_tokens: 1024
reasoning_effort: high
headers: {X-Gateway: blue}
reasoning: true
price: {input_per_mtok: 0.15, output_per_mtok: 0.6, cached_input_per_mtok: 0.075}
limits: {concurrency: 4, requests_per_minute: 60, tokens_per_minute: 100000}
`
	var got OpenAIConfig
	if err := decodeStrict(t, src, &got); err != nil {
		t.Fatal(err)
	}
	want := OpenAIConfig{
		BaseURL: "http://localhost:8000/v1", APIKey: "sk-local", Model: "gpt-oss-120b",
		Timeout: 90 * time.Second, MaxRetries: ptr(0), MaxRetryDelay: 500 * time.Millisecond,
		Temperature: ptr(0.0), MaxTokens: 1024, ReasoningEffort: "high",
		Headers:   map[string]string{"X-Gateway": "blue"},
		Reasoning: ptr(true),
		Price:     &Price{InputPerMTok: 0.15, OutputPerMTok: 0.6, CachedInputPerMTok: ptr(0.075)},
		Limits:    Limits{Concurrency: 4, RequestsPerMinute: 60, TokensPerMinute: 100000},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded config mismatch (-want +got):\n%s", diff)
	}
	if err := decodeStrict(t, "modle: x", &got); err == nil || !strings.Contains(err.Error(), `unknown field "modle" (did you mean "model"?)`) {
		t.Errorf("decoding a misspelt field: error = %v, want the unknown field modle", err)
	}
}

// Each answer says how many HTTP requests it took and how long it waited
// before and between them: here one 503 with Retry-After-Ms 200 (a wait
// the client must honour), then the answer.
func TestOpenAIRetryFigures(t *testing.T) {
	srv := newChatServer(t, reply{status: 503, header: map[string]string{"Retry-After-Ms": "200"}, body: `{"error":"busy"}`}, okReply(okText))
	got, err := newTestOpenAI(t, srv, OpenAIConfig{}).Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Attempts != 2 || got.Waited < 200*time.Millisecond {
		t.Errorf("Attempts %d, Waited %v; want 2 and at least the 200ms asked for", got.Attempts, got.Waited)
	}

	// A failure carries them too.
	failing := newChatServer(t, reply{status: 503, header: map[string]string{"Retry-After-Ms": "10"}, body: `{"error":"busy"}`})
	res, err := newTestOpenAI(t, failing, OpenAIConfig{MaxRetries: ptr(2)}).Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
	var ee *EndpointError
	if !errors.As(err, &ee) || ee.Attempts != 3 || res.Attempts != 3 || res.Waited < 20*time.Millisecond || ee.Waited != res.Waited {
		t.Errorf("error %v, Response %+v; want 3 attempts and at least 20ms waited on both", err, res)
	}
}
