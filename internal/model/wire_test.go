package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hosteval/hosteval/internal/model/replay"
	"github.com/hosteval/hosteval/internal/record"
)

// toolCallReply calls cmdb__get_asset, with reasoning, as vLLM serving
// gpt-oss answers.
var toolCallReply = reply{body: `{"id":"chatcmpl-7","object":"chat.completion","created":1767225600,"model":"gpt-oss-120b",` +
	`"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"reasoning_content":"Look it up.",` +
	`"tool_calls":[{"id":"chatcmpl-tool-1","type":"function","function":{"name":"cmdb__get_asset","arguments":"{\"hostname\":\"jump-prod-02\"}"}}]}}],` +
	`"usage":{"prompt_tokens":500,"completion_tokens":20,"total_tokens":520,"prompt_tokens_details":{"cached_tokens":384}}}`}

// turn runs the two requests of one question: the call, then the answer.
func turn(ctx context.Context, m Model, tools string) ([]Response, error) {
	msgs := []Message{{Role: RoleSystem, Content: "You are the help desk's assistant."}, {Role: RoleUser, Content: "Who owns jump-prod-02?"}}
	var out []Response
	for range 2 {
		res, err := m.Next(ctx, Request{Messages: msgs, ToolsJSON: json.RawMessage(tools)})
		if err != nil {
			return out, err
		}
		out = append(out, res)
		msgs = append(msgs, Message{Role: RoleAssistant, Content: res.Text, ToolCalls: res.ToolCalls})
		for _, c := range res.ToolCalls {
			msgs = append(msgs, Message{Role: RoleTool, ToolCallID: c.ID, Content: `{"hostname":"jump-prod-02","owner":"platform"}`})
		}
	}
	return out, nil
}

// TestCassetteRecordReplay records a turn against an endpoint with an API
// key and secret headers, checks that no secret is in the cassette, and
// replays it with the endpoint gone: the same answers, usage, reasoning,
// cost and latency, marked replayed.
func TestCassetteRecordReplay(t *testing.T) {
	const key, gatewayKey = "sk-live-8f2b7c1d9e", "gw-secret-41aa"
	srv := newChatServer(t, toolCallReply, okReply(okText))
	path := filepath.Join(t.TempDir(), "cases", "help-desk.yaml")
	cfg := OpenAIConfig{
		APIKey:  key,
		Headers: map[string]string{"X-Gateway-Key": gatewayKey, "Authorization": "Bearer " + gatewayKey},
		Price:   &Price{InputPerMTok: 1, OutputPerMTok: 4, CachedInputPerMTok: ptr(0.25)},
	}
	rec, err := replay.Open(path, replay.Record)
	if err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	cache, err := replay.OpenCache(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := turn(context.Background(), newTestOpenAI(t, srv, cfg).With(Wire{Cassette: rec, Cache: cache}), toolsJSON)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.header(0).Get("Authorization"); got != "Bearer "+key {
		t.Fatalf("Authorization sent = %q, want the API key's", got)
	}
	cached, err := filepath.Glob(filepath.Join(cacheDir, "*", "*.json"))
	if err != nil || len(cached) != 2 {
		t.Fatalf("cache entries = %v, %v; want 2", cached, err)
	}
	for _, file := range append(cached, path) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{key, gatewayKey, "Authorization", "X-Gateway-Key", srv.URL} {
			if strings.Contains(string(data), secret) {
				t.Errorf("%s holds %q:\n%s", file, secret, data)
			}
		}
	}
	want0 := Response{
		ToolCalls:          []ToolCall{{ID: "chatcmpl-tool-1", Name: "cmdb__get_asset", Arguments: `{"hostname":"jump-prod-02"}`}},
		Usage:              &record.Usage{PromptTokens: 500, CompletionTokens: 20, TotalTokens: 520},
		CachedPromptTokens: 384,
		Cost:               (116*1 + 384*0.25 + 20*4) / 1e6,
		Reasoning:          "Look it up.",
		FinishReason:       "tool_calls",
	}
	if diff := cmp.Diff(want0, recorded[0], ignoreLatency); diff != "" {
		t.Errorf("recorded answer mismatch (-want +got):\n%s", diff)
	}

	srv.Close() // replay never needs it
	rep, err := replay.Open(path, replay.Replay)
	if err != nil {
		t.Fatal(err)
	}
	replayed, err := turn(context.Background(), newTestOpenAI(t, srv, cfg).With(Wire{Cassette: rep}), toolsJSON)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recorded {
		if recorded[i].Replayed != FromEndpoint || replayed[i].Replayed != FromCassette {
			t.Errorf("answer %d: Replayed = %q then %q, want %q then %q", i+1, recorded[i].Replayed, replayed[i].Replayed, FromEndpoint, FromCassette)
		}
		if recorded[i].Latency <= 0 {
			t.Errorf("answer %d: recorded Latency = %s, want the endpoint's time", i+1, recorded[i].Latency)
		}
		replayed[i].Replayed = FromEndpoint
		if diff := cmp.Diff(recorded[i], replayed[i], ignoreWaits); diff != "" {
			t.Errorf("answer %d: replayed differs from recorded (-recorded +replayed):\n%s", i+1, diff)
		}
	}
}

