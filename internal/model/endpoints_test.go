package model

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/hosteval/hosteval/internal/record"
)

// fixture is an answer of a real endpoint family, from
// testdata/endpoints/*.txtar: a comment saying where the shape comes from,
// "key: value" lines (status, class, content-type, retry-after) and the
// body.
type fixture struct {
	name    string
	status  int
	class   string // a FailureClass, or "ok"
	headers map[string]string
	body    []byte
}

func loadFixtures(t *testing.T) []fixture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "endpoints", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var out []fixture
	for _, file := range files {
		a, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f := fixture{name: strings.TrimSuffix(filepath.Base(file), ".txtar"), headers: map[string]string{"Content-Type": "application/json"}}
		for line := range strings.SplitSeq(string(a.Comment), "\n") {
			k, v, ok := strings.Cut(line, ": ")
			switch {
			case !ok:
			case k == "status":
				f.status, _ = strconv.Atoi(v)
			case k == "class":
				f.class = v
			case k == "content-type":
				f.headers["Content-Type"] = v
			case k == "retry-after":
				f.headers["Retry-After"] = v
			}
		}
		if len(a.Files) != 1 || a.Files[0].Name != "body" || f.status == 0 || f.class == "" {
			t.Fatalf("%s: want status and class lines and one body file", file)
		}
		f.body = a.Files[0].Data
		out = append(out, f)
	}
	return out
}

func (f fixture) serve(t *testing.T, requests *atomic.Int32) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		for k, v := range f.headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(f.status)
		w.Write(f.body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestEndpointFailures pins how each family's failure is classified:
// the model's malformed output is a *ModelOutputError after one request,
// a configuration error or a refused request an *EndpointError after one,
// a transport failure an *EndpointError after its retries.
func TestEndpointFailures(t *testing.T) {
	for _, f := range loadFixtures(t) {
		if f.class == "ok" {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			var requests atomic.Int32
			m, err := NewOpenAI(OpenAIConfig{BaseURL: f.serve(t, &requests), Model: "gpt-oss-120b", MaxRetries: ptr(1), MaxRetryDelay: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "Who owns jump-prod-02?"}}, ToolsJSON: json.RawMessage(toolsJSON)})
			msg := errorMessage(f.body)
			wantRequests := int32(1)
			switch FailureClass(f.class) {
			case FailureModelOutput:
				var me *ModelOutputError
				if !errors.As(err, &me) {
					t.Fatalf("error = %v (%T), want a *ModelOutputError", err, err)
				}
				if me.StatusCode != f.status || me.Message != msg || me.Message == "" {
					t.Errorf("ModelOutputError = %d %q, want %d %q", me.StatusCode, me.Message, f.status, msg)
				}
			case FailureConfig, FailureRejected, FailureTransport:
				var ee *EndpointError
				if !errors.As(err, &ee) {
					t.Fatalf("error = %v (%T), want an *EndpointError", err, err)
				}
				if string(ee.Class) != f.class || ee.StatusCode != f.status || ee.Message != msg {
					t.Errorf("EndpointError = %s %d %q, want %s %d %q", ee.Class, ee.StatusCode, ee.Message, f.class, f.status, msg)
				}
				if f.class == string(FailureTransport) {
					wantRequests = 2
				} else if !strings.Contains(err.Error(), "(1 attempt; not retried: ") {
					t.Errorf("error = %q, want it to say it was not retried and why", err)
				}
			default:
				t.Fatalf("unknown class %q", f.class)
			}
			if n := requests.Load(); n != wantRequests {
				t.Errorf("endpoint saw %d requests, want %d", n, wantRequests)
			}
		})
	}
}

// TestEndpointAnswers pins what is read out of each family's answer.
func TestEndpointAnswers(t *testing.T) {
	want := map[string]Response{
		"vllm-gpt-oss-tool-call": {
			ToolCalls:          []ToolCall{{ID: "chatcmpl-tool-6b1e2f3a4c5d4e6f8a9b0c1d2e3f4a5b", Name: "cmdb__get_asset", Arguments: `{"hostname": "jump-prod-02"}`}},
			Usage:              &record.Usage{PromptTokens: 1187, CompletionTokens: 56, TotalTokens: 1243},
			CachedPromptTokens: 1024,
			Reasoning:          "The user asks who owns jump-prod-02. Use cmdb__get_asset.",
			FinishReason:       "tool_calls",
		},
		"vllm-reasoning-field": {
			Text:         "The platform team owns jump-prod-02.",
			Usage:        &record.Usage{PromptTokens: 1302, CompletionTokens: 16, TotalTokens: 1318},
			Reasoning:    "The result says owner platform.",
			FinishReason: "stop",
		},
		"llamacpp-tool-call": {
			ToolCalls:    []ToolCall{{ID: "Q7mWk2Jd0sX9pLr4TnB8vYc3HfEa6Ug1", Name: "cmdb__get_asset", Arguments: `{"hostname":"jump-prod-02"}`}},
			Usage:        &record.Usage{PromptTokens: 902, CompletionTokens: 41, TotalTokens: 943},
			Reasoning:    "Need the asset owner.",
			FinishReason: "tool_calls",
		},
		"ollama-tool-call": {
			ToolCalls:    []ToolCall{{ID: "call_x8k2m1pq", Name: "cmdb__get_asset", Arguments: `{"hostname":"jump-prod-02"}`}},
			Usage:        &record.Usage{PromptTokens: 840, CompletionTokens: 38, TotalTokens: 878},
			Reasoning:    "I should look the host up.",
			FinishReason: "tool_calls",
		},
	}
	seen := 0
	for _, f := range loadFixtures(t) {
		if f.class != "ok" {
			continue
		}
		seen++
		t.Run(f.name, func(t *testing.T) {
			var requests atomic.Int32
			m, err := NewOpenAI(OpenAIConfig{BaseURL: f.serve(t, &requests), Model: "gpt-oss-120b"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "Who owns jump-prod-02?"}}})
			if err != nil {
				t.Fatal(err)
			}
			w, ok := want[f.name]
			if !ok {
				t.Fatalf("no expectation for %s", f.name)
			}
			if diff := cmp.Diff(w, got, ignoreLatency); diff != "" {
				t.Errorf("Response mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if seen != len(want) {
		t.Errorf("%d answer fixtures, %d expectations", seen, len(want))
	}
}
