package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// Environment variables that [OpenAIConfig.WithEnv] reads.
const (
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvModel   = "HOSTEVAL_MODEL"
)

// Defaults of an [OpenAIConfig] whose fields are zero.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultOpenAITimeout    = 2 * time.Minute
	DefaultOpenAIMaxRetries = 2
)

// OpenAIConfig configures an [OpenAI] model. It is plain data, decoded from
// a scenario's YAML; [NewOpenAI] never reads the environment, the CLI calls
// [OpenAIConfig.WithEnv] first.
type OpenAIConfig struct {
	// BaseURL is the endpoint's base, e.g. http://localhost:8000/v1 for
	// vLLM or http://localhost:11434/v1 for Ollama. Default:
	// DefaultOpenAIBaseURL.
	BaseURL string `yaml:"base_url" doc:"The endpoint's base URL (default https://api.openai.com/v1, or OPENAI_BASE_URL)." example:"http://localhost:8000/v1"`
	// APIKey is sent as a bearer token; empty sends no Authorization header
	// (local endpoints need none).
	APIKey string `yaml:"api_key" doc:"Sent as a bearer token (default OPENAI_API_KEY; none for local endpoints). Prefer the environment to a key in a file." example:"${OPENAI_API_KEY}"`
	// Model is the model name the endpoint serves, e.g. gpt-oss-120b. Required.
	Model string `yaml:"model" doc:"The model the endpoint serves (default HOSTEVAL_MODEL)." example:"gpt-oss-120b"`
	// Timeout bounds each attempt (one HTTP request). A timed-out attempt
	// is not retried. Default: DefaultOpenAITimeout.
	Timeout time.Duration `yaml:"timeout" doc:"Bounds each attempt (one HTTP request); a timed-out attempt is not retried (default 2m)." example:"60s"`
	// MaxRetries is how many times a request is retried after a 408, 409,
	// 429 or 5xx answer or a connection error; nil means
	// DefaultOpenAIMaxRetries, 0 means no retries.
	MaxRetries *int `yaml:"max_retries" doc:"Retries after a 408, 409, 429 or 5xx answer or a connection error (default 2; 0: none)." example:"2"`
	// MaxRetryDelay bounds the wait between attempts: the exponential
	// backoff (0.5 s, 1 s, 2 s, ... with jitter) is capped at it, and a
	// Retry-After longer than it ends the retries with the endpoint's
	// error. Default: openai-go's, 8 s of backoff and 2 min of Retry-After.
	MaxRetryDelay time.Duration `yaml:"max_retry_delay" doc:"Caps the backoff between attempts; a longer Retry-After ends the retries." example:"10s"`
	// Temperature is sent when set.
	Temperature *float64 `yaml:"temperature" doc:"Sent when set." example:"0.2"`
	// MaxTokens is sent as max_tokens when positive.
	MaxTokens int `yaml:"max_tokens" doc:"Sent as max_tokens when positive." example:"2048"`
	// ReasoningEffort (e.g. low, medium, high for gpt-oss) is sent when set.
	ReasoningEffort string `yaml:"reasoning_effort" doc:"Sent when set (e.g. low, medium, high for gpt-oss)." example:"low"`
	// Headers are sent with every request (e.g. a gateway's routing key).
	// An Authorization header here is replaced when APIKey is set.
	Headers map[string]string `yaml:"headers" doc:"Sent with every request, e.g. a gateway's routing key." example:"{X-Route: eval}"`
}

// WithEnv returns c with its empty BaseURL, APIKey and Model taken from
// OPENAI_BASE_URL, OPENAI_API_KEY and HOSTEVAL_MODEL. The CLI passes
// os.Getenv; values set in c always win.
func (c OpenAIConfig) WithEnv(getenv func(string) string) OpenAIConfig {
	if c.BaseURL == "" {
		c.BaseURL = getenv(EnvBaseURL)
	}
	if c.APIKey == "" {
		c.APIKey = getenv(EnvAPIKey)
	}
	if c.Model == "" {
		c.Model = getenv(EnvModel)
	}
	return c
}

// OpenAI is a model behind an OpenAI-compatible Chat Completions endpoint.
// It holds no conversation state and is safe for concurrent use.
//
// Retries, their exponential backoff and Retry-After (and Retry-After-Ms)
// are openai-go's own (internal/requestconfig: shouldRetry, retryDelay):
// it retries 408, 409, 429, 5xx and connection errors, waits what the
// server asks up to MaxRetryDelay, and otherwise 0.5 s * 2^n minus up to a
// quarter of jitter, capped at 8 s.
type OpenAI struct {
	cfg     OpenAIConfig
	timeout time.Duration
	chat    openai.ChatCompletionService
}

// NewOpenAI checks cfg and builds the client. It does not contact the
// endpoint. Errors are [yamlx.Problem]s naming the field, e.g. "model:
// required".
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	return newOpenAI(cfg, "")
}

