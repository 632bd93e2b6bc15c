package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/hosteval/hosteval/internal/model/replay"
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
	// (local endpoints need none). It never enters a cassette or a record.
	APIKey string `yaml:"api_key" doc:"Sent as a bearer token (default OPENAI_API_KEY; none for local endpoints); it never enters a cassette or a record. Prefer the environment to a key in a file." example:"${OPENAI_API_KEY}"`
	// Model is the model name the endpoint serves, e.g. gpt-oss-120b. Required.
	Model string `yaml:"model" doc:"The model the endpoint serves (default HOSTEVAL_MODEL)." example:"gpt-oss-120b"`
	// Timeout bounds each attempt (one HTTP request). A timed-out attempt
	// is retried like a dropped connection. Default: DefaultOpenAITimeout.
	Timeout time.Duration `yaml:"timeout" doc:"Bounds each attempt (one HTTP request); a timed-out attempt is retried like a dropped connection (default 2m)." example:"60s"`
	// MaxRetries is how many times a request is retried after a transport
	// failure (connection error, timeout, 408, 409, 429, 5xx); nil means
	// DefaultOpenAIMaxRetries, 0 means no retries. A model's malformed
	// output, a configuration error and a refused request are never
	// retried.
	MaxRetries *int `yaml:"max_retries" doc:"Retries after a transport failure (connection error, timeout, 408, 409, 429, 5xx) (default 2; 0: none); a malformed answer, a configuration error and a refused request are never retried." example:"2"`
	// MaxRetryDelay bounds the wait between attempts: the exponential
	// backoff (0.5 s, 1 s, 2 s, ... with jitter) is capped at it, and a
	// Retry-After longer than it ends the retries with the endpoint's
	// error. Default: 8 s of backoff and 2 min of Retry-After.
	MaxRetryDelay time.Duration `yaml:"max_retry_delay" doc:"Caps the backoff between attempts; a longer Retry-After ends the retries." example:"10s"`
	// Temperature is sent when set.
	Temperature *float64 `yaml:"temperature" doc:"Sent when set." example:"0.2"`
	// MaxTokens bounds the completion when positive: sent as max_tokens,
	// or as max_completion_tokens to a reasoning model (see Reasoning).
	MaxTokens int `yaml:"max_tokens" doc:"Bounds the completion when positive: max_tokens, or max_completion_tokens to a reasoning model." example:"2048"`
	// ReasoningEffort (e.g. low, medium, high for gpt-oss) is sent when set.
	ReasoningEffort string `yaml:"reasoning_effort" doc:"Sent when set (e.g. low, medium, high for gpt-oss)." example:"low"`
	// Headers are sent with every request (e.g. a gateway's routing key).
	// An Authorization header here is replaced when APIKey is set. They
	// never enter a cassette.
	Headers map[string]string `yaml:"headers" doc:"Sent with every request, e.g. a gateway's routing key; they never enter a cassette." example:"{X-Route: eval}"`
	// Reasoning marks a reasoning model, to which MaxTokens is sent as
	// max_completion_tokens (OpenAI's API refuses max_tokens for them).
	// Unset, the model name decides: OpenAI's o1, o3, o4 and gpt-5
	// families are reasoning models, every other name gets max_tokens,
	// which vLLM, llama.cpp's server and Ollama all read (Ollama ignores
	// max_completion_tokens). Reasoning text is kept whatever this says.
	Reasoning *bool `yaml:"reasoning" doc:"Marks a reasoning model (max_tokens goes as max_completion_tokens); unset, the name decides (o1, o3, o4, gpt-5)." example:"true"`
	// Price, when set, gives every answer its cost (Response.Cost).
	Price *Price `yaml:"price" doc:"Prices per million tokens, so that every answer has its cost."`
	// Limits bound the requests of a whole run to this endpoint.
	Limits Limits `yaml:"limits" doc:"Bounds on the requests of a whole run to this endpoint."`
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

