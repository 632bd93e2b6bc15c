package report

import (
	"bytes"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/record"
)

// twoTurns is a case of two turns: the first with a request that proposed
// two calls (recorded out of step order), one that proposed one, and the
// answer; the second with no call.
func twoTurns() *record.Record {
	return &record.Record{
		CaseID: "t#0", Scenario: "t", Model: "scripted", Status: record.StatusFail,
		Turns: []record.Turn{
			{Question: "first?", Answer: "first.", TraceID: "aaa", Steps: 3, Requests: 3},
			{Question: "second?", Answer: "second.", TraceID: "bbb", Requests: 1},
		},
		ModelRequests: []record.ModelRequest{
			{TraceID: "bbb", Turn: 2, Index: 1},
			{TraceID: "aaa", Turn: 1, Index: 2, ToolCalls: 1},
			{TraceID: "aaa", Turn: 1, Index: 1, ToolCalls: 2},
			{TraceID: "aaa", Turn: 1, Index: 3},
		},
		Calls: []record.Call{
			{TraceID: "aaa", Step: 2, Name: "s__b", Server: "s", Tool: "b", Outcome: "ok", Approval: "auto", Rounds: 1},
			{TraceID: "aaa", Step: 1, Name: "nope", Server: "-", Tool: "nope", Outcome: "unknown_tool", Proposed: `{"x":1}`},
			{TraceID: "aaa", Step: 3, Name: "s__c", Server: "s", Tool: "c", Outcome: "denied", Approval: "denied",
				Asks: []record.Ask{{Kind: record.AskApproval, Server: "s", Action: record.ApprovalDenied, Reason: "no canned approval: denied"}}},
		},
		Expectations: []record.Expectation{{Name: "unknown_tools=0", Line: 9, Detail: "unknown_tools=1 (nope)"}, {Name: "steps=3", Passed: true}},
	}
}

// shape is the order a transcript tells: turn, request index, calls.
func shape(t *Transcript) []string {
	var out []string
	for _, turn := range t.Turns {
		for _, r := range turn.Requests {
			s := turn.Question + " r" + string(rune('0'+r.Index)) + ":"
			for _, c := range r.Calls {
				s += " " + c.Name
			}
			out = append(out, s)
		}
	}
	return out
}