func newOpenAI(cfg OpenAIConfig, prefix string) (*OpenAI, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, yamlx.Errorf(prefix+"model", "required (or set %s)", EnvModel)
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, yamlx.Errorf(prefix+"base_url", "%w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, yamlx.Errorf(prefix+"base_url", "%q is not an http or https URL", base)
	}
	retries := DefaultOpenAIMaxRetries
	if cfg.MaxRetries != nil {
		retries = *cfg.MaxRetries
	}
	switch {
	case retries < 0:
		return nil, yamlx.Errorf(prefix+"max_retries", "%d is negative", retries)
	case cfg.Timeout < 0:
		return nil, yamlx.Errorf(prefix+"timeout", "%s is negative", cfg.Timeout)
	case cfg.MaxRetryDelay < 0:
		return nil, yamlx.Errorf(prefix+"max_retry_delay", "%s is negative", cfg.MaxRetryDelay)
	case cfg.MaxTokens < 0:
		return nil, yamlx.Errorf(prefix+"max_tokens", "%d is negative", cfg.MaxTokens)
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultOpenAITimeout
	}
	// A ChatCompletionService built from explicit options only: openai.NewClient
	// would also read OPENAI_* variables, and a test or scenario must get
	// exactly the endpoint its configuration names.
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithMaxRetries(retries),
		option.WithRequestTimeout(timeout),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.MaxRetryDelay > 0 {
		opts = append(opts, option.WithMaxRetryDelay(cfg.MaxRetryDelay))
	}
	for k, v := range cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return &OpenAI{cfg: cfg, timeout: timeout, chat: openai.NewChatCompletionService(opts...)}, nil
}

// Name implements [Model]: "openai:<model>".
func (m *OpenAI) Name() string { return "openai:" + m.cfg.Model }

// EndpointError is a request the endpoint did not answer with a completion,
// after any retries: an HTTP error status, a connection failure, or an
// attempt that timed out.
type EndpointError struct {
	Model string
	// StatusCode is the HTTP status of the last attempt, 0 when no HTTP
	// answer came (connection error, timeout).
	StatusCode int
	// Message is the endpoint's error message, or what went wrong.
	Message string
	// Attempts counts the HTTP requests made.
	Attempts int
	Err      error
}

func (e *EndpointError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "openai:%s: ", e.Model)
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, "status %d", e.StatusCode)
		if t := http.StatusText(e.StatusCode); t != "" {
			fmt.Fprintf(&b, " %s", t)
		}
		if e.Message != "" {
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Message)
	if e.Attempts == 1 {
		b.WriteString(" (1 attempt)")
	} else {
		fmt.Fprintf(&b, " (%d attempts)", e.Attempts)
	}
	return b.String()
}

func (e *EndpointError) Unwrap() error { return e.Err }

// Next implements [Model]: one Chat Completions request (with retries).
// The request's ToolsJSON is sent as the body's "tools" value byte for byte.
// Tool names come back as the model wrote them, garbled or not: the host
// judges them.
func (m *OpenAI) Next(ctx context.Context, req Request) (Response, error) {
	params := openai.ChatCompletionNewParams{Model: m.cfg.Model}
	var err error
	if params.Messages, err = chatMessages(req.Messages); err != nil {
		return Response{}, fmt.Errorf("%s: %w", m.Name(), err)
	}
	tools, err := toolsArray(req)
	if err != nil {
		return Response{}, fmt.Errorf("%s: %w", m.Name(), err)
	}
	if tools != nil {
		params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{
			OfAuto: openai.String(string(openai.ChatCompletionToolChoiceOptionAutoAuto)),
		}
	}
	if m.cfg.Temperature != nil {
		params.Temperature = openai.Float(*m.cfg.Temperature)
	}
	if m.cfg.MaxTokens > 0 {
		params.MaxTokens = openai.Int(int64(m.cfg.MaxTokens))
	}
	if m.cfg.ReasoningEffort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(m.cfg.ReasoningEffort)
	}
	body, err := requestBody(params, tools)
	if err != nil {
		return Response{}, fmt.Errorf("%s: %w", m.Name(), err)
	}

	var (
		httpRes  *http.Response
		attempts int
	)
	// Middleware runs once per attempt, in the calling goroutine.
	countAttempts := option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		attempts++
		return next(r)
	})
	// The SDK serialises params itself; WithRequestBody replaces that with
	// our body, which differs only by the verbatim tools array.
	res, err := m.chat.New(ctx, params,
		option.WithRequestBody("application/json", body),
		option.WithResponseInto(&httpRes),
		countAttempts)
	if err != nil {
		return Response{}, m.endpointError(ctx, err, httpRes, attempts)
	}
	if len(res.Choices) == 0 {
		return Response{}, &EndpointError{Model: m.cfg.Model, Message: "the answer has no choices", Attempts: attempts}
	}
	msg := res.Choices[0].Message
	out := Response{Text: msg.Content}
	if out.Text == "" && len(msg.ToolCalls) == 0 {
		out.Text = msg.Refusal
	}
	id := callCount(req.Messages)
	for _, tc := range msg.ToolCalls {
		id++
		call := ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		if tc.Type == "custom" {
			call.Name, call.Arguments = tc.Custom.Name, tc.Custom.Input
		}
		if call.ID == "" {
			// Some local servers omit ids; the host needs one to tie the
			// tool message to its call.
			call.ID = fmt.Sprintf("call_%d", id)
		}
		out.ToolCalls = append(out.ToolCalls, call)
	}
	if res.JSON.Usage.Valid() {
		out.Usage = &record.Usage{
			PromptTokens:     int(res.Usage.PromptTokens),
			CompletionTokens: int(res.Usage.CompletionTokens),
			TotalTokens:      int(res.Usage.TotalTokens),
		}
	}
	return out, nil
}