// reasoningNames are OpenAI's reasoning model families, by the name's last
// path element (so "openai/gpt-5-mini" is one).
var reasoningNames = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(o[1-9]|gpt-5)([-.:_]|$)`) })

// IsReasoning reports whether c's model gets max_completion_tokens: as
// Reasoning says, or by name when it is unset.
func (c OpenAIConfig) IsReasoning() bool {
	if c.Reasoning != nil {
		return *c.Reasoning
	}
	name := c.Model
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	return reasoningNames().MatchString(strings.ToLower(name))
}

// OpenAI is a model behind an OpenAI-compatible Chat Completions endpoint.
// It holds no conversation state and is safe for concurrent use.
//
// Each request goes through its [Wire]: the case's cassette first (replay
// answers from it, record appends to it), then the response cache, then
// the endpoint, within the endpoint's limits. An endpoint failure is
// classified ([FailureClass]): transport failures are retried with
// exponential backoff, honouring Retry-After and Retry-After-Ms and
// x-should-retry, and a 429 pauses every request of the run to that
// endpoint; the rest are not retried.
type OpenAI struct {
	cfg     OpenAIConfig
	url     string // the chat completions URL
	timeout time.Duration
	retries int
	header  http.Header
	client  *http.Client
	wire    Wire
	ep      *endpoint
	// library sends every request through openai-go's encoder and reads
	// every answer with its decoder, instead of the fast paths
	// (EndpointsOptions.Library).
	library bool
	// checked is the tools array checked last, shared by m's copies.
	checked *checkedTools
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
	if err := cfg.Limits.check(prefix); err != nil {
		return nil, err
	}
	if cfg.Price != nil {
		if err := cfg.Price.check(prefix); err != nil {
			return nil, err
		}
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultOpenAITimeout
	}
	header := http.Header{}
	for k, v := range cfg.Headers {
		header.Set(k, v)
	}
	header.Set("Content-Type", "application/json")
	header.Set("Accept", "application/json")
	header.Set("User-Agent", "hosteval")
	if cfg.APIKey != "" {
		header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	return &OpenAI{
		cfg:     cfg,
		url:     strings.TrimRight(u.String(), "/") + "/chat/completions",
		timeout: timeout,
		retries: retries,
		header:  header,
		client:  &http.Client{},
		ep:      newEndpoint(endpointName(cfg), cfg.Limits, cfg.MaxRetryDelay),
		checked: &checkedTools{},
	}, nil
}

// Name implements [Model]: "openai:<model>".
func (m *OpenAI) Name() string { return "openai:" + m.cfg.Model }

// Config returns the configuration m was built from.
func (m *OpenAI) Config() OpenAIConfig { return m.cfg }

// With returns a copy of m whose requests go through w: recorded or
// replayed by its cassette, answered by its cache, limited by its
// registry's endpoint (the first configuration of an endpoint sets its
// limits; see [Endpoints.Register]) and sent on the registry's
// connections. m itself is unchanged.
func (m *OpenAI) With(w Wire) *OpenAI {
	c := *m
	c.wire = w
	if w.Endpoints != nil {
		c.ep, _ = w.Endpoints.endpoint(m.cfg, false) // not strict: never fails
		c.client = w.Endpoints.client
		c.library = w.Endpoints.library
	}
	return &c
}

// Next implements [Model]: one Chat Completions request (with retries).
// The request's ToolsJSON is sent as the body's "tools" value byte for byte.
// Tool names come back as the model wrote them, garbled or not: the host
// judges them. A model's malformed output is a [*ModelOutputError], an
// endpoint failure an [*EndpointError], a request a replaying cassette
// does not hold a [*replay.Miss].
func (m *OpenAI) Next(ctx context.Context, req Request) (Response, error) {
	body, err := m.requestBody(req)
	if err != nil {
		return Response{}, fmt.Errorf("%s: %w", m.Name(), err)
	}
	ex, src, t, err := m.exchange(ctx, body)
	if err != nil {
		return Response{Attempts: t.attempts, Waited: t.waited}, err
	}
	out, err := m.answer(ex, t.parsed, callCount(req.Messages))
	out.Latency, out.Replayed, out.Attempts, out.Waited = ex.Latency, src, t.attempts, t.waited
	return out, err
}

// sampling sets the configured sampling parameters.
func (m *OpenAI) sampling(params *openai.ChatCompletionNewParams) {
	if m.cfg.Temperature != nil {
		params.Temperature = openai.Float(*m.cfg.Temperature)
	}
	if m.cfg.MaxTokens > 0 {
		if m.cfg.IsReasoning() {
			params.MaxCompletionTokens = openai.Int(int64(m.cfg.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(m.cfg.MaxTokens))
		}
	}
	if m.cfg.ReasoningEffort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(m.cfg.ReasoningEffort)
	}
}

// tries is what getting one answer from the endpoint took: the HTTP
// requests made, and the time spent waiting between and before them
// (backoff, Retry-After, the endpoint's limits and a 429's pause).
type tries struct {
	attempts int
	waited   time.Duration
	// parsed is the completion as send parsed it to check it, so that
	// answer does not parse it again; nil for an answer that did not
	// come from the endpoint or is no completion.
	parsed *chatAnswer
}

// exchange gets the answer to a request body: from the cassette, the cache
// or the endpoint, recording what did not come from the cassette. The
// answer is a completion (status 200) or the model's malformed output
// (the endpoint's error answer, kept so that a replay scores it the same).
// tries is zero for an answer that did not come from the endpoint.
func (m *OpenAI) exchange(ctx context.Context, body []byte) (replay.Exchange, Source, tries, error) {
	c := m.wire.Cassette
	if c != nil {
		ex, ok, err := c.Find(body)
		if err != nil {
			return replay.Exchange{}, FromEndpoint, tries{}, fmt.Errorf("%s: %w", m.Name(), err)
		}
		if ok {
			return ex, FromCassette, tries{}, nil
		}
	}
	src := FromCache
	ex, ok := replay.Exchange{}, false
	// A recording is of the endpoint: a case that records (or appends
	// to its cassette) sends every request, and keeps the answer in the
	// cache too, but never takes one from it.
	if m.wire.Cache != nil && (c == nil || c.Mode() == replay.Replay) {
		ex, ok = m.wire.Cache.Get(m.cacheEndpoint(), body)
	}
	var t tries
	if !ok {
		var err error
		if ex, t, err = m.send(ctx, body); err != nil {
			return replay.Exchange{}, FromEndpoint, t, err
		}
		src = FromEndpoint
		// The model's errors are not kept (an error status, a choice
		// without a message): the next request may go better.
		if m.wire.Cache != nil && ex.Status == http.StatusOK && t.parsed != nil && t.parsed.message {
			_ = m.wire.Cache.Put(m.cacheEndpoint(), ex) // a failed write is counted in the cache's stats
		}
	}
	if c != nil {
		if err := c.Add(ex); err != nil {
			return replay.Exchange{}, FromEndpoint, t, fmt.Errorf("%s: %w", m.Name(), err)
		}
	}
	return ex, src, t, nil
}

// cacheEndpoint is the URL the response cache keys m's answers on: its
// chat completions URL without a user or password.
func (m *OpenAI) cacheEndpoint() string {
	u, err := url.Parse(m.url)
	if err != nil {
		return m.url
	}
	u.User = nil
	return u.String()
}

// maxAnswerBytes bounds an answer body; a completion is far smaller.
const maxAnswerBytes = 32 << 20

// send posts the body to the endpoint, retrying transport failures, and
// says what that took.
func (m *OpenAI) send(ctx context.Context, body []byte) (replay.Exchange, tries, error) {
	estimate := len(body)/4 + m.cfg.MaxTokens
	var t tries
	for attempt := 1; ; attempt++ {
		t.attempts = attempt
		waiting := time.Now()
		release, err := m.ep.acquire(ctx, estimate)
		t.waited += time.Since(waiting)
		if err != nil {
			return replay.Exchange{}, t, fmt.Errorf("%s: %w", m.Name(), err)
		}
		status, header, answer, latency, err := m.post(ctx, body)
		var (
			res  chatAnswer
			perr error
		)
		if err == nil && status == http.StatusOK {
			res, perr = parseCompletion(answer, m.library)
		}
		if err == nil && status == http.StatusOK && perr == nil {
			release(usageTokens(res))
		} else {
			release(usedTokens(status, answer))
		}
		if ctx.Err() != nil {
			// The caller gave up (case deadline, Ctrl-C): not the endpoint's fault.
			return replay.Exchange{}, t, fmt.Errorf("%s: %w", m.Name(), ctx.Err())
		}
		e := &EndpointError{Model: m.cfg.Model, Class: FailureTransport, StatusCode: status, Attempts: attempt, Err: err}
		switch {
		case err != nil && errors.Is(err, context.DeadlineExceeded):
			e.Message = fmt.Sprintf("no answer within %s", m.timeout)
		case err != nil:
			e.Message = err.Error()
		case status == http.StatusOK:
			if perr != nil {
				e.Message = perr.Error()
				break
			}
			// An answer whose choice has no message (message: null) is
			// kept as it came, like any completion: answer scores it as
			// the model's error.
			m.ep.succeeded()
			t.parsed = &res
			return replay.Exchange{Request: body, Status: status, Response: answer, Latency: latency}, t, nil
		default:
			e.Message = errorMessage(answer)
			e.Class = classify(status, e.Message)
		}
		if e.Class == FailureModelOutput {
			return replay.Exchange{Request: body, Status: status, Response: answer, Latency: latency}, t, nil
		}
		retry := e.Class == FailureTransport
		switch header.Get("X-Should-Retry") {
		case "true":
			retry = e.Class != FailureConfig
		case "false":
			retry = false
		}
		wait, given, tooLong := retryAfter(header, m.maxRetryAfter())
		if status == http.StatusTooManyRequests {
			// The pause holds every request to the endpoint, this one
			// included: acquire waits for it.
			m.ep.throttled(min(wait, defaultMaxRetryAfter), given)
		}
		if tooLong && retry && attempt <= m.retries {
			// Said, since it is why a retry the endpoint asked for was
			// not made.
			e.TooLong = &TooLongWait{Asked: wait, Cap: m.maxRetryAfter(), Capped: m.cfg.MaxRetryDelay > 0}
		}
		if !retry || attempt > m.retries || tooLong {
			e.Waited = t.waited
			return replay.Exchange{}, t, e
		}
		if status == http.StatusTooManyRequests {
			continue
		}
		if !given {
			wait = backoff(attempt-1, m.cfg.MaxRetryDelay)
		}
		sleeping := time.Now()
		err = sleep(ctx, wait)
		t.waited += time.Since(sleeping)
		if err != nil {
			return replay.Exchange{}, t, fmt.Errorf("%s: %w", m.Name(), err)
		}
	}
}

// post makes one attempt: the HTTP status, headers and body of the
// answer, and how long it took.
func (m *OpenAI) post(ctx context.Context, body []byte) (int, http.Header, []byte, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, 0, err
	}
	req.Header = m.header.Clone()
	start := time.Now()
	res, err := m.client.Do(req)
	if err != nil {
		return 0, nil, nil, time.Since(start), err
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	// To the microsecond, as a cassette keeps it, so that a replay reports
	// the very figure the recording did.
	latency := time.Since(start).Truncate(time.Microsecond)
	if err != nil {
		return 0, nil, nil, latency, err
	}
	return res.StatusCode, res.Header, answer, latency, nil
}

func (m *OpenAI) maxRetryAfter() time.Duration {
	if m.cfg.MaxRetryDelay > 0 {
		return m.cfg.MaxRetryDelay
	}
	return defaultMaxRetryAfter
}

// Defaults of the waits between attempts, as openai-go has them.
const (
	defaultMaxBackoff    = 8 * time.Second
	defaultMaxRetryAfter = 2 * time.Minute
	// maxRetryAfterRead bounds a Retry-After as read (no duration
	// overflows).
	maxRetryAfterRead = 24 * time.Hour
)

// backoff is 0.5 s * 2^n, capped at limit (default 8 s), less up to a
// quarter of jitter.
func backoff(n int, limit time.Duration) time.Duration {
	if limit <= 0 {
		limit = defaultMaxBackoff
	}
	d := min(500*time.Millisecond<<min(n, 20), limit)
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}

// retryAfter reads the wait an answer asks for: Retry-After-Ms, or
// Retry-After in seconds or as an HTTP date (at most a day). tooLong
// reports a wait beyond limit, which ends the retries (the wait is still
// returned, for the endpoint's pause and the error's words).
func retryAfter(h http.Header, limit time.Duration) (wait time.Duration, given, tooLong bool) {
	if h == nil {
		return 0, false, false
	}
	for _, name := range []string{"Retry-After-Ms", "Retry-After"} {
		v := h.Get(name)
		if v == "" {
			continue
		}
		unit := time.Second
		if name == "Retry-After-Ms" {
			unit = time.Millisecond
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && !math.IsInf(f, 0) {
			d := time.Duration(min(f*float64(unit), float64(maxRetryAfterRead)))
			return d, true, d > limit
		}
		if t, err := http.ParseTime(v); err == nil {
			d := min(max(time.Until(t), 0), maxRetryAfterRead)
			return d, true, d > limit
		}
	}
	return 0, false, false
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// usageTokens is a parsed completion's total_tokens, 0 when unknown.
func usageTokens(res chatAnswer) int {
	if res.usage == nil {
		return 0
	}
	return int(res.usage.total)
}

// usedTokens reads total_tokens from an answer that did not parse as a
// completion, 0 when unknown.
func usedTokens(status int, answer []byte) int {
	if status != http.StatusOK {
		return 0
	}
	var v struct {
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(answer, &v)
	return v.Usage.TotalTokens
}

// answer reads the model's message out of an exchange, parsed already
// when parsed is not nil. priorCalls counts the calls already in the
// conversation, to number calls without an id.
func (m *OpenAI) answer(ex replay.Exchange, parsed *chatAnswer, priorCalls int) (Response, error) {
	if ex.Status != http.StatusOK {
		return Response{}, &ModelOutputError{Model: m.cfg.Model, StatusCode: ex.Status, Message: errorMessage(ex.Response)}
	}
	if parsed == nil {
		res, err := parseCompletion(ex.Response, m.library)
		if err != nil {
			// Only a cassette edited by hand gets here: send checks answers.
			return Response{}, &EndpointError{Model: m.cfg.Model, Class: FailureTransport, Message: err.Error(), Attempts: 1}
		}
		parsed = &res
	}
	res := parsed
	if !res.message {
		// A completion without a message is no answer, not an empty one:
		// the endpoint generated something it could not give back (vLLM
		// does so when its reasoning parser swallows the whole output).
		return Response{FinishReason: res.finish}, &ModelOutputError{
			Model: m.cfg.Model, StatusCode: http.StatusOK, Message: "the answer's choice has no message (message: " + orMissing(res.messageRaw) + ")",
		}
	}
	out := Response{Text: res.content, Reasoning: res.reasoning, FinishReason: res.finish}
	if out.Text == "" && len(res.calls) == 0 {
		out.Text = res.refusal
	}
	id := priorCalls
	for _, tc := range res.calls {
		id++
		call := ToolCall{ID: tc.id, Name: tc.name, Arguments: tc.arguments}
		if tc.typ == "custom" {
			call.Name, call.Arguments = tc.customName, tc.customInput
		}
		if call.ID == "" {
			// Some local servers omit ids; the host needs one to tie the
			// tool message to its call.
			call.ID = fmt.Sprintf("call_%d", id)
		}
		out.ToolCalls = append(out.ToolCalls, call)
	}
	if u := res.usage; u != nil {
		out.Usage = &record.Usage{
			PromptTokens:     int(u.prompt),
			CompletionTokens: int(u.completion),
			TotalTokens:      int(u.total),
		}
		out.CachedPromptTokens = int(u.cached)
	}
	if m.cfg.Price != nil {
		out.Cost = m.cfg.Price.Cost(out.Usage, out.CachedPromptTokens)
	}
	return out, nil
}

// orMissing is a JSON value's raw text, "missing" when it was omitted.
func orMissing(raw string) string {
	if raw == "" {
		return "missing"
	}
	return raw
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
		// Checked, not decoded: the array is sent as it is, and decoding
		// it into its elements on every request was a twentieth of a
		// run's CPU against a fast endpoint.
		tools := bytes.TrimSpace(req.ToolsJSON)
		if len(tools) > 0 && tools[0] == '[' && json.Valid(tools) {
			if len(bytes.TrimSpace(tools[1:len(tools)-1])) == 0 {
				return nil, nil
			}
			return tools, nil
		}
		// Not an array (null is none): as the decoder says.
		var elems []json.RawMessage
		if err := json.Unmarshal(req.ToolsJSON, &elems); err != nil {
			return nil, fmt.Errorf("tools: not a JSON array: %w", err)
		}
		return nil, nil
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

// spliceTools is the params' JSON with the tools array spliced in
// verbatim. Going through a JSON encoder would compact it and escape <, >
// and &, and the host's measured bytes would no longer be the bytes sent.
func spliceTools(params openai.ChatCompletionNewParams, tools json.RawMessage) ([]byte, error) {
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