// TestCassetteStrictReplay: a changed tool description fails with what
// changed, and nothing reaches the endpoint.
func TestCassetteStrictReplay(t *testing.T) {
	srv := newChatServer(t, toolCallReply, okReply(okText))
	path := filepath.Join(t.TempDir(), "c.yaml")
	rec, _ := replay.Open(path, replay.Record)
	if _, err := turn(context.Background(), newTestOpenAI(t, srv, OpenAIConfig{}).With(Wire{Cassette: rec}), toolsJSON); err != nil {
		t.Fatal(err)
	}
	before := srv.requests()
	rep, err := replay.Open(path, replay.Replay)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(toolsJSON, "Get one asset by hostname", "Fetch one asset by its hostname", 1)
	_, err = turn(context.Background(), newTestOpenAI(t, srv, OpenAIConfig{}).With(Wire{Cassette: rep}), changed)
	var miss *replay.Miss
	if !errors.As(err, &miss) {
		t.Fatalf("error = %v (%T), want a *replay.Miss", err, err)
	}
	if !strings.HasPrefix(err.Error(), "openai:gpt-oss-120b: cassette ") ||
		!strings.Contains(err.Error(), `request 1 is not recorded; against recorded request 1: tool cmdb__get_asset: description changed: "[cmdb] Get one asset by hostname. Use it`) {
		t.Errorf("error = %v\nwant it to say the description of cmdb__get_asset changed", err)
	}
	if n := srv.requests(); n != before {
		t.Errorf("the endpoint saw %d requests during a strict replay, want none", n-before)
	}
}

// TestCassetteFallback replays what is recorded and records the rest.
func TestCassetteFallback(t *testing.T) {
	srv := newChatServer(t, toolCallReply, okReply(okText))
	path := filepath.Join(t.TempDir(), "c.yaml")
	c, _ := replay.Open(path, replay.Fallback)
	m := newTestOpenAI(t, srv, OpenAIConfig{})
	first, err := m.With(Wire{Cassette: c}).Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "one"}}})
	if err != nil || first.Replayed != FromEndpoint {
		t.Fatalf("first = %+v, %v; want it from the endpoint", first, err)
	}
	c, _ = replay.Open(path, replay.Fallback)
	again, err := m.With(Wire{Cassette: c}).Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "one"}}})
	if err != nil || again.Replayed != FromCassette {
		t.Fatalf("again = %+v, %v; want it replayed", again, err)
	}
	other, err := m.With(Wire{Cassette: c}).Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "two"}}})
	if err != nil || other.Replayed != FromEndpoint {
		t.Fatalf("other = %+v, %v; want it from the endpoint", other, err)
	}
	if n := srv.requests(); n != 2 {
		t.Errorf("endpoint saw %d requests, want 2", n)
	}
	if rep, rec := c.Stats(); rep != 1 || rec != 1 {
		t.Errorf("Stats() = %d, %d; want 1 replayed, 1 recorded", rep, rec)
	}
}

