package endpoint_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/goldenfile"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/servers/fakeapi/endpoint"
)

const tools = `[{"type":"function","function":{"name":"cmdb__get_asset","description":"[cmdb] Get one asset by hostname.","parameters":{"type":"object","properties":{"hostname":{"type":"string"}}}}},` +
	`{"type":"function","function":{"name":"tickets__open_ticket","description":"[tickets] Open a ticket.","parameters":{"type":"object"}}}]`

var cfg = endpoint.Config{
	Model: "gpt-oss-120b",
	Rules: []endpoint.Rule{
		{
			Match:       `(?i)who owns (\S+?)\??$`,
			Description: `(?i)hostname`,
			Calls:       []endpoint.Call{{Tool: "cmdb__get_asset", Args: `{"hostname": {{json (index .Groups 1)}}}`}},
			Answer:      "The {{.JSON.owner}} team owns {{index .Groups 1}}.",
			Reasoning:   "Look the host up in the CMDB.",
		},
		{
			// Without a description naming hostnames, the model guesses an argument.
			Match:  `(?i)who owns (\S+?)\??$`,
			Calls:  []endpoint.Call{{Tool: "cmdb__get_asset", Args: `{"name": {{json (index .Groups 1)}}}`}},
			Answer: "I could not find out: {{.Result}}",
		},
		{
			Match:  `(?i)open a ticket`,
			Calls:  []endpoint.Call{{Tool: "cmdb__get_asset", Args: `{"hostname": "a"}`}, {Tool: "tickets__open_ticket", Args: `{"host": "{{.JSON.hostname}}"`}},
			Answer: "Opened {{.JSON.ticket_id}} after {{len .Results}} calls.",
		},
		{
			Match: `(?i)break`,
			Fail:  &endpoint.Failure{Status: 500, Body: `{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}`},
		},
	},
	Now: func() time.Time { return time.Unix(1767225600, 0) },
}

func start(t *testing.T, c endpoint.Config) (*endpoint.Handler, *httptest.Server) {
	t.Helper()
	h, err := endpoint.New(c)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv
}

func client(t *testing.T, srv *httptest.Server, c model.OpenAIConfig) *model.OpenAI {
	t.Helper()
	c.BaseURL = srv.URL + "/v1"
	c.Model = cmpOr(c.Model, "gpt-oss-120b")
	c.MaxRetries = new(0)
	m, err := model.NewOpenAI(c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// conversation runs a question to its answer through m, answering each
// call with results[tool].
func conversation(t *testing.T, m model.Model, tools, question string, results map[string]string) []model.Response {
	t.Helper()
	msgs := []model.Message{{Role: model.RoleUser, Content: question}}
	var out []model.Response
	for range 5 {
		res, err := m.Next(context.Background(), model.Request{Messages: msgs, ToolsJSON: json.RawMessage(tools)})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res)
		if len(res.ToolCalls) == 0 {
			return out
		}
		msgs = append(msgs, model.Message{Role: model.RoleAssistant, Content: res.Text, ToolCalls: res.ToolCalls})
		for _, c := range res.ToolCalls {
			msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: c.ID, Content: results[c.Name]})
		}
	}
	t.Fatal("no answer after 5 steps")
	return nil
}

func TestToolCallThenAnswer(t *testing.T) {
	_, srv := start(t, cfg)
	got := conversation(t, client(t, srv, model.OpenAIConfig{}), tools, "Who owns jump-prod-02?",
		map[string]string{"cmdb__get_asset": `{"hostname":"jump-prod-02","owner":"platform"}`})
	if len(got) != 2 {
		t.Fatalf("%d responses, want a call and an answer", len(got))
	}
	call := got[0].ToolCalls
	if len(call) != 1 || call[0].Name != "cmdb__get_asset" || call[0].Arguments != `{"hostname": "jump-prod-02"}` || !strings.HasPrefix(call[0].ID, "chatcmpl-tool-") {
		t.Errorf("call = %+v, want cmdb__get_asset {\"hostname\": \"jump-prod-02\"} with a vLLM-style id", call)
	}
	if got[0].FinishReason != "tool_calls" || got[0].Reasoning != "Look the host up in the CMDB." || got[0].Usage == nil || got[0].Usage.PromptTokens == 0 {
		t.Errorf("first response = %+v, want finish_reason tool_calls, the reasoning and usage", got[0])
	}
	if got[1].Text != "The platform team owns jump-prod-02." || got[1].FinishReason != "stop" {
		t.Errorf("answer = %q (%s), want the template over the result", got[1].Text, got[1].FinishReason)
	}
}

// TestDescriptionDecides: the same question, two descriptions of the
// tool, two behaviours: what an A/B of descriptions measures.
func TestDescriptionDecides(t *testing.T) {
	_, srv := start(t, cfg)
	other := strings.Replace(tools, "Get one asset by hostname.", "Get one asset.", 1)
	got := conversation(t, client(t, srv, model.OpenAIConfig{}), other, "Who owns jump-prod-02?",
		map[string]string{"cmdb__get_asset": "error: hostname is required"})
	if args := got[0].ToolCalls[0].Arguments; args != `{"name": "jump-prod-02"}` {
		t.Errorf("arguments = %s, want the guess of the second rule", args)
	}
	if want := "I could not find out: error: hostname is required"; got[1].Text != want {
		t.Errorf("answer = %q, want %q", got[1].Text, want)
	}
}

