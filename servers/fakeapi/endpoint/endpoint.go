// Package endpoint is the project's fake model endpoint, which the fakeapi
// command (servers/fakeapi) serves and tests start in-process: an
// OpenAI-compatible Chat Completions endpoint that answers from rules
// instead of weights: "when the question matches X, call tool Y with
// arguments Z; after its result, answer with a template". Its answers have
// the shape vLLM gives (ids, created, usage, finish_reason, tool calls with
// JSON-string arguments, reasoning text),
// so that cassettes recorded from it are what a real endpoint would have
// produced, and tests and the default suite can record them offline.
//
// A rule may depend on how a tool is described, which is what an A/B of
// two descriptions needs from a model, and may fail the way llama.cpp's
// server fails on a malformed tool call.
//
//	h, err := endpoint.New(endpoint.Config{
//		Model: "gpt-oss-120b",
//		Rules: []endpoint.Rule{{
//			Match:  `(?i)who owns (\S+?)\??$`,
//			Calls:  []endpoint.Call{{Tool: "cmdb__get_asset", Args: `{"hostname": {{json (index .Groups 1)}}}`}},
//			Answer: "The {{.JSON.owner}} team owns {{index .Groups 1}}.",
//		}},
//	})
//	srv := httptest.NewServer(h) // or http.ListenAndServe(addr, h) from a binary
package endpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"text/template"
	"time"
)

// Config configures a fake endpoint. Its YAML form is for a binary that
// serves one; Now is for tests.
type Config struct {
	// Model is the model name served; a request for another is answered
	// 404 the way vLLM answers it. Empty serves any name.
	Model string `yaml:"model,omitempty" doc:"The model name served; a request for another is answered 404, as vLLM answers it. Empty serves any name." example:"gpt-oss-120b"`
	// APIKey, when set, must come as a bearer token (401 otherwise, as
	// vLLM answers).
	APIKey string `yaml:"api_key,omitempty" doc:"When set, requests must bring it as a bearer token (401 otherwise, as vLLM answers)." example:"test-key"`
	// Rules are tried in order on the conversation's last user message.
	Rules []Rule `yaml:"rules" doc:"Tried in order on the conversation's last user message; the first that matches (and whose description matches) answers."`
	// Fallback is the answer (a template) when no rule matches. Default:
	// DefaultFallback.
	Fallback string `yaml:"fallback,omitempty" doc:"The answer (a template) when no rule matches. Default: I cannot help with that." example:"I cannot help with that."`
	// ReasoningField is where reasoning text goes: "reasoning_content"
	// (vLLM before 0.10, llama.cpp's server; the default) or "reasoning"
	// (vLLM since, Ollama).
	ReasoningField string `yaml:"reasoning_field,omitempty" doc:"Where reasoning text goes: reasoning_content (vLLM before 0.10, llama.cpp's server; the default) or reasoning (vLLM since, Ollama)." example:"reasoning_content"`
	// Delay is waited before every answer.
	Delay time.Duration `yaml:"delay,omitempty" doc:"Waited before every answer: an endpoint's latency, for benchmarks." example:"200ms"`
	// Now gives the answers' created time; nil is time.Now.
	Now func() time.Time `yaml:"-"`
}

// DefaultFallback answers a question no rule matches.
const DefaultFallback = "I cannot help with that."

// Rule is one behaviour of the fake model.
type Rule struct {
	// Match is a regular expression (RE2) on the last user message.
	Match string `yaml:"match" required:"true" doc:"A regular expression (RE2) on the last user message; its groups are .Groups in the templates." example:"'(?i)who owns ([a-z0-9-]+)'"`
	// Description, when set, is a regular expression the description of
	// the first call's tool must match in the request's tools; otherwise
	// the rule is skipped, as a model that does not recognise the tool
	// for the job would skip it.
	Description string `yaml:"description,omitempty" doc:"A regular expression the description of the first call's tool must match in the request's tools, or the rule is skipped, as a model that does not recognise the tool for the job would skip it." example:"'(?i)exact hostname'"`
	// Calls are made one per step: the first answers the question, each
	// next one the previous call's result.
	Calls []Call `yaml:"calls,omitempty" doc:"Made one per step: the first answers the question, each next one the previous call's result."`
	// Answer is the final answer, a template, written after the last
	// call's result (at once, without calls).
	Answer string `yaml:"answer,omitempty" doc:"The final answer, a template, written after the last call's result (at once, without calls)." example:"'{{.JSON.owner}} owns {{index .Groups 1}}.'"`
	// Reasoning is sent as the reasoning text of every step.
	Reasoning string `yaml:"reasoning,omitempty" doc:"Sent as the reasoning text of every step." example:"The user names a host; get_asset looks it up."`
	// Fail, when set, answers the rule's first step with an error
	// instead, e.g. llama.cpp's 500 for a tool call that did not parse.
	Fail *Failure `yaml:"fail,omitempty" doc:"Answers the rule's first step with an error instead, e.g. llama.cpp's 500 for a tool call that did not parse."`
	// Finish, when set, is the finish_reason of the answer (its last
	// step): "length" for an answer max_tokens cut short (write the cut
	// text as Answer), or "content_filter".
	Finish string `yaml:"finish,omitempty" doc:"The finish_reason of the answer (its last step): length for an answer max_tokens cut short (write the cut text as answer), or content_filter." example:"length"`
}