// TestCassetteModelOutputError: a model's malformed output is recorded
// and replays as the same error, so that a replayed run scores it too.
func TestCassetteModelOutputError(t *testing.T) {
	srv := newChatServer(t, reply{status: 500, body: `{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}`})
	path := filepath.Join(t.TempDir(), "c.yaml")
	req := Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}, ToolsJSON: json.RawMessage(toolsJSON)}
	var errs []error
	for _, mode := range []replay.Mode{replay.Record, replay.Replay} {
		c, err := replay.Open(path, mode)
		if err != nil {
			t.Fatal(err)
		}
		res, err := newTestOpenAI(t, srv, OpenAIConfig{}).With(Wire{Cassette: c}).Next(context.Background(), req)
		var me *ModelOutputError
		if !errors.As(err, &me) {
			t.Fatalf("%s: error = %v (%T), want a *ModelOutputError", mode, err, err)
		}
		if res.Latency <= 0 {
			t.Errorf("%s: Latency = %s, want the time the endpoint took to fail", mode, res.Latency)
		}
		errs = append(errs, err)
	}
	if errs[0].Error() != errs[1].Error() {
		t.Errorf("replayed error %q, recorded %q", errs[1], errs[0])
	}
	if n := srv.requests(); n != 1 {
		t.Errorf("endpoint saw %d requests, want 1 (no retry, no request on replay)", n)
	}
}

func TestResponseCache(t *testing.T) {
	srv := newChatServer(t, toolCallReply)
	cache, err := replay.OpenCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Messages: []Message{{Role: RoleUser, Content: "Who owns jump-prod-02?"}}, ToolsJSON: json.RawMessage(toolsJSON)}
	var got []Response
	for range 2 {
		// A fresh model each time, as each case of a run has its own.
		res, err := newTestOpenAI(t, srv, OpenAIConfig{}).With(Wire{Cache: cache}).Next(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res)
	}
	if n := srv.requests(); n != 1 {
		t.Errorf("endpoint saw %d requests, want 1", n)
	}
	if got[0].Replayed != FromEndpoint || got[1].Replayed != FromCache {
		t.Errorf("Replayed = %q, %q; want %q, %q", got[0].Replayed, got[1].Replayed, FromEndpoint, FromCache)
	}
	got[1].Replayed = FromEndpoint
	if diff := cmp.Diff(got[0], got[1], ignoreWaits); diff != "" {
		t.Errorf("cached answer differs (-live +cached):\n%s", diff)
	}
	if s := cache.Stats(); s.Hits != 1 || s.Misses != 1 {
		t.Errorf("cache stats = %+v, want 1 hit, 1 miss", s)
	}

	// An error answer is not cached: the next run asks again.
	failing := newChatServer(t, reply{status: 500, body: `{"error":{"message":"error parsing tool call: raw='{', err=unexpected end of JSON input","type":"api_error"}}`})
	other := Request{Messages: []Message{{Role: RoleUser, Content: "again"}}}
	for range 2 {
		if _, err := newTestOpenAI(t, failing, OpenAIConfig{}).With(Wire{Cache: cache}).Next(context.Background(), other); err == nil {
			t.Fatal("no error")
		}
	}
	if n := failing.requests(); n != 2 {
		t.Errorf("endpoint saw %d requests, want 2", n)
	}
}