func TestSeveralCalls(t *testing.T) {
	_, srv := start(t, cfg)
	got := conversation(t, client(t, srv, model.OpenAIConfig{}), tools, "Please open a ticket.", map[string]string{
		"cmdb__get_asset":      `{"hostname":"jump-prod-02"}`,
		"tickets__open_ticket": `{"ticket_id":"INC-7"}`,
	})
	if len(got) != 3 || got[1].ToolCalls[0].Name != "tickets__open_ticket" || got[1].ToolCalls[0].Arguments != `{"host": "jump-prod-02"` {
		t.Fatalf("responses = %+v, want two calls (the second with the first's result, its JSON cut on purpose) and an answer", got)
	}
	if got[2].Text != "Opened INC-7 after 2 calls." {
		t.Errorf("answer = %q", got[2].Text)
	}
}

func TestFallback(t *testing.T) {
	_, srv := start(t, cfg)
	got := conversation(t, client(t, srv, model.OpenAIConfig{}), tools, "What is the weather?", nil)
	if len(got) != 1 || got[0].Text != endpoint.DefaultFallback {
		t.Errorf("responses = %+v, want the fallback", got)
	}
}

func TestFailures(t *testing.T) {
	c := cfg
	c.APIKey = "sk-fake"
	_, srv := start(t, c)
	req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "break it"}}, ToolsJSON: json.RawMessage(tools)}

	_, err := client(t, srv, model.OpenAIConfig{APIKey: "sk-fake"}).Next(context.Background(), req)
	var me *model.ModelOutputError
	if !errors.As(err, &me) || me.StatusCode != 500 {
		t.Errorf("error = %v, want a *ModelOutputError with status 500", err)
	}
	tests := []struct {
		name   string
		cfg    model.OpenAIConfig
		status int
	}{
		{"no key", model.OpenAIConfig{}, 401},
		{"another model", model.OpenAIConfig{APIKey: "sk-fake", Model: "gpt-oss-20b"}, 404},
	}
	for _, tt := range tests {
		_, err := client(t, srv, tt.cfg).Next(context.Background(), req)
		var ee *model.EndpointError
		if !errors.As(err, &ee) || ee.Class != model.FailureConfig || ee.StatusCode != tt.status {
			t.Errorf("%s: error = %v, want a configuration error with status %d", tt.name, err, tt.status)
		}
	}
}

// TestAnswerShape pins an answer byte for byte: the shape a cassette
// recorded from the fake holds. The same request gets the same answer.
func TestAnswerShape(t *testing.T) {
	c := cfg
	c.ReasoningField = "reasoning"
	_, srv := start(t, c)
	body := `{"messages":[{"role":"user","content":"Who owns jump-prod-02?"}],"model":"gpt-oss-120b","tool_choice":"auto","tools":` + tools + `}`
	post := func() []byte {
		res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("status %d, %s: %s", res.StatusCode, res.Header.Get("Content-Type"), b)
		}
		return b
	}
	got := post()
	if again := post(); !bytes.Equal(got, again) {
		t.Errorf("the same request got another answer:\n%s\n%s", got, again)
	}
	goldenfile.Check(t, filepath.Join("testdata", "answer.json"), got)
}

func TestRoutes(t *testing.T) {
	h, srv := start(t, cfg)
	res, err := http.Get(srv.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	json.NewDecoder(res.Body).Decode(&models)
	res.Body.Close()
	if len(models.Data) != 1 || models.Data[0].ID != "gpt-oss-120b" {
		t.Errorf("models = %+v, want gpt-oss-120b", models)
	}
	for _, tt := range []struct{ method, path, body string }{
		{"GET", "/v1/chat/completions", ""},
		{"POST", "/v1/completions", "{}"},
		{"POST", "/v1/chat/completions", "{not json"},
		{"POST", "/v1/chat/completions", `{"model":"gpt-oss-120b","messages":[]}`},
	} {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		json.NewDecoder(res.Body).Decode(&e)
		res.Body.Close()
		if res.StatusCode < 400 || e.Error.Message == "" {
			t.Errorf("%s %s %s: status %d, message %q; want an error in vLLM's shape", tt.method, tt.path, tt.body, res.StatusCode, e.Error.Message)
		}
	}
	if n := h.Requests(); n != 2 {
		t.Errorf("Requests() = %d, want the 2 chat completion POSTs", n)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  endpoint.Config
		want string
	}{
		{"bad match", endpoint.Config{Rules: []endpoint.Rule{{Match: "(", Answer: "x"}}}, "rules[0].match: error parsing regexp"},
		{"no answer", endpoint.Config{Rules: []endpoint.Rule{{Match: "x"}}}, "rules[0].answer: required"},
		{"no tool", endpoint.Config{Rules: []endpoint.Rule{{Match: "x", Answer: "y", Calls: []endpoint.Call{{}}}}}, "rules[0].calls[0].tool: required"},
		{"bad args", endpoint.Config{Rules: []endpoint.Rule{{Match: "x", Answer: "y", Calls: []endpoint.Call{{Tool: "t", Args: "{{"}}}}}, "rules[0].calls[0].args"},
		{"description without calls", endpoint.Config{Rules: []endpoint.Rule{{Match: "x", Answer: "y", Description: "z"}}}, "rules[0].description: a rule without calls"},
		{"bad status", endpoint.Config{Rules: []endpoint.Rule{{Match: "x", Fail: &endpoint.Failure{Status: 200}}}}, "rules[0].fail.status: 200 is not an HTTP error status"},
		{"bad field", endpoint.Config{ReasoningField: "thinking"}, `reasoning_field: "thinking"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := endpoint.New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New error = %v, want %q", err, tt.want)
			}
		})
	}
}