// Call is one tool call of a [Rule].
type Call struct {
	Tool string `yaml:"tool" required:"true" doc:"The tool's name as the host offers it (server__tool)." example:"cmdb__get_asset"`
	// Args is the arguments text, a template; it may be invalid JSON on
	// purpose. Empty is "{}".
	Args string `yaml:"args,omitempty" doc:"The arguments text, a template; it may be invalid JSON on purpose. Empty is {}." example:"'{\"hostname\": {{json (index .Groups 1)}}}'"`
}

// Failure is an error answer.
type Failure struct {
	Status int    `yaml:"status" required:"true" doc:"The HTTP status." example:"500"`
	Body   string `yaml:"body" doc:"The body, sent as written." example:"'{\"error\": {\"message\": \"Failed to parse tool call arguments as JSON\"}}'"`
	// Headers are sent with it, e.g. Retry-After.
	Headers map[string]string `yaml:"headers,omitempty" doc:"Headers sent with it, e.g. Retry-After." example:"{Retry-After: \"2\"}"`
	// Times, when positive, fails only the first Times requests of the
	// rule's first step, and answers the later ones: an endpoint that
	// recovers, for a client's retries.
	Times int `yaml:"times,omitempty" doc:"Fail only the first N requests of the rule's first step, then answer (an endpoint that recovers); 0: every one." example:"1"`
}

// Data is what templates see.
type Data struct {
	// Question is the last user message.
	Question string
	// Groups are the rule's match: Groups 0 is the whole match, Groups 1
	// the first parenthesised group, and so on.
	Groups []string
	// Results are the tool messages since the question, in order.
	Results []string
	// Result is the last of them, "" before any.
	Result string
	// JSON is Result parsed (numbers as json.Number), nil when it is not JSON.
	JSON any
}

// Handler serves a fake endpoint: POST /v1/chat/completions (and
// /chat/completions) and GET /v1/models.
type Handler struct {
	cfg      Config
	rules    []rule
	fallback *template.Template
	requests atomic.Int64
}

type rule struct {
	Rule
	// failed counts the failures answered (Failure.Times).
	failed      *atomic.Int64
	match       *regexp.Regexp
	description *regexp.Regexp
	args        []*template.Template
	answer      *template.Template
}