func TestMaxCompletionTokens(t *testing.T) {
	tests := []struct {
		model     string
		reasoning *bool
		want      string
	}{
		{"gpt-oss-120b", nil, "max_tokens"},
		{"gpt-oss:20b", nil, "max_tokens"},
		{"o3-mini", nil, "max_completion_tokens"},
		{"o1", nil, "max_completion_tokens"},
		{"openai/gpt-5-mini", nil, "max_completion_tokens"},
		{"gpt-5", nil, "max_completion_tokens"},
		{"gpt-4o", nil, "max_tokens"},
		{"omni-7b", nil, "max_tokens"},
		{"gpt-oss-120b", ptr(true), "max_completion_tokens"},
		{"o3-mini", ptr(false), "max_tokens"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.model, tt.reasoning != nil), func(t *testing.T) {
			srv := newChatServer(t)
			m := newTestOpenAI(t, srv, OpenAIConfig{Model: tt.model, MaxTokens: 512, Reasoning: tt.reasoning})
			if _, err := m.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}); err != nil {
				t.Fatal(err)
			}
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(srv.body(0), &fields); err != nil {
				t.Fatal(err)
			}
			other := map[string]string{"max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens"}[tt.want]
			if string(fields[tt.want]) != "512" || fields[other] != nil {
				t.Errorf("sent %s = %s and %s = %s; want %s = 512 only", tt.want, fields[tt.want], other, fields[other], tt.want)
			}
		})
	}
}

func TestPriceCost(t *testing.T) {
	u := &record.Usage{PromptTokens: 1_000_000, CompletionTokens: 200_000, TotalTokens: 1_200_000}
	tests := []struct {
		name   string
		price  Price
		cached int
		want   float64
	}{
		{"no cache", Price{InputPerMTok: 0.15, OutputPerMTok: 0.6}, 0, 0.15 + 0.12},
		{"cached priced as input without a cached price", Price{InputPerMTok: 0.15, OutputPerMTok: 0.6}, 400_000, 0.15 + 0.12},
		{"cached at its price", Price{InputPerMTok: 0.15, OutputPerMTok: 0.6, CachedInputPerMTok: ptr(0.075)}, 400_000, 0.6*0.15 + 0.4*0.075 + 0.12},
		{"free cache", Price{InputPerMTok: 1, OutputPerMTok: 2, CachedInputPerMTok: ptr(0.0)}, 1_000_000, 0.4},
		{"cached beyond the prompt", Price{InputPerMTok: 1, OutputPerMTok: 0, CachedInputPerMTok: ptr(0.0)}, 5_000_000, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.price.Cost(u, tt.cached); fmt.Sprintf("%.9f", got) != fmt.Sprintf("%.9f", tt.want) {
				t.Errorf("Cost = %.9f, want %.9f", got, tt.want)
			}
		})
	}
	if got := (Price{InputPerMTok: 1}).Cost(nil, 0); got != 0 {
		t.Errorf("Cost(nil) = %g, want 0", got)
	}
	if _, err := NewOpenAI(OpenAIConfig{Model: "m", Price: &Price{InputPerMTok: -1}}); err == nil || err.Error() != "price.input_per_mtok: -1 is negative" {
		t.Errorf("NewOpenAI with a negative price: error = %v", err)
	}
}

// limitServer answers after a pause and counts the requests in flight.
type limitServer struct {
	*httptest.Server
	delay    time.Duration
	inFlight atomic.Int32
	maxSeen  atomic.Int32
	mu       sync.Mutex
	arrivals []time.Time
	answer   func(n int) (int, map[string]string) // status and headers of the n-th request (from 0)
}