func TestTranscriptOrder(t *testing.T) {
	tr := NewTranscript("run", twoTurns(), CaseLogs{})
	want := []string{"first? r1: nope s__b", "first? r2: s__c", "first? r3:", "second? r1:"}
	if diff := cmp.Diff(want, shape(tr)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	calls := tr.Turns[0].Requests[0].Calls
	if got := calls[0].Decision; !strings.HasPrefix(got, "unknown tool") || calls[0].arguments() != `{"x":1}` {
		t.Errorf("unknown tool: decision %q, arguments %q", got, calls[0].arguments())
	}
	denied := tr.Turns[0].Requests[1].Calls[0]
	if want := "not on the auto-run list: the person did not approve it (no canned approval: denied); nothing sent"; denied.Decision != want {
		t.Errorf("denied: decision %q, want %q", denied.Decision, want)
	}
	if len(tr.Failed()) != 1 || tr.expectationsLine() != "1 of 2 held" {
		t.Errorf("expectations: %d failed, %q", len(tr.Failed()), tr.expectationsLine())
	}
}

func TestTranscriptCallsWithoutRequests(t *testing.T) {
	// A case cut short: calls recorded, their requests not.
	rec := &record.Record{CaseID: "c#0", Calls: []record.Call{{TraceID: "zz", Step: 1, Name: "a"}, {TraceID: "zz", Step: 2, Name: "b"}}}
	tr := NewTranscript("run", rec, CaseLogs{})
	if diff := cmp.Diff([]string{" r1: a b"}, shape(tr)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestTranscriptRoundsAndAsks(t *testing.T) {
	rec := &record.Record{CaseID: "q#0", Turns: []record.Turn{{Question: "q", TraceID: "t1"}},
		ModelRequests: []record.ModelRequest{{TraceID: "t1", Turn: 1, Index: 1, ToolCalls: 1}},
		Calls: []record.Call{{
			TraceID: "t1", Step: 1, Name: "tickets__open", Server: "tickets", Tool: "open", Outcome: "tool_error",
			Approval: "approved", Rounds: 2, RoundMS: []float64{2.4, 2.5},
			Asks: []record.Ask{
				{Kind: record.AskApproval, Server: "tickets", Action: record.ApprovalApproved, Rule: "s.yaml:12"},
				{Kind: record.AskElicitation, Round: 1, Server: "tickets", Key: "confirm", Mode: "form", Message: "Open it?", Fields: []string{"priority"}, Action: "decline", Rule: "s.yaml:10"},
			},
		}},
	}
	c := NewTranscript("run", rec, CaseLogs{}).Turns[0].Requests[0].Calls[0]
	if c.Decision != "not on the auto-run list: the person approved it (canned approval s.yaml:12)" {
		t.Errorf("decision %q", c.Decision)
	}
	if len(c.RoundTrips) != 2 || len(c.RoundTrips[0].Asks) != 1 || len(c.RoundTrips[1].Asks) != 0 || c.RoundTrips[1].ServerMS != 2.5 {
		t.Fatalf("rounds = %+v, want the question under round 1 of 2", c.RoundTrips)
	}
	a := c.RoundTrips[0].Asks[0]
	if got := askLine(&a) + " / " + answerLine(&a); got != "tickets asks the person (key confirm; fields priority) / person: decline (canned answer s.yaml:10)" {
		t.Errorf("ask = %q", got)
	}
}

func TestTranscriptCut(t *testing.T) {
	note := "[result cut to 60 bytes by the host: ask for less, e.g. with a filter or a smaller limit]"
	rec := &record.Record{CaseID: "c#0", Calls: []record.Call{{
		TraceID: "x", Step: 1, Name: "big", Outcome: "ok", Clipped: true, ResultBytes: 60, RawBytes: 9000,
		Result: "{\"a\":1}\n" + note,
	}}}
	c := NewTranscript("run", rec, CaseLogs{}).Turns[0].Requests[0].Calls[0]
	if c.Kept != `{"a":1}` || c.CutNote != note {
		t.Errorf("kept %q, cut note %q", c.Kept, c.CutNote)
	}
	if got := c.resultLine(); got != "60 B to the model, cut by the result budget from 9000 B" {
		t.Errorf("result line %q", got)
	}
}

func TestTranscriptJoinsLogs(t *testing.T) {
	rec := twoTurns()
	rec.Servers = []record.Server{{Name: "s", Shared: true}}
	log := `{"ts":"2026-01-01T00:00:00Z","operation":"mcp.request","server":"s","method":"tools/list","outcome":"ok","ms":1,"trace_id":"","step":0}
{"operation":"host.tool_call","trace_id":"aaa","step":2}
{"ts":"2026-01-01T00:00:01Z","operation":"mcp.request","server":"s","method":"tools/call","tool":"b","outcome":"ok","ms":0.5,"trace_id":"aaa","step":2}
{"ts":"2026-01-01T00:00:02Z","operation":"server.stderr","server":"s","text":"panic: \u001b[31mred"}
not json at all
`
	shared := `{"ts":"2026-01-01T00:00:03Z","operation":"mcp.request","server":"s","method":"tools/call","tool":"b","outcome":"ok","ms":0.7,"trace_id":"aaa","step":2}
`
	// A 2025-11-25 call: the server asks the host during the call, the
	// host answers; another call's messages are left out.
	wire := `{"ms":1,"server":"s","dir":"->","kind":"request","id":7,"method":"tools/call","bytes":10,"message":{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"dev.hosteval/trace_id":"aaa","dev.hosteval/step":2},"name":"b"}}}
{"ms":2,"server":"s","dir":"<-","kind":"request","id":1,"method":"elicitation/create","bytes":10,"message":{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"ok?"}}}
{"ms":3,"server":"s","dir":"->","kind":"result","id":1,"method":"elicitation/create","bytes":10,"message":{"jsonrpc":"2.0","id":1,"result":{"action":"decline"}}}
{"ms":4,"server":"s","dir":"<-","kind":"result","id":7,"method":"tools/call","bytes":10,"message":{"jsonrpc":"2.0","id":7,"result":{"_meta":{"x":1},"content":[]}}}
{"ms":5,"server":"s","dir":"->","kind":"request","id":8,"method":"tools/call","bytes":10,"message":{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"_meta":{"dev.hosteval/trace_id":"ccc","dev.hosteval/step":1},"name":"z"}}}
{"ms":6,"server":"s","stream":"stderr","kind":"log","bytes":3,"text":"log"}
`
	tr := NewTranscript("run", rec, CaseLogs{Log: []byte(log), Shared: []byte(shared), Wire: []byte(wire)})
	b := tr.Turns[0].Requests[0].Calls[1]
	if b.Name != "s__b" || len(b.ServerLog) != 2 {
		t.Fatalf("s__b's server log = %+v, want its two lines (case log and shared log)", b.ServerLog)
	}
	var heads []string
	for _, w := range b.Wire {
		heads = append(heads, wireHead(w)+" "+w.Brief)
	}
	want := []string{
		`+1.0 ms -> request tools/call #7, 10 B {"name":"b"}`,
		`+2.0 ms <- request elicitation/create #1, 10 B {"message":"ok?"}`,
		`+3.0 ms -> result elicitation/create #1, 10 B {"action":"decline"}`,
		`+4.0 ms <- result tools/call #7, 10 B {"content":[]}`,
	}
	if diff := cmp.Diff(want, heads); diff != "" {
		t.Errorf("wire of the call (-want +got):\n%s", diff)
	}
	// The handshake, the stderr line and the line that is not JSON join no call.
	if len(tr.ServerLines) != 3 {
		t.Errorf("server lines of no call: %+v, want 3", tr.ServerLines)
	}
	var text bytes.Buffer
	if err := WriteTranscriptText(&text, tr, 0); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "\x1b") || !strings.Contains(text.String(), `panic: \x1b[31mred`) {
		t.Errorf("a terminal escape in a server's line reached the text unescaped, or went missing:\n%s", text.String())
	}
}

// TestTranscriptHostile puts markup, terminal escapes and Markdown fences
// in every text a transcript shows, and checks each layout keeps them text.
func TestTranscriptHostile(t *testing.T) {
	hostile := "<script>alert(1)</script>\"><img src=x onerror=alert(2)>\n```\n# heading\x1b[2J|table|"
	rec := &record.Record{
		CaseID: hostile, Scenario: hostile, Status: record.StatusFail, Error: hostile,
		Turns:         []record.Turn{{Question: hostile, Answer: hostile, TraceID: "t"}},
		ModelRequests: []record.ModelRequest{{TraceID: "t", Turn: 1, Index: 1, ToolCalls: 1, Error: hostile}},
		Calls: []record.Call{{TraceID: "t", Step: 1, Name: hostile, Server: hostile, Tool: hostile, Outcome: "tool_error", Result: hostile, Error: hostile,
			Arguments: map[string]any{hostile: hostile}, Rounds: 1,
			Asks: []record.Ask{{Kind: record.AskElicitation, Round: 1, Server: hostile, Message: hostile, Action: hostile, Rule: hostile}}}},
		Expectations: []record.Expectation{{Name: hostile, Detail: hostile}},
		Logs:         map[string]string{"log": hostile},
	}
	tr := NewTranscript(hostile, rec, CaseLogs{Log: []byte(`{"operation":"server.stderr","text":"` + "\\u001b[2J" + `<b>x</b>"}`)})
	var text, md bytes.Buffer
	if err := WriteTranscriptText(&text, tr, 0); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(text.String(), '\x1b') {
		t.Errorf("text: a terminal escape reached the output")
	}
	if err := WriteTranscriptMarkdown(&md, tr, RelativeLogs); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script>", "<img", "\n# heading", "\x1b"} {
		// Escaped ("\<script>") is text; raw, only in a code block.
		for i := 0; ; i++ {
			j := strings.Index(md.String()[i:], bad)
			if j < 0 {
				break
			}
			i += j
			if (i == 0 || md.String()[i-1] != '\\') && !insideFence(md.String(), i) {
				t.Errorf("markdown: %q outside a code block", bad)
				break
			}
		}
	}
	html, err := TranscriptHTML(tr, RelativeLogs)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script>", "<img", "<b>"} {
		if strings.Contains(string(html), bad) {
			t.Errorf("html: %q reached the page as markup", bad)
		}
	}
}

