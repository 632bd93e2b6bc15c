package report

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hosteval/hosteval/internal/record"
)

func TestCaseOf(t *testing.T) {
	rec := record.Record{
		Scenario: "chaos", Variant: "v1", Model: "scripted", Repeat: 2, CaseID: "chaos/v1/scripted#2",
		Status: record.StatusFail, MS: 2500,
		Servers: []record.Server{
			{Name: "zeta", Protocol: "2026-07-28"},
			{Name: "alpha", Mode: "2026-07-28", Offered: "2025-11-25", VersionFailure: true},
			{Name: "legacy", Protocol: "2025-11-25", Restarted: true},
		},
		Turns: []record.Turn{{Steps: 5}, {Steps: 2, Stopped: true}},
		Calls: []record.Call{
			{Outcome: record.OutcomeOK, MS: 10, ResultBytes: 100, AskedUser: true},
			{Outcome: record.OutcomeUnknownTool, MS: 0.01, ResultBytes: 40},
			{Outcome: record.OutcomeTimeout, MS: 2000, ResultBytes: 30},
			{Outcome: record.OutcomeError, ErrorCode: record.Code(-32603), MS: 5, ResultBytes: 20},
			{Outcome: record.OutcomeError, ErrorCode: record.Code(-32602), MS: 3, ResultBytes: 20},
			{Outcome: record.OutcomeError, ErrorCode: record.Code(-32603), MS: 7, ResultBytes: 20},
			{Outcome: record.OutcomeError, MS: 1, ResultBytes: 25}, // dead server: no code
			{Outcome: record.OutcomeOK, MS: 50, ResultBytes: 4000, RawBytes: 90000, Clipped: true},
			{Outcome: record.OutcomeDenied, MS: 900, ResultBytes: 33, AskedUser: true},
			{Outcome: record.OutcomeBadArguments, MS: 0.02, ResultBytes: 45},
			{Outcome: record.OutcomeToolError, MS: 4, ResultBytes: 60},
		},
		ModelRequests: []record.ModelRequest{
			{Turn: 1, ToolDefBytes: 1000, ToolDefTokens: 250, Usage: &record.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}},
			{Turn: 1, ToolDefBytes: 1000, ToolDefTokens: 250},
			{Turn: 2, ToolDefBytes: 1200, ToolDefTokens: 300, Usage: &record.Usage{PromptTokens: 200, CompletionTokens: 20, TotalTokens: 220}},
		},
		Expectations: []record.Expectation{
			{Name: "timeouts == 1", Passed: true},
			{Name: "protocol_errors == 0", Line: 9, Passed: false, Detail: "found 3"},
		},
	}
	got := CaseOf(&rec)
	want := CaseStats{
		GroupKey: GroupKey{Scenario: "chaos", Variant: "v1", Model: "scripted"},
		Name:     "chaos/v1/scripted#2", CaseID: "chaos/v1/scripted#2", Repeat: 2,
		Status: record.StatusFail, MS: 2500,
		Expectations: 2,
		Failed:       []record.Expectation{{Name: "protocol_errors == 0", Line: 9, Passed: false, Detail: "found 3"}},
		Steps:        7, ToolCalls: 11, ModelRequests: 3, Turns: 2, Stopped: 1,
		UnknownTools: 1, BadArguments: 1, Denied: 1, ToolErrors: 1, Timeouts: 1,
		ProtocolErrors: 3, ErrorCodes: []CodeCount{{-32603, 2}, {-32602, 1}}, OtherErrors: 1,
		VersionFailures: 1, Restarts: 1, AskedUser: 2, Clipped: 1,
		ResultBytes: 4393, MaxResultBytes: 4000,
		ToolDefBytes: 1200, ToolDefTokens: 300, ToolDefBytesTotal: 3200, ToolDefTokensTotal: 800,
		PerTurn: []TurnStats{
			{Turn: 1, ModelRequests: 2, ToolDefBytes: 2000, ToolDefTokens: 500},
			{Turn: 2, ModelRequests: 1, ToolDefBytes: 1200, ToolDefTokens: 300},
		},
		// Sent calls only: 10, 2000, 5, 3, 7, 1, 50, 4 (sorted 1 3 4 5 7 10 50 2000).
		Latency: Latency{N: 8, Min: 1, Mean: 2080.0 / 8, P50: 6, P90: 635, P95: 1317.5, P99: 1863.5, Max: 2000},
		Usage:   &record.Usage{PromptTokens: 300, CompletionTokens: 30, TotalTokens: 330},
		Servers: []ServerInfo{
			{Name: "alpha", Mode: "2026-07-28", Offered: "2025-11-25", VersionFailure: true},
			{Name: "legacy", Protocol: "2025-11-25", Restarted: true},
			{Name: "zeta", Protocol: "2026-07-28"},
		},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(CaseStats{}), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("CaseOf (-want +got):\n%s", diff)
	}
}