func newLimitServer(t *testing.T, delay time.Duration) *limitServer {
	s := &limitServer{delay: delay}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		for {
			m := s.maxSeen.Load()
			if n <= m || s.maxSeen.CompareAndSwap(m, n) {
				break
			}
		}
		s.mu.Lock()
		i := len(s.arrivals)
		s.arrivals = append(s.arrivals, time.Now())
		s.mu.Unlock()
		time.Sleep(s.delay)
		status := 200
		if s.answer != nil {
			var h map[string]string
			status, h = s.answer(i)
			for k, v := range h {
				w.Header().Set(k, v)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if status == 200 {
			w.Write([]byte(completion(okText, `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`)))
		} else {
			w.Write([]byte(`{"error":{"message":"rate limited"}}`))
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *limitServer) times() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.arrivals...)
}

// models returns n models of separate cases sharing one registry.
func (s *limitServer) models(t *testing.T, n int, l Limits, reg *Endpoints) []*OpenAI {
	out := make([]*OpenAI, n)
	for i := range out {
		m, err := NewOpenAI(OpenAIConfig{BaseURL: s.URL + "/v1", Model: "gpt-oss-120b", Limits: l, MaxRetryDelay: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = m.With(Wire{Endpoints: reg})
	}
	return out
}

func askAll(t *testing.T, ms []*OpenAI) {
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() {
			if _, err := m.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: fmt.Sprint("q", i)}}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func TestEndpointConcurrency(t *testing.T) {
	s := newLimitServer(t, 50*time.Millisecond)
	reg := NewEndpoints(nil)
	askAll(t, s.models(t, 6, Limits{Concurrency: 2}, reg))
	if got := s.maxSeen.Load(); got != 2 {
		t.Errorf("at most %d requests were in flight, want 2 (6 cases, concurrency 2)", got)
	}
	st := reg.Stats()
	if len(st) != 1 || st[0].Requests != 6 || st[0].Endpoint != s.URL+"/v1 gpt-oss-120b" {
		t.Errorf("Stats() = %+v, want one endpoint with 6 requests", st)
	}
}

func TestEndpointRequestsPerMinute(t *testing.T) {
	// 1200 a minute is one every 50 ms: four requests take at least 150 ms
	// however fast the machine.
	s := newLimitServer(t, 0)
	start := time.Now()
	askAll(t, s.models(t, 4, Limits{RequestsPerMinute: 1200}, NewEndpoints(nil)))
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("4 requests at 1200/min took %s, want at least 150ms", d)
	}
}

func TestEndpointTokensPerMinute(t *testing.T) {
	// 6000 tokens a minute is 100 a second with a burst of 6000. A request
	// is charged its estimate (bytes / 4 + max_tokens, about 3010 here)
	// before it is sent: the first takes 3010 of the burst, the second
	// must wait for the 20 or so missing, at least 100 ms at 100 a second.
	s := newLimitServer(t, 0)
	m, err := NewOpenAI(OpenAIConfig{BaseURL: s.URL + "/v1", Model: "gpt-oss-120b", MaxTokens: 2990, Limits: Limits{TokensPerMinute: 6000}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := m.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
	}
	at := s.times()
	if gap := at[1].Sub(at[0]); gap < 100*time.Millisecond {
		t.Errorf("the second request came %s after the first, want at least 100ms", gap)
	}
}

// TestEndpoint429SlowsEveryCase: a case's 429 with Retry-After pauses its
// own retry and the requests of every other case to that endpoint.
func TestEndpoint429SlowsEveryCase(t *testing.T) {
	s := newLimitServer(t, 0)
	s.answer = func(n int) (int, map[string]string) {
		if n == 0 {
			return 429, map[string]string{"Retry-After": "0.4"}
		}
		return 200, nil
	}
	reg := NewEndpoints(nil)
	ms := s.models(t, 2, Limits{}, reg)
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := ms[0].Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "first"}}}); err != nil {
			t.Error(err)
		}
	})
	// The second case asks once the first one's 429 is in.
	for throttled := int64(0); throttled == 0; time.Sleep(time.Millisecond) {
		if st := reg.Stats(); len(st) == 1 {
			throttled = st[0].Throttled
		}
		if len(s.times()) > 1 {
			t.Fatal("the first case retried before the registry saw its 429")
		}
	}
	if _, err := ms[1].Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "second"}}}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	at := s.times()
	if len(at) != 3 {
		t.Fatalf("server saw %d requests, want 3 (a 429, its retry, the other case's)", len(at))
	}
	for i := 1; i < 3; i++ {
		if gap := at[i].Sub(at[0]); gap < 400*time.Millisecond {
			t.Errorf("request %d came %s after the 429, want at least the 400ms asked", i+1, gap)
		}
	}
	if st := reg.Stats(); st[0].Throttled != 1 || st[0].Requests != 3 {
		t.Errorf("Stats() = %+v, want 1 throttled of 3", st)
	}
}