// insideFence reports whether byte i of a Markdown text is inside a fenced
// code block, whose fence is the longest run of backticks opening it.
func insideFence(md string, i int) bool {
	inside, fence := false, ""
	pos := 0
	for _, line := range strings.SplitAfter(md, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !inside && strings.HasPrefix(trimmed, "```"):
			inside, fence = true, trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
		case inside && trimmed == fence:
			inside = false
		default:
			if i >= pos && i < pos+len(line) {
				return inside
			}
		}
		pos += len(line)
	}
	return false
}

// triage is a failed case as the host records it: an unknown tool, a
// ticket whose form the person declined after approving the call, and a
// result the budget cut; with its case log and wire trace.
func triage() (*record.Record, CaseLogs) {
	note := "\n[result cut to 120 bytes by the host: ask for less, e.g. with a filter or a smaller limit]"
	rec := &record.Record{
		RunID: "r1", CaseID: "triage#0", Index: 1, Scenario: "triage", File: "suite.yaml", Line: 1, Model: "scripted",
		Status: record.StatusFail, MS: 48.6, Started: mustTime("2026-11-30T11:10:52Z"),
		Servers: []record.Server{
			{Name: "cmdb", Mode: "auto", Protocol: "2026-07-28", Tools: 2, Shared: true},
			{Name: "tickets", Mode: "auto", Protocol: "2026-07-28", Tools: 2},
		},
		ToolDefs: record.ToolDefs{Tools: 4, Bytes: 3264, Tokens: 776},
		Turns:    []record.Turn{{Question: "Open a ticket for jump-prod-02,\nthen find the refund policy", Answer: "Opened INC-4100.", TraceID: "t1", Steps: 3, Requests: 4, MS: 40}},
		ModelRequests: []record.ModelRequest{
			{TraceID: "t1", Turn: 1, Index: 1, Model: "scripted", Messages: 1, ToolDefBytes: 3264, ToolDefTokens: 776, ToolCalls: 1},
			{TraceID: "t1", Turn: 1, Index: 2, Model: "scripted", Messages: 3, ToolDefBytes: 3264, ToolDefTokens: 776, ToolCalls: 1,
				Usage: &record.Usage{PromptTokens: 900, CompletionTokens: 20, TotalTokens: 920}, MS: 812.5},
			{TraceID: "t1", Turn: 1, Index: 3, Model: "scripted", Messages: 5, ToolDefBytes: 3264, ToolDefTokens: 776, ToolCalls: 1},
			{TraceID: "t1", Turn: 1, Index: 4, Model: "scripted", Messages: 7, ToolDefBytes: 3264, ToolDefTokens: 776},
		},
		Calls: []record.Call{
			{TraceID: "t1", Step: 1, Name: "cmdb__delete_asset", Server: "-", Tool: "cmdb__delete_asset", Outcome: record.OutcomeUnknownTool,
				Proposed: `{"hostname":"jump-prod-02"}`, Result: `error: there is no tool named "cmdb__delete_asset". Use only the tools you were given.`, ResultBytes: 86, RawBytes: 86},
			{TraceID: "t1", Step: 2, Name: "tickets__open_ticket", Server: "tickets", Tool: "open_ticket", Outcome: record.OutcomeToolError,
				Arguments: map[string]any{"host": "jump-prod-02", "summary": "brute force"}, Approval: record.ApprovalApproved, AskedUser: true,
				Rounds: 2, RoundMS: []float64{1.5, 1.1}, MS: 2.6, ServerMS: 2.6, Protocol: "2026-07-28", Elicitations: 1, Declined: 1, InputKeys: []string{"confirm"},
				Asks: []record.Ask{
					{Kind: record.AskApproval, Server: "tickets", Action: record.ApprovalApproved, Rule: "suite.yaml:12"},
					{Kind: record.AskElicitation, Round: 1, Server: "tickets", Key: "confirm", Mode: "form", Message: "Open an incident ticket for jump-prod-02?\n\nbrute force",
						Fields: []string{"priority"}, Action: "decline", Rule: "suite.yaml:10"},
				},
				Result: "error: the user declined: no ticket was opened. Don't retry unless they ask again.", ResultBytes: 82, RawBytes: 82},
			{TraceID: "t1", Step: 3, Name: "support__search_knowledge", Server: "support", Tool: "search_knowledge", Outcome: record.OutcomeOK,
				Arguments: map[string]any{"query": "refund policy"}, Approval: record.ApprovalAuto, Rounds: 1, MS: 21.1, ServerMS: 20.8, Protocol: "2026-07-28",
				Clipped: true, ResultBytes: 120, RawBytes: 44536, Result: `{"query":"refund policy","results":[{"doc_id":"refunds"}` + note},
		},
		Expectations: []record.Expectation{
			{Name: "tool tickets__open_ticket outcome=tool_error", Line: 15, Passed: true},
			{Name: "unknown_tools=0", Line: 17, Detail: "unknown_tools=1 (cmdb__delete_asset)"},
		},
		Logs: map[string]string{"log": "cases/0001-triage_0.jsonl", "wire": "cases/0001-triage_0.wire.jsonl"},
	}
	logs := CaseLogs{
		Log: []byte(`{"ts":"2026-11-30T11:10:52.700Z","operation":"mcp.request","server":"tickets","method":"server/discover","outcome":"ok","ms":0.5,"trace_id":"","step":0}
{"ts":"2026-11-30T11:10:52.802Z","operation":"mcp.request","server":"tickets","method":"tools/call","tool":"open_ticket","outcome":"input_required","ms":0.4,"trace_id":"t1","step":2}
{"ts":"2026-11-30T11:10:52.804Z","operation":"mcp.request","server":"tickets","method":"tools/call","tool":"open_ticket","outcome":"tool_error","ms":0.3,"trace_id":"t1","step":2}
`),
		Wire: []byte(`{"ms":18.3,"server":"tickets","dir":"->","kind":"request","id":3,"method":"tools/call","bytes":587,"message":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"dev.hosteval/trace_id":"t1","dev.hosteval/step":2},"name":"open_ticket","arguments":{"host":"jump-prod-02"}}}}
{"ms":18.9,"server":"tickets","dir":"<-","kind":"result","id":3,"method":"tools/call","bytes":813,"message":{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create"}}}}}
`),
	}
	return rec, logs
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestTranscriptGolden(t *testing.T) {
	rec, logs := triage()
	tr := NewTranscript("r1", rec, logs)
	var text, md, html bytes.Buffer
	if err := WriteTranscriptText(&text, tr, 0); err != nil {
		t.Fatal(err)
	}
	if err := WriteTranscriptMarkdown(&md, tr, RelativeLogs); err != nil {
		t.Fatal(err)
	}
	if err := WriteTranscriptHTML(&html, tr, RelativeLogs); err != nil {
		t.Fatal(err)
	}
	golden(t, "transcript.txt", text.Bytes())
	golden(t, "transcript.md", md.Bytes())
	golden(t, "transcript.html", html.Bytes())
}

// TestWireAnswerBeforeRequest: the trace tapes the two directions apart, so
// a fast answer can stand before its request; it is shown after it.
func TestWireAnswerBeforeRequest(t *testing.T) {
	wire := `{"ms":24.2,"server":"s","dir":"<-","kind":"result","id":3,"bytes":5,"message":{"jsonrpc":"2.0","id":3,"result":{"content":[]}}}
{"ms":24.4,"server":"s","dir":"->","kind":"request","id":3,"method":"tools/call","bytes":5,"message":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"dev.hosteval/trace_id":"t","dev.hosteval/step":1},"name":"a"}}}
{"ms":30,"server":"s","dir":"<-","kind":"result","id":3,"bytes":5,"message":{"jsonrpc":"2.0","id":3,"result":{"content":[]}}}
`
	var got []string
	for _, w := range parseWire([]byte(wire)).of("t", 1) {
		got = append(got, wireHead(w))
	}
	want := []string{"+24.4 ms -> request tools/call #3, 5 B", "+24.2 ms <- result tools/call #3, 5 B"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("wire (-want +got):\n%s", diff)
	}
}

// TestTranscriptRealModels: a replayed request, the model's malformed
// output and a judge's grade (one that held, one that failed) are told in
// every layout.
func TestTranscriptRealModels(t *testing.T) {
	rec := &record.Record{
		CaseID: "r#0", Scenario: "r", Model: "openai:gpt-oss-120b", Status: record.StatusFail,
		Turns:       []record.Turn{{Question: "q?", TraceID: "aaa", Requests: 2}},
		ToolChanges: []record.ToolChange{{Turn: 1, Index: 2, Server: "cmdb", Added: []string{"cmdb__decommission"}, Tools: 3, ToolDefBytes: 2048, ToolDefTokens: 512}},
		Calls: []record.Call{{TraceID: "aaa", Step: 1, Name: "cmdb__get_asset", Server: "cmdb", Tool: "get_asset", Outcome: "ok", Rounds: 1,
			Progress: &record.Progress{Count: 3, Progress: 3, Total: ptr(4.0), Message: "scanning", Extended: 2}}},
		ModelRequests: []record.ModelRequest{
			{TraceID: "aaa", Turn: 1, Index: 1, MS: 812, ToolCalls: 1, ModelAnswer: record.ModelAnswer{Replayed: record.ReplayedCassette, Cost: 0.0012}},
			{TraceID: "aaa", Turn: 1, Index: 2, Error: "does not match the expected format", ModelAnswer: record.ModelAnswer{Outcome: record.OutcomeModelError}},
		},
		Expectations: []record.Expectation{
			{Name: "judge helpful", Line: 7, Passed: true},
			{Name: "judge names the owner", Line: 8, Detail: "score 0.20 < 0.70 (judge gpt-oss): no owner named"},
		},
		CaseModels: record.CaseModels{Judgements: []record.Judgement{
			{Line: 7, Judge: "gpt-oss", Score: 0.9, Threshold: 0.7, Passed: true, Reason: "answers the question"},
			{Line: 8, Judge: "gpt-oss", Score: 0.2, Threshold: 0.7, Reason: "no owner named"},
		}},
	}
	tr := NewTranscript("run", rec, CaseLogs{})
	for _, layout := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"text", func(b *bytes.Buffer) error { return WriteTranscriptText(b, tr, 0) }},
		{"markdown", func(b *bytes.Buffer) error { return WriteTranscriptMarkdown(b, tr, TranscriptLinks{}) }},
		{"html", func(b *bytes.Buffer) error { return WriteTranscriptHTML(b, tr, TranscriptLinks{}) }},
	} {
		var b bytes.Buffer
		if err := layout.write(&b); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"replayed from the cassette (usage and time as recorded)",
			"3 notifications of progress, the last 3 of 4 (scanning), which gave the round more time 2 times",
			"the tools of cmdb changed before it (added cmdb__decommission): 3 tools offered now, 2048 B (512 tokens)",
			"cost 0.0012",
			"the model's malformed output (model_error)",
			"score 0.90 >= 0.70 (judge gpt-oss): answers the question",
			"score 0.20 < 0.70 (judge gpt-oss): no owner named",
		} {
			// Each layout escapes in its own way; the words are the same.
			got := html.UnescapeString(strings.NewReplacer(`\_`, "_", `\<`, "<").Replace(b.String()))
			if !strings.Contains(got, want) {
				t.Errorf("%s: no %q in\n%s", layout.name, want, b.String())
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }
