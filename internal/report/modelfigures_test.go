package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/internal/gate"
	"github.com/hosteval/hosteval/internal/record"
)

// modelRun is a run of a real model: one case replayed from its cassette
// with a judge, one answered from the cache with a malformed tool call.
func modelRun() *record.Run {
	usage := &record.Usage{PromptTokens: 400, CompletionTokens: 30, TotalTokens: 430}
	return &record.Run{Dir: "r", Info: &record.RunInfo{RunID: "r",
		Cache:     &record.CacheStats{Hits: 1, Misses: 2},
		Endpoints: []record.EndpointStats{{Endpoint: "http://gpu:8000/v1 gpt-oss-120b", Requests: 2, Throttled: 1, WaitedMS: 1500}}},
		Records: []record.Record{
			{CaseID: "a#0", Scenario: "a", Model: "openai:m", Status: record.StatusPass,
				ModelRequests: []record.ModelRequest{
					{Turn: 1, Index: 1, Usage: usage, ModelAnswer: record.ModelAnswer{Replayed: record.ReplayedCassette, Cost: 0.0001}},
					{Turn: 1, Index: 2, Usage: usage, ModelAnswer: record.ModelAnswer{Replayed: record.ReplayedCassette, Cost: 0.0002}},
				},
				CaseModels: record.CaseModels{Cost: 0.0004, Judgements: []record.Judgement{{Judge: "openai:m", Score: 0.9, Passed: true,
					ModelAnswer: record.ModelAnswer{Replayed: record.ReplayedCassette, Cost: 0.0001}}}}},
			{CaseID: "a#1", Scenario: "a", Model: "openai:m", Repeat: 1, Status: record.StatusPass,
				ModelRequests: []record.ModelRequest{
					{Turn: 1, Index: 1, ModelAnswer: record.ModelAnswer{Outcome: record.OutcomeModelError}},
					{Turn: 2, Index: 1, Usage: usage, ModelAnswer: record.ModelAnswer{Replayed: record.ReplayedCache, Cost: 0.0002}},
				}},
		}}
}

func TestModelFigures(t *testing.T) {
	s := Aggregate(modelRun())
	want := ModelFigures{ModelErrors: 1, Replayed: 3, Cached: 1, Cost: 0.0006}
	if got := s.Totals.ModelFigures; got.ModelErrors != want.ModelErrors || got.Replayed != want.Replayed || got.Cached != want.Cached || !near(got.Cost, want.Cost, 1e-12) {
		t.Errorf("totals = %+v, want %+v", got, want)
	}
	g := s.Groups[0]
	if !near(g.MeanCost, 0.0003, 1e-12) || g.ModelErrors != 1 {
		t.Errorf("group: mean cost %v, model errors %d; want 0.0003 and 1", g.MeanCost, g.ModelErrors)
	}
	// The second case's record has no cost of its own: its requests' sum.
	if c := s.Cases()[1]; !near(c.Cost, 0.0002, 1e-12) || c.Cached != 1 {
		t.Errorf("case a#1: %+v", c.ModelFigures)
	}
	results := EvaluateGates(s, []gate.Gate{mustGate(t, "cost <= 0.0002"), mustGate(t, "model_errors == 0")}, nil)
	for i, want := range []string{"cost = 0.0003, want <= 0.0002", "model_errors = 1, want == 0"} {
		if results[i].Passed || results[i].Detail != want {
			t.Errorf("gate %s: passed %t, %q; want failed, %q", results[i].Gate.Text, results[i].Passed, results[i].Detail, want)
		}
	}
	var text bytes.Buffer
	if err := WriteText(&text, s, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"3 model requests replayed from cassettes; 1 answered from the response cache; 1 model error (malformed output); cost 0.0006",
		"response cache: 1 hits, 2 misses",
		"endpoint http://gpu:8000/v1 gpt-oss-120b: 2 requests, 1 throttled (429), 1.5 s waiting for its limits",
		"  model err      replayed  cost/case",
	} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("the text report lacks %q:\n%s", line, text.String())
		}
	}
	var junit bytes.Buffer
	if err := WriteJUnit(&junit, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(junit.String(), "model_errors=1 replayed_requests=0 cached_requests=1 cost=0.0002") {
		t.Errorf("junit system-out lacks the model figures:\n%s", junit.String())
	}
}