func TestCaseOfNoRequests(t *testing.T) {
	// A case that never reached the model reports the catalog it offered,
	// and the record's own usage wins over the requests' sum.
	rec := record.Record{
		Scenario: "s", Model: "m", Status: record.StatusError,
		ToolDefs: record.ToolDefs{Tools: 3, Bytes: 900, Tokens: 210},
		Usage:    &record.Usage{TotalTokens: 5},
	}
	got := CaseOf(&rec)
	if got.ToolDefTokens != 210 || got.ToolDefBytes != 900 || got.ToolDefTokensTotal != 0 {
		t.Errorf("tool defs = %d tokens, %d bytes, %d total; want 210, 900, 0", got.ToolDefTokens, got.ToolDefBytes, got.ToolDefTokensTotal)
	}
	if got.Usage == nil || got.Usage.TotalTokens != 5 {
		t.Errorf("usage = %+v, want the record's", got.Usage)
	}
	if got.Latency != (Latency{}) {
		t.Errorf("latency = %+v, want zero", got.Latency)
	}
}

func TestAggregateFixture(t *testing.T) {
	s := fixture(t, "base")
	tot := s.Totals
	if got, want := [4]int{tot.Cases, tot.Passed, tot.Failed, tot.Errored}, [4]int{15, 10, 4, 1}; got != want || tot.PassRate != 10.0/15 {
		t.Errorf("totals = %+v, want cases, passed, failed, errored %v and pass rate 2/3", tot, want)
	}
	// The trend's figures: every call sent in the run, pooled; the mean
	// catalog per model request.
	if tot.Latency.N != 27 || tot.Latency.Max != 2001.3 || tot.ModelRequests != 43 || math.Abs(tot.ToolDefTokens-13633.0/43) > 1e-9 {
		t.Errorf("totals' trend figures = %+v, want 27 calls up to 2001.3 ms, 43 requests of 13633/43 definition tokens", tot)
	}
	type fig struct {
		Cases, Passed, Failed, Errored int
		PassRate                       float64
		UnknownTools, Timeouts         int
		ProtocolErrors, VersionFails   int
		ToolDefTokens                  int
		Calls                          int
	}
	want := map[string]fig{
		"chaos-failures/scripted":                   {1, 0, 1, 0, 0, 0, 1, 3, 0, 221, 5},
		"legacy-pinned/scripted":                    {1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0},
		"search-desc/a-terse/openai:gpt-oss-120b":   {4, 2, 2, 0, 0.5, 0, 0, 0, 0, 210, 6},
		"search-desc/b-verbose/openai:gpt-oss-120b": {4, 4, 0, 0, 1, 0, 0, 0, 0, 468, 8},
		"ticket-accepted/scripted":                  {3, 3, 0, 0, 1, 0, 0, 0, 0, 352, 6},
		"ticket-declined/scripted":                  {1, 0, 1, 0, 0, 0, 0, 0, 0, 352, 1},
		"unknown-tool/scripted":                     {1, 1, 0, 0, 1, 1, 0, 0, 0, 166, 1},
	}
	got := map[string]fig{}
	var order []string
	for _, g := range s.Groups {
		order = append(order, g.GroupKey.String())
		got[g.GroupKey.String()] = fig{g.Cases, g.Passed, g.Failed, g.Errored, g.PassRate, g.UnknownTools, g.Timeouts,
			g.ProtocolErrors, g.VersionFailures, g.ToolDefTokens, g.Latency.N}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	wantOrder := []string{
		"chaos-failures/scripted", "legacy-pinned/scripted",
		"search-desc/a-terse/openai:gpt-oss-120b", "search-desc/b-verbose/openai:gpt-oss-120b",
		"ticket-accepted/scripted", "ticket-declined/scripted", "unknown-tool/scripted",
	}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("group order (-want +got):\n%s", diff)
	}
	g := s.Group(GroupKey{Scenario: "ticket-accepted", Model: "scripted"})
	if g == nil {
		t.Fatal("Group(ticket-accepted/scripted) = nil")
	}
	// Calls: 2.8 3.1 3.6 790.2 812.4 845.0.
	if want := (Latency{N: 6, Min: 2.8, Mean: 2457.1 / 6, P50: 396.9, P90: 828.7, P95: 836.85, P99: 843.37, Max: 845}); !cmp.Equal(want, g.Latency, cmpopts.EquateApprox(0, 1e-9)) {
		t.Errorf("latency = %+v, want %+v", g.Latency, want)
	}
	if s.Group(GroupKey{Scenario: "nope"}) != nil {
		t.Error("Group(nope) != nil")
	}
}

