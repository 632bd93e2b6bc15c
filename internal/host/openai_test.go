package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/hosteval/hosteval/internal/model"
)

// The tool-definition cost the host reports must be the bytes of the tools
// array the model endpoint receives: here a whole turn runs against a Chat
// Completions endpoint (httptest) that records every request body.
func TestToolBytesAreWhatTheEndpointReceives(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		bodies [][]byte
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, body)
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		msg := `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"cmdb__get_asset","arguments":"{\"hostname\":\"jump-prod-02\"}"}},{"id":"c2","type":"function","function":{"name":"get_asset<|channel|>commentary","arguments":"{}"}}]}`
		if n > 1 {
			msg = `{"role":"assistant","content":"Camille Michel owns it."}`
		}
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","created":1,"model":"gpt-oss-120b","choices":[{"index":0,"finish_reason":"stop","message":%s}],"usage":{"prompt_tokens":900,"completion_tokens":20,"total_tokens":920}}`, msg)
	}))
	defer srv.Close()

	var hostLog logLines
	h := startHost(t, Options{Servers: []ServerSpec{fixture("cmdb"), fixture("tickets")}, Log: &hostLog})
	m, err := model.NewOpenAI(model.OpenAIConfig{BaseURL: srv.URL, Model: "gpt-oss-120b"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.NewConversation(m, "You are helpful.").Ask(context.Background(), "who owns jump-prod-02?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != "Camille Michel owns it." || len(res.Calls) != 2 {
		t.Fatalf("answer %q after %d calls", res.Answer, len(res.Calls))
	}
	if res.Calls[0].Outcome != "ok" || res.Calls[1].Outcome != "unknown_tool" {
		t.Errorf("outcomes %s, %s; want ok, and unknown_tool for the garbled name", res.Calls[0].Outcome, res.Calls[1].Outcome)
	}
	if len(bodies) != 2 {
		t.Fatalf("the endpoint got %d requests, want 2", len(bodies))
	}
	for i, body := range bodies {
		var req struct {
			Tools json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(req.Tools, h.ToolsJSON()) {
			t.Errorf("request %d: the tools array sent differs from the host's:\nsent %s\nhost %s", i+1, req.Tools, h.ToolsJSON())
		}
		mr := res.Requests[i]
		if mr.ToolDefBytes != len(req.Tools) || mr.ToolDefTokens != h.ToolDefs().Tokens || mr.Usage == nil || mr.Usage.TotalTokens != 920 {
			t.Errorf("request %d event: %d bytes, %d tokens, usage %+v; want %d bytes, %d tokens, 920 total", i+1,
				mr.ToolDefBytes, mr.ToolDefTokens, mr.Usage, len(req.Tools), h.ToolDefs().Tokens)
		}
	}
	if got := hostLog.entries(map[string]any{"operation": "host.model_request", "tool_def_bytes": len(h.ToolsJSON())}); len(got) != 2 {
		t.Errorf("%d host.model_request log lines with the catalog's bytes, want 2", len(got))
	}
}

// An endpoint that fails a turn is named once in the turn's error, and a
// choice without a message ends the turn as the model's error, without an
// answer (not as an empty one).
func TestModelFailureOfATurn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		status    int
		body      string
		wantErr   string
		wantModel string // the request's outcome
	}{
		{
			name: "refused", status: http.StatusUnauthorized, body: `{"error":"Unauthorized"}`,
			wantErr: "model openai:m: status 401 Unauthorized: Unauthorized (1 attempt; not retried: check api_key (or OPENAI_API_KEY))",
		},
		{
			name: "message null", status: http.StatusOK,
			body:      `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":null}]}`,
			wantModel: "model_error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			h := startHost(t, Options{})
			m, err := model.NewOpenAI(model.OpenAIConfig{BaseURL: srv.URL, Model: "m", MaxRetries: new(0)})
			if err != nil {
				t.Fatal(err)
			}
			res, err := h.NewConversation(m, "").Ask(context.Background(), "who owns jump-prod-02?")
			if got := fmt.Sprint(err); (tt.wantErr == "" && err != nil) || (tt.wantErr != "" && got != tt.wantErr) {
				t.Errorf("error = %s, want %q", got, tt.wantErr)
			}
			if len(res.Requests) != 1 || res.Requests[0].Outcome != tt.wantModel || res.Answer != "" {
				t.Errorf("requests %+v, answer %q; want one request with outcome %q and no answer", res.Requests, res.Answer, tt.wantModel)
			}
		})
	}
}

// An answer the endpoint cut short ends the turn as its own outcome: the
// text is kept and marked, and a call in it (which may be cut too) is
// not run.
func TestTruncatedAnswerEndsTheTurn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, finish, message string
		wantAnswer            string
	}{
		{"length", "length", `{"role":"assistant","content":"The owner of jump-prod-02 is"}`, "The owner of jump-prod-02 is"},
		{"content filter", "content_filter", `{"role":"assistant","content":""}`, ""},
		{"a call cut short", "length", `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"cmdb__get_asset","arguments":"{\"hostname\":\"jump-pr"}}]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":%q,"message":%s}]}`, tt.finish, tt.message)
			}))
			defer srv.Close()
			h := startHost(t, Options{Servers: []ServerSpec{fixture("cmdb")}})
			m, err := model.NewOpenAI(model.OpenAIConfig{BaseURL: srv.URL, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			res, err := h.NewConversation(m, "").Ask(context.Background(), "who owns jump-prod-02?")
			if err != nil {
				t.Fatal(err)
			}
			if res.Answer != tt.wantAnswer || res.Truncated != tt.finish || len(res.Calls) != 0 || res.Steps != 0 {
				t.Errorf("answer %q, truncated %q, %d calls; want %q, %q, none run", res.Answer, res.Truncated, len(res.Calls), tt.wantAnswer, tt.finish)
			}
			if len(res.Requests) != 1 || res.Requests[0].Outcome != "truncated" || res.Requests[0].FinishReason != tt.finish {
				t.Errorf("requests %+v; want one, truncated, finish_reason %s", res.Requests, tt.finish)
			}
		})
	}
}