// TestEndpointBackoffWithoutRetryAfter: 429s in a row double the pause,
// and halve a configured request rate until successes restore it.
func TestEndpointBackoffWithoutRetryAfter(t *testing.T) {
	e := newEndpoint("x", Limits{RequestsPerMinute: 600}, time.Minute)
	var pauses []time.Duration
	for range 3 {
		pauses = append(pauses, e.throttled(0, false))
	}
	for i, want := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second} {
		if pauses[i] > want || pauses[i] < want*3/4 {
			t.Errorf("pause %d = %s, want %s less up to a quarter", i+1, pauses[i], want)
		}
	}
	if got := e.reqRate.Limit(); got != e.configured/8 {
		t.Errorf("rate after three 429s = %v, want %v", got, e.configured/8)
	}
	for range 20 {
		e.succeeded()
	}
	if got := e.reqRate.Limit(); got != e.configured {
		t.Errorf("rate after successes = %v, want %v restored", got, e.configured)
	}
	if p := newEndpoint("y", Limits{}, 0).throttled(0, false); p > maxThrottleBackoff {
		t.Errorf("pause = %s, want at most %s", p, maxThrottleBackoff)
	}
}

func TestEndpointsRegister(t *testing.T) {
	reg := NewEndpoints(nil)
	a := OpenAIConfig{BaseURL: "http://vllm:8000/v1/", Model: "gpt-oss-120b", Limits: Limits{Concurrency: 4}}
	if err := reg.Register(a); err != nil {
		t.Fatal(err)
	}
	same := a
	same.BaseURL = "http://vllm:8000/v1"
	if err := reg.Register(same); err != nil {
		t.Errorf("Register of the same limits: %v", err)
	}
	none := a
	none.Limits = Limits{}
	if err := reg.Register(none); err != nil {
		t.Errorf("Register without limits: %v", err)
	}
	other := a
	other.Limits = Limits{Concurrency: 2}
	err := reg.Register(other)
	if err == nil || !strings.Contains(err.Error(), "endpoint http://vllm:8000/v1 gpt-oss-120b: limits") {
		t.Errorf("Register of other limits: error = %v, want one naming the endpoint", err)
	}
	otherModel := other
	otherModel.Model = "gpt-oss-20b"
	if err := reg.Register(otherModel); err != nil {
		t.Errorf("another model of the same server is another endpoint: %v", err)
	}
	if _, err := NewOpenAI(OpenAIConfig{Model: "m", Limits: Limits{RequestsPerMinute: -1}}); err == nil || err.Error() != "limits.requests_per_minute: -1 is negative" {
		t.Errorf("NewOpenAI with negative limits: error = %v", err)
	}
}