func (m *OpenAI) endpointError(ctx context.Context, err error, res *http.Response, attempts int) error {
	if ctx.Err() != nil {
		// The caller gave up (case deadline, Ctrl-C): not the endpoint's fault.
		return fmt.Errorf("%s: %w", m.Name(), err)
	}
	e := &EndpointError{Model: m.cfg.Model, Attempts: attempts, Err: err}
	switch {
	case res != nil && res.StatusCode >= 400:
		e.StatusCode = res.StatusCode
		e.Message = errorMessage(res)
	case errors.Is(err, context.DeadlineExceeded):
		e.Message = fmt.Sprintf("no answer within %s", m.timeout)
	default:
		e.Message = err.Error()
	}
	return e
}

// maxErrorText bounds how much of an error body that is not JSON (an HTML
// page from a proxy) goes into an error message.
const maxErrorText = 300

// errorMessage reads the message out of an error answer. openai-go only
// understands {"error": {"message": ...}}; vLLM has also answered
// {"message": ...} and FastAPI {"detail": ...}.
func errorMessage(res *http.Response) string {
	if res.Body == nil {
		return ""
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return s
		case len(v.Detail) > 0:
			return string(v.Detail)
		}
	}
	text := strings.TrimSpace(string(body))
	if len(text) > maxErrorText {
		text = text[:maxErrorText] + "..."
	}
	return text
}

// callCount counts the tool calls already in the conversation.
func callCount(msgs []Message) int {
	n := 0
	for _, msg := range msgs {
		n += len(msg.ToolCalls)
	}
	return n
}

// chatMessages maps the conversation to Chat Completions messages: assistant
// tool calls keep their ids and raw argument text, tool messages their
// tool_call_id.
func chatMessages(msgs []Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(msgs))
	for i, msg := range msgs {
		switch msg.Role {
		case RoleSystem:
			out = append(out, openai.SystemMessage(msg.Content))
		case RoleUser:
			out = append(out, openai.UserMessage(msg.Content))
		case RoleTool:
			out = append(out, openai.ToolMessage(msg.Content, msg.ToolCallID))
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			// An assistant message that only calls tools has no content
			// (null), as the endpoint itself sent it.
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				a.Content.OfString = openai.String(msg.Content)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name:      c.Name,
							Arguments: c.Arguments,
						},
					},
				})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			return nil, fmt.Errorf("messages[%d]: unknown role %q", i, msg.Role)
		}
	}
	return out, nil
}

// toolsArray returns the tools array to send: the host's ToolsJSON as is,
// or, when a caller gave only Tools, their OpenAI rendering. It returns nil
// when there are no tools, because endpoints reject an empty tools array.
func toolsArray(req Request) (json.RawMessage, error) {
	if len(req.ToolsJSON) > 0 {
		var elems []json.RawMessage
		if err := json.Unmarshal(req.ToolsJSON, &elems); err != nil {
			return nil, fmt.Errorf("tools: not a JSON array: %w", err)
		}
		if len(elems) == 0 {
			return nil, nil
		}
		return bytes.TrimSpace(req.ToolsJSON), nil
	}
	if len(req.Tools) == 0 {
		return nil, nil
	}
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	type tool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	ts := make([]tool, 0, len(req.Tools))
	for _, t := range req.Tools {
		ts = append(ts, tool{Type: "function", Function: function{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	return marshalJSON(ts)
}

// requestBody is the params' JSON with the tools array spliced in
// verbatim. Going through a JSON encoder would compact it and escape <, >
// and &, and the host's measured bytes would no longer be the bytes sent.
func requestBody(params openai.ChatCompletionNewParams, tools json.RawMessage) ([]byte, error) {
	b, err := params.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	if tools == nil {
		return b, nil
	}
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, fmt.Errorf("encoding the request: not a JSON object: %.40q", b)
	}
	out := make([]byte, 0, len(b)+len(tools)+len(`,"tools":`))
	out = append(out, b[:len(b)-1]...)
	if len(bytes.TrimSpace(b[1:len(b)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"tools":`...)
	out = append(out, tools...)
	return append(out, '}'), nil
}