var funcs = template.FuncMap{
	// json writes a value as JSON, for arguments: {"hostname": {{json .X}}}.
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

func parseTemplate(name, text string) (*template.Template, error) {
	t, err := template.New(name).Funcs(funcs).Option("missingkey=zero").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// New compiles cfg. Errors name the field, e.g. "rules[1].match: ...".
func New(cfg Config) (*Handler, error) {
	h := &Handler{cfg: cfg}
	switch cfg.ReasoningField {
	case "":
		h.cfg.ReasoningField = "reasoning_content"
	case "reasoning_content", "reasoning":
	default:
		return nil, fmt.Errorf("reasoning_field: %q is not reasoning_content or reasoning", cfg.ReasoningField)
	}
	if h.cfg.Now == nil {
		h.cfg.Now = time.Now
	}
	var err error
	if h.fallback, err = parseTemplate("fallback", cmpOr(cfg.Fallback, DefaultFallback)); err != nil {
		return nil, err
	}
	for i, r := range cfg.Rules {
		path := fmt.Sprintf("rules[%d]", i)
		c := rule{Rule: r, failed: new(atomic.Int64)}
		if c.match, err = regexp.Compile(r.Match); err != nil {
			return nil, fmt.Errorf("%s.match: %w", path, err)
		}
		if r.Description != "" {
			if len(r.Calls) == 0 {
				return nil, fmt.Errorf("%s.description: a rule without calls has no tool to describe", path)
			}
			if c.description, err = regexp.Compile(r.Description); err != nil {
				return nil, fmt.Errorf("%s.description: %w", path, err)
			}
		}
		for j, call := range r.Calls {
			if call.Tool == "" {
				return nil, fmt.Errorf("%s.calls[%d].tool: required", path, j)
			}
			t, err := parseTemplate(fmt.Sprintf("%s.calls[%d].args", path, j), cmpOr(call.Args, "{}"))
			if err != nil {
				return nil, err
			}
			c.args = append(c.args, t)
		}
		if r.Answer == "" && r.Fail == nil {
			return nil, fmt.Errorf("%s.answer: required", path)
		}
		if c.answer, err = parseTemplate(path+".answer", r.Answer); err != nil {
			return nil, err
		}
		switch r.Finish {
		case "", "stop", "length", "content_filter":
		default:
			return nil, fmt.Errorf("%s.finish: %q is not stop, length or content_filter", path, r.Finish)
		}
		if r.Fail != nil && (r.Fail.Status < 400 || r.Fail.Status > 599) {
			return nil, fmt.Errorf("%s.fail.status: %d is not an HTTP error status", path, r.Fail.Status)
		}
		h.rules = append(h.rules, c)
	}
	return h, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Requests counts the chat completion requests served.
func (h *Handler) Requests() int { return int(h.requests.Load()) }

// The wire shapes: a request as far as the fake reads it, and an answer
// field for field as vLLM writes it.
type (
	request struct {
		Model    string    `json:"model"`
		Messages []message `json:"messages"`
		Tools    []struct {
			Function struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"function"`
		} `json:"tools"`
	}
	message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	answer struct {
		ID              string   `json:"id"`
		Object          string   `json:"object"`
		Created         int64    `json:"created"`
		Model           string   `json:"model"`
		Choices         []choice `json:"choices"`
		Usage           usage    `json:"usage"`
		PromptLogprobs  any      `json:"prompt_logprobs"`
		KVTransferParam any      `json:"kv_transfer_params"`
	}
	choice struct {
		Index        int           `json:"index"`
		Message      answerMessage `json:"message"`
		Logprobs     any           `json:"logprobs"`
		FinishReason string        `json:"finish_reason"`
		StopReason   any           `json:"stop_reason"`
	}
	answerMessage struct {
		Role             string     `json:"role"`
		ReasoningContent *string    `json:"reasoning_content,omitempty"`
		Reasoning        *string    `json:"reasoning,omitempty"`
		Content          *string    `json:"content"`
		ToolCalls        []toolCall `json:"tool_calls"`
	}
	toolCall struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	usage struct {
		PromptTokens        int `json:"prompt_tokens"`
		TotalTokens         int `json:"total_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails any `json:"prompt_tokens_details"`
	}
)

// text reads a message's content: a string, null, or text parts.
func (m message) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// writeError answers in vLLM's error shape.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": status}})
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.cfg.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+h.cfg.APIKey {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"Unauthorized"}`))
		return
	}
	switch {
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		h.models(w)
	case r.URL.Path == "/v1/chat/completions" || r.URL.Path == "/chat/completions":
		if r.Method != http.MethodPost {
			writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "Method Not Allowed")
			return
		}
		h.requests.Add(1)
		h.chat(w, r)
	default:
		writeError(w, http.StatusNotFound, "NotFoundError", "Not Found")
	}
}

func (h *Handler) models(w http.ResponseWriter) {
	data := []map[string]any{}
	if h.cfg.Model != "" {
		data = append(data, map[string]any{"id": h.cfg.Model, "object": "model", "created": h.cfg.Now().Unix(), "owned_by": "hosteval"})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

// maxBody bounds a request body.
const maxBody = 16 << 20

func (h *Handler) chat(w http.ResponseWriter, r *http.Request) {
	var body bytes.Buffer
	if _, err := body.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody)); err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	var req request
	if err := json.Unmarshal(body.Bytes(), &req); err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", "the request is not JSON: "+err.Error())
		return
	}
	if h.cfg.Model != "" && req.Model != h.cfg.Model {
		writeError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "BadRequestError", "messages: at least one message is required")
		return
	}
	if h.cfg.Delay > 0 {
		select {
		case <-time.After(h.cfg.Delay):
		case <-r.Context().Done():
			return
		}
	}
	msg, finish, fail, err := h.reply(req)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "InternalServerError", err.Error())
		return
	}
	if fail != nil {
		for k, v := range fail.Headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(fail.Status)
		w.Write([]byte(fail.Body))
		return
	}
	sum := sha256.Sum256(body.Bytes())
	id := hex.EncodeToString(sum[:])
	completion := len(deref(msg.Content)) + len(deref(msg.Reasoning)) + len(deref(msg.ReasoningContent))
	for i := range msg.ToolCalls {
		// Ids as vLLM makes them, derived from the request so that the
		// same request gets the same answer and a recording is stable.
		msg.ToolCalls[i].ID = fmt.Sprintf("chatcmpl-tool-%s%d", id[32:63], i)
		completion += len(msg.ToolCalls[i].Function.Name) + len(msg.ToolCalls[i].Function.Arguments)
		finish = "tool_calls"
	}
	// Tokens as about four bytes each: the shape of usage is real, its
	// figures are an estimate.
	prompt, completionTokens := (body.Len()+3)/4, (completion+3)/4+1
	a := answer{
		ID:      "chatcmpl-" + id[:32],
		Object:  "chat.completion",
		Created: h.cfg.Now().Unix(),
		Model:   req.Model,
		Choices: []choice{{Message: msg, FinishReason: finish}},
		Usage:   usage{PromptTokens: prompt, CompletionTokens: completionTokens, TotalTokens: prompt + completionTokens},
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(a)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// reply decides the next message: the step of the conversation since its
// last user message picks the rule's call, or its answer, and its
// finish_reason.
func (h *Handler) reply(req request) (answerMessage, string, *Failure, error) {
	last := -1
	for i, m := range req.Messages {
		if m.Role == "user" {
			last = i
		}
	}
	d := Data{}
	step := 0
	if last >= 0 {
		d.Question = req.Messages[last].text()
		for _, m := range req.Messages[last+1:] {
			switch m.Role {
			case "assistant":
				step++
			case "tool":
				d.Results = append(d.Results, m.text())
			}
		}
	}
	if n := len(d.Results); n > 0 {
		d.Result = d.Results[n-1]
		dec := json.NewDecoder(strings.NewReader(d.Result))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil && !dec.More() {
			d.JSON = v
		}
	}
	out := answerMessage{Role: "assistant", ToolCalls: []toolCall{}}
	r := h.pick(req, d.Question)
	if r == nil {
		text, err := execute(h.fallback, d)
		out.Content = &text
		return out, "stop", nil, err
	}
	d.Groups = r.match.FindStringSubmatch(d.Question)
	if r.Fail != nil && step == 0 && (r.Fail.Times <= 0 || r.failed.Add(1) <= int64(r.Fail.Times)) {
		return out, "", r.Fail, nil
	}
	if r.Reasoning != "" {
		reasoning := r.Reasoning
		if h.cfg.ReasoningField == "reasoning" {
			out.Reasoning = &reasoning
		} else {
			out.ReasoningContent = &reasoning
		}
	}
	if step < len(r.Calls) {
		args, err := execute(r.args[step], d)
		out.ToolCalls = []toolCall{{Type: "function", Function: function{Name: r.Calls[step].Tool, Arguments: args}}}
		return out, "tool_calls", nil, err
	}
	text, err := execute(r.answer, d)
	out.Content = &text
	return out, cmpOr(r.Finish, "stop"), nil, err
}

// pick returns the first rule that matches the question (and whose tool
// is described as it asks), nil when none does.
func (h *Handler) pick(req request, question string) *rule {
	for i := range h.rules {
		r := &h.rules[i]
		if !r.match.MatchString(question) {
			continue
		}
		if r.description != nil && !describedAs(req, r.Calls[0].Tool, r.description) {
			continue
		}
		return r
	}
	return nil
}

func describedAs(req request, tool string, re *regexp.Regexp) bool {
	for _, t := range req.Tools {
		if t.Function.Name == tool {
			return re.MatchString(t.Function.Description)
		}
	}
	return false
}

func execute(t *template.Template, d Data) (string, error) {
	var b strings.Builder
	if err := t.Execute(&b, d); err != nil {
		return "", errors.New("fake model: " + err.Error())
	}
	return b.String(), nil
}