// TestAggregateOrderIndependent: the runner appends records as cases
// finish, in any order; every output must be the same.
func TestAggregateOrderIndependent(t *testing.T) {
	run, err := record.ReadRun("testdata/runs/base")
	if err != nil {
		t.Fatal(err)
	}
	render := func(s *Summary) string {
		var b bytes.Buffer
		for _, f := range []func() error{
			func() error { return WriteSummaryJSON(&b, s) },
			func() error { return WriteText(&b, s, Options{}) },
			func() error { return WriteJUnit(&b, s) },
			func() error { return WriteHTML(&b, s, Options{}) },
		} {
			if err := f(); err != nil {
				t.Fatal(err)
			}
		}
		return b.String()
	}
	want := render(Aggregate(run))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 5 {
		rng.Shuffle(len(run.Records), func(i, j int) { run.Records[i], run.Records[j] = run.Records[j], run.Records[i] })
		if got := render(Aggregate(run)); got != want {
			t.Fatalf("shuffle %d changed the output:\n%s", i, cmp.Diff(want, got))
		}
	}
}

func BenchmarkAggregate(b *testing.B) {
	run, err := record.ReadRun("testdata/runs/base")
	if err != nil {
		b.Fatal(err)
	}
	// 10,000 records: the fixture's cases repeated under new repeat numbers.
	const n = 10000
	big := &record.Run{Dir: run.Dir, Records: make([]record.Record, 0, n)}
	for i := 0; len(big.Records) < n; i++ {
		rec := run.Records[i%len(run.Records)]
		rec.Repeat = i
		big.Records = append(big.Records, rec)
	}
	b.ReportAllocs()
	for b.Loop() {
		Aggregate(big)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func TestToolStats(t *testing.T) {
	run := &record.Run{Records: []record.Record{
		{CaseID: "a#0", Calls: []record.Call{
			{Server: "cmdb", Tool: "get_asset", Outcome: record.OutcomeOK, MS: 10, ResultBytes: 100},
			{Server: "-", Tool: "nope", Outcome: record.OutcomeUnknownTool, ResultBytes: 80},
			{Server: "cmdb", Tool: "get_asset", Outcome: record.OutcomeTimeout, MS: 30, ResultBytes: 50},
		}},
		{CaseID: "b#0", Calls: []record.Call{
			{Server: "cmdb", Tool: "get_asset", Outcome: record.OutcomeDenied, MS: 0.1, ResultBytes: 60},
			{Server: "big", Tool: "search", Outcome: record.OutcomeOK, MS: 5, ResultBytes: 4000, Clipped: true},
		}},
	}}
	got := Aggregate(run).Tools
	want := []ToolStats{
		{Server: "big", Tool: "search", Calls: 1, Outcomes: map[string]int{"ok": 1}, Clipped: 1,
			ResultBytes: 4000, MeanResultBytes: 4000, MaxResultBytes: 4000, Latency: latencyOf([]float64{5})},
		// The denied call sent nothing: it counts, but not in the latency.
		{Server: "cmdb", Tool: "get_asset", Calls: 3, Outcomes: map[string]int{"ok": 1, "timeout": 1, "denied": 1},
			ResultBytes: 210, MeanResultBytes: 70, MaxResultBytes: 100, Latency: latencyOf([]float64{10, 30})},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}