func TestUsing(t *testing.T) {
	s, err := NewScripted([]ScriptStep{{Answer: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := Using(s, Wire{Endpoints: NewEndpoints(nil)}); got != Model(s) {
		t.Errorf("Using(scripted) = %v, want the scripted model itself", got)
	}
	o, err := NewOpenAI(OpenAIConfig{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	reg := NewEndpoints(nil)
	got, ok := Using(o, Wire{Endpoints: reg}).(*OpenAI)
	if !ok || got == o || got.wire.Endpoints != reg || o.wire.Endpoints != nil {
		t.Errorf("Using(openai) = %v, want a copy with the wire, the original unchanged", got)
	}
}

// A choice whose message is null is the model's error, not an empty answer:
// scored as model_error, sent once (never retried), kept in a cassette so
// that a replay scores it the same, and not kept by the response cache.
func TestNullMessageIsAModelError(t *testing.T) {
	tests := []struct {
		name, message, want string
	}{
		{"null", "null", "openai:gpt-oss-120b: the model's output is malformed: the answer's choice has no message (message: null)"},
		{"missing", "", "openai:gpt-oss-120b: the model's output is malformed: the answer's choice has no message (message: missing)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			choice := `{"index":0,"finish_reason":"stop","message":` + tt.message + `}`
			if tt.message == "" {
				choice = `{"index":0,"finish_reason":"stop"}`
			}
			srv := newChatServer(t, reply{body: `{"id":"x","object":"chat.completion","created":1,"model":"gpt-oss-120b","choices":[` + choice + `]}`})
			cache, err := replay.OpenCache(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "c.yaml")
			req := Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}
			for _, mode := range []replay.Mode{replay.Record, replay.Replay} {
				c, err := replay.Open(path, mode)
				if err != nil {
					t.Fatal(err)
				}
				res, err := newTestOpenAI(t, srv, OpenAIConfig{}).With(Wire{Cassette: c, Cache: cache}).Next(context.Background(), req)
				var me *ModelOutputError
				if !errors.As(err, &me) || err.Error() != tt.want {
					t.Fatalf("%s: error = %v (%T), want the *ModelOutputError %q", mode, err, err, tt.want)
				}
				if res.Text != "" || res.FinishReason != "stop" {
					t.Errorf("%s: Response = %+v, want no text and finish_reason stop", mode, res)
				}
			}
			if n := srv.requests(); n != 1 {
				t.Errorf("endpoint saw %d requests, want 1 (no retry, none on replay)", n)
			}
			if _, err := newTestOpenAI(t, srv, OpenAIConfig{}).With(Wire{Cache: cache}).Next(context.Background(), req); err == nil {
				t.Error("no error from the cache's side")
			}
			if n, s := srv.requests(), cache.Stats(); n != 2 || s.Hits != 0 {
				t.Errorf("endpoint saw %d requests, cache %+v; want 2 and no hit: the model's error was cached", n, s)
			}
		})
	}
}

// The response cache keys on the endpoint too: an answer of one endpoint
// never answers for another (a dead one included), and a case that
// records sends every request (its cassette is of the endpoint), keeping
// the answer in the cache, never taking one from it.
func TestResponseCacheKeysOnTheEndpoint(t *testing.T) {
	cache, err := replay.OpenCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Messages: []Message{{Role: RoleUser, Content: "Who owns jump-prod-02?"}}, ToolsJSON: json.RawMessage(toolsJSON)}
	a := newChatServer(t, toolCallReply)
	if _, err := newTestOpenAI(t, a, OpenAIConfig{}).With(Wire{Cache: cache}).Next(context.Background(), req); err != nil {
		t.Fatal(err)
	}

	b := newChatServer(t, okReply(okText))
	got, err := newTestOpenAI(t, b, OpenAIConfig{}).With(Wire{Cache: cache}).Next(context.Background(), req)
	if err != nil || got.Replayed != FromEndpoint || got.Text != "It belongs to the platform team." {
		t.Errorf("another endpoint: %+v, %v; want its own answer, from the endpoint", got, err)
	}
	dead := newChatServer(t)
	dead.Close()
	if _, err := newTestOpenAI(t, dead, OpenAIConfig{MaxRetries: ptr(0)}).With(Wire{Cache: cache}).Next(context.Background(), req); err == nil {
		t.Error("a dead endpoint answered from another's cache entry")
	}

	for _, mode := range []replay.Mode{replay.Record, replay.Fallback} {
		c, err := replay.Open(filepath.Join(t.TempDir(), "c.yaml"), mode)
		if err != nil {
			t.Fatal(err)
		}
		before := a.requests()
		got, err := newTestOpenAI(t, a, OpenAIConfig{}).With(Wire{Cassette: c, Cache: cache}).Next(context.Background(), req)
		if err != nil || got.Replayed != FromEndpoint || a.requests() != before+1 {
			t.Errorf("%s: Replayed %q, %v, %d requests to the endpoint; want one, answered by it", mode, got.Replayed, err, a.requests()-before)
		}
	}
	// Not recording, the same endpoint's entry answers.
	got, err = newTestOpenAI(t, a, OpenAIConfig{}).With(Wire{Cache: cache}).Next(context.Background(), req)
	if err != nil || got.Replayed != FromCache {
		t.Errorf("the same endpoint again: Replayed %q, %v; want cache", got.Replayed, err)
	}
}

// ignoreWaits leaves out what only a live answer has: its attempts and
// waits (a replayed or cached one has none).
var ignoreWaits = cmpopts.IgnoreFields(Response{}, "Waited", "Attempts")
