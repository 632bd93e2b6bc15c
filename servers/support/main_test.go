package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/servers/fixturetest"
	"github.com/hosteval/hosteval/servers/internal/fixture"
)

var bin string

func TestMain(m *testing.M) {
	os.Exit(fixturetest.Main(m, "github.com/hosteval/hosteval/servers/support", &bin))
}

func call(t *testing.T, s *fixturetest.Server, step int, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args, Meta: fixturetest.Meta("trace-support", step)})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func search(t *testing.T, s *fixturetest.Server, step int, args map[string]any) searchOut {
	t.Helper()
	res := call(t, s, step, "search_knowledge", args)
	if res.IsError {
		t.Fatalf("search_knowledge %v: %s", args, fixturetest.Text(res))
	}
	out := fixturetest.Structured[searchOut](t, res)
	if len(out.Results) > maxHits {
		t.Errorf("%d results, want at most %d", len(out.Results), maxHits)
	}
	for _, h := range out.Results {
		if n := utf8.RuneCountInString(h.Snippet); n > maxSnippet || n == 0 {
			t.Errorf("%s: snippet of %d characters, want 1 to %d", h.DocID, n, maxSnippet)
		}
	}
	return out
}

func TestToolsList(t *testing.T) {
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto})
			res, err := s.Session.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			schemas := map[string]string{}
			for _, tool := range res.Tools {
				if a := tool.Annotations; a == nil || !a.ReadOnlyHint || !a.IdempotentHint {
					t.Errorf("%s: annotations %+v, want read-only", tool.Name, a)
				}
				if tool.OutputSchema == nil || len(tool.Description) < 100 {
					t.Errorf("%s: output schema %v, description %q", tool.Name, tool.OutputSchema != nil, tool.Description)
				}
				b, _ := json.Marshal(tool.InputSchema)
				schemas[tool.Name] = string(b)
			}
			for tool, want := range map[string][]string{
				"search_knowledge": {`"minLength":3`, `"maxLength":200`, `"minimum":1`, `"maximum":5`, `"default":3`, `"required":["query"]`},
				"get_ticket":       {`"pattern":"^T-\\d{5}$"`, `"required":["ticket_id"]`, `T-30002`},
			} {
				for _, w := range want {
					if !strings.Contains(schemas[tool], w) {
						t.Errorf("%s input schema %s lacks %s", tool, schemas[tool], w)
					}
				}
			}
		})
	}
}

func TestTools(t *testing.T) {
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto})

			t.Run("search", func(t *testing.T) {
				out := search(t, s, 1, map[string]any{"query": "What is the return window?"})
				if out.Query != "What is the return window?" || len(out.Results) != 3 {
					t.Fatalf("got %+v, want the query and 3 results (the default limit)", out)
				}
				top := out.Results[0]
				if top.URI != "policy://larkfield/returns-and-exchanges" || !strings.Contains(top.Snippet, "30 days") {
					t.Errorf("top result %+v, want the returns policy saying 30 days", top)
				}
				if top.Text != "" {
					t.Errorf("full text sent outside large-result mode")
				}
			})
			t.Run("search charged twice", func(t *testing.T) {
				out := search(t, s, 2, map[string]any{"query": "Charged twice for order LK-182074", "limit": 1})
				if len(out.Results) != 1 || out.Results[0].DocID != "refunds-and-payments" {
					t.Errorf("got %+v, want only the refunds policy", out.Results)
				}
			})
			t.Run("search limit 5", func(t *testing.T) {
				if out := search(t, s, 3, map[string]any{"query": "order delivery refund return days", "limit": 5}); len(out.Results) != 5 {
					t.Errorf("%d results, want 5", len(out.Results))
				}
			})
			t.Run("search nothing", func(t *testing.T) {
				if out := search(t, s, 4, map[string]any{"query": "xylophone"}); len(out.Results) != 0 {
					t.Errorf("got %+v, want no results", out.Results)
				}
			})
			t.Run("get_ticket", func(t *testing.T) {
				res := call(t, s, 5, "get_ticket", map[string]any{"ticket_id": "T-30002"})
				got := fixturetest.Structured[supportTicket](t, res)
				if got.Subject != "Charged twice for order LK-182074" || got.CustomerName != "Daan" || got.Status != "open" {
					t.Errorf("ticket = %+v", got)
				}
				var authors []string
				for _, m := range got.LastMessages {
					authors = append(authors, m.Author)
				}
				if diff := cmp.Diff([]string{"customer", "customer", "agent"}, authors); diff != "" {
					t.Errorf("last messages' authors (-want +got):\n%s", diff)
				}
			})
			t.Run("errors", func(t *testing.T) {
				tests := []struct {
					tool string
					args map[string]any
					want string
				}{
					{tool: "get_ticket", args: map[string]any{"ticket_id": "T-99999"}, want: "there is no ticket T-99999 in larkfield's help desk"},
					{tool: "get_ticket", args: map[string]any{"ticket_id": "30002"}, want: "pattern"},
					{tool: "search_knowledge", args: map[string]any{"query": "ab"}, want: "minLength"},
					{tool: "search_knowledge", args: map[string]any{"query": strings.Repeat("a", 201)}, want: "maxLength"},
					{tool: "search_knowledge", args: map[string]any{"query": "refunds", "limit": 6}, want: "maximum"},
				}
				for _, tt := range tests {
					res := call(t, s, 6, tt.tool, tt.args)
					if !res.IsError || !strings.Contains(fixturetest.Text(res), tt.want) {
						t.Errorf("%s %v: got isError=%v %q, want a tool error about %s", tt.tool, tt.args, res.IsError, fixturetest.Text(res), tt.want)
					}
				}
			})
			t.Run("log", func(t *testing.T) {
				e := s.Stderr.WaitEntry(t, fixturetest.Timeout, fixturetest.ToolCall("get_ticket", "trace-support", 5))
				want := fixture.Entry{
					Operation: fixture.OpRequest, Server: "support", Method: "tools/call", Tool: "get_ticket",
					Outcome: fixture.OutcomeOK, Protocol: proto, SessionID: fixturetest.SessionID, TraceID: "trace-support", Step: 5,
				}
				if diff := cmp.Diff(want, e, fixturetest.IgnoreTimes); diff != "" {
					t.Errorf("log line (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestOrganisation(t *testing.T) {
	s := fixturetest.Start(t, bin, fixturetest.Options{Env: []string{"SUPPORT_ORG=harbour"}})
	out := search(t, s, 1, map[string]any{"query": "gift cards", "limit": 1})
	if len(out.Results) != 1 || out.Results[0].URI != "policy://harbour/gift-cards-and-vouchers" || !strings.Contains(out.Results[0].Snippet, "Harbour") {
		t.Errorf("got %+v, want harbour's gift card policy", out.Results)
	}
}

// TestSlowSearchFinishesAfterCancel: a timeout stops the waiting, not the
// work. The client gives up and sends notifications/cancelled; the search
// still finishes, answers and logs its line.
func TestSlowSearchFinishesAfterCancel(t *testing.T) {
	const slow = time.Second
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto, Env: []string{"SUPPORT_SLOW_SECONDS=1"}})
			ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := s.Session.CallTool(ctx, &mcp.CallToolParams{
				Name: "search_knowledge", Arguments: map[string]any{"query": "return window"}, Meta: fixturetest.Meta("trace-slow", 1),
			})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v, want the caller's deadline", err)
			}
			if waited := time.Since(start); waited >= slow {
				t.Errorf("the caller waited %v, as long as the search", waited)
			}
			cancelled := s.Stderr.WaitEntry(t, fixturetest.Timeout, func(e fixture.Entry) bool { return e.Method == "notifications/cancelled" })
			if cancelled.Protocol != proto {
				t.Errorf("notifications/cancelled logged under %q, want %s", cancelled.Protocol, proto)
			}
			e := s.Stderr.WaitEntry(t, fixturetest.Timeout, fixturetest.ToolCall("search_knowledge", "trace-slow", 1))
			if e.Outcome != fixture.OutcomeOK || e.MS < float64(slow.Milliseconds()) {
				t.Errorf("search logged as %s after %v ms, want ok after at least %d ms", e.Outcome, e.MS, slow.Milliseconds())
			}
			// The server still serves (get_ticket is not slowed down).
			if res := call(t, s, 2, "get_ticket", map[string]any{"ticket_id": "T-30001"}); res.IsError {
				t.Errorf("get_ticket after the cancelled search: %s", fixturetest.Text(res))
			}
		})
	}
}

// TestSlowSearchDrainsOnClose: a host that hangs up with a search in
// flight does not cut it short; the server finishes it, logs it, and exits
// by itself once it has, without needing a signal.
func TestSlowSearchDrainsOnClose(t *testing.T) {
	const slow = time.Second
	s := fixturetest.Start(t, bin, fixturetest.Options{Env: []string{"SUPPORT_SLOW_SECONDS=1"}, TerminateDuration: 5 * time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := s.Session.CallTool(ctx, &mcp.CallToolParams{
		Name: "search_knowledge", Arguments: map[string]any{"query": "return window"}, Meta: fixturetest.Meta("trace-drain", 1),
	}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the caller's deadline", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v, want a clean exit", err)
	}
	if took := time.Since(start); took < slow {
		t.Errorf("the server exited after %v, before the search could finish", took)
	}
	if code := s.Cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	if e := s.Stderr.WaitEntry(t, fixturetest.Timeout, fixturetest.ToolCall("search_knowledge", "trace-drain", 1)); e.Outcome != fixture.OutcomeOK {
		t.Errorf("search logged as %s, want ok", e.Outcome)
	}
}

// TestSlowSearchReportsProgress: a slow search reports its progress to a
// caller that sent a progress token, every SUPPORT_PROGRESS_SECONDS, and to
// no other.
func TestSlowSearchReportsProgress(t *testing.T) {
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			var (
				mu      sync.Mutex
				reports []*mcp.ProgressNotificationParams
			)
			client := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				reports = append(reports, req.Params)
				mu.Unlock()
			}}
			s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto, Client: client,
				Env: []string{"SUPPORT_SLOW_SECONDS=0.6", "SUPPORT_PROGRESS_SECONDS=0.1"}})
			meta := fixturetest.Meta("trace-progress", 1)
			meta["progressToken"] = "tok-1"
			res, err := s.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_knowledge", Arguments: map[string]any{"query": "return window"}, Meta: meta})
			if err != nil || res.IsError {
				t.Fatalf("search: %v %v", err, res)
			}
			// Without a token: no reports.
			call(t, s, 2, "search_knowledge", map[string]any{"query": "return window"})
			mu.Lock()
			defer mu.Unlock()
			// 6 ticks in 0.6 s, give or take what a busy machine does to timers.
			if len(reports) < 2 || len(reports) > 6 {
				t.Fatalf("%d progress reports, want 2 to 6", len(reports))
			}
			for i, r := range reports {
				if r.ProgressToken != "tok-1" || r.Total != 0.6 || r.Progress >= r.Total || r.Message != "searching larkfield's policies" ||
					(i > 0 && r.Progress <= reports[i-1].Progress) {
					t.Errorf("report %d: %+v; want tok-1, rising progress below its total 0.6, the message", i, r)
				}
			}
		})
	}
}

// TestGrowsAfterTheFirstCall: FIXTURE_GROW adds a tool once the first call
// is answered, and the client hears of it before that answer: on the
// session under 2025-11-25, on its subscriptions/listen stream under
// 2026-07-28.
func TestGrowsAfterTheFirstCall(t *testing.T) {
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			changed := make(chan struct{}, 4)
			client := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }}
			s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto, Client: client, Env: []string{"FIXTURE_GROW=escalate"}})
			names := func() []string {
				res, err := s.Session.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, tool := range res.Tools {
					out = append(out, tool.Name)
				}
				return out
			}
			if got := names(); slices.Contains(got, "escalate") {
				t.Fatalf("tools before any call: %v, want no escalate yet", got)
			}
			call(t, s, 1, "get_ticket", map[string]any{"ticket_id": "T-30001"})
			select {
			case <-changed:
			case <-time.After(fixturetest.Timeout):
				t.Fatal("no tools/list_changed after the first call")
			}
			if got := names(); !slices.Contains(got, "escalate") {
				t.Errorf("tools after the first call: %v, want escalate", got)
			}
			res := call(t, s, 2, "escalate", nil)
			if text := fixturetest.Text(res); text != `{"tool":"escalate"}` {
				t.Errorf("escalate answered %q", text)
			}
		})
	}
}

func TestBigResults(t *testing.T) {
	s := fixturetest.Start(t, bin, fixturetest.Options{Env: []string{"SUPPORT_BIG_RESULTS=1"}})
	res := call(t, s, 1, "search_knowledge", map[string]any{"query": "refund order return delivery"})
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 20_000 || len(b) > 45_000 {
		t.Errorf("structuredContent is %d bytes, want 20-45 KB", len(b))
	}
	out := fixturetest.Structured[searchOut](t, res)
	for _, h := range out.Results {
		if !strings.Contains(h.Text, "Worked examples") {
			t.Errorf("%s: no full text in large-result mode", h.DocID)
		}
	}
}

func TestOtherOrganisationIsForbidden(t *testing.T) {
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto, Env: []string{"SUPPORT_CALLER_ORG=harbour"}})
			tools, err := s.Session.ListTools(t.Context(), nil)
			if err != nil || len(tools.Tools) != 2 {
				t.Fatalf("tools/list: %v, %d tools; want it to work", err, len(tools.Tools))
			}
			_, err = s.Session.CallTool(t.Context(), &mcp.CallToolParams{
				Name: "get_ticket", Arguments: map[string]any{"ticket_id": "T-30002"}, Meta: fixturetest.Meta("trace-forbidden", 1),
			})
			// go-sdk v1.8.0 quirk: -32003 is also the code of its internal
			// "client is closing" error, so the client reports this refusal as
			// mcp.ErrConnectionClosed and drops the *jsonrpc.Error from the
			// chain, keeping only its message. The session is not closed.
			var werr *jsonrpc.Error
			if err == nil || !strings.Contains(err.Error(), "forbidden: you have no access to this organization") {
				t.Fatalf("got %v, want the forbidden error", err)
			}
			if !errors.Is(err, mcp.ErrConnectionClosed) || errors.As(err, &werr) {
				t.Errorf("got %#v; the SDK no longer reports -32003 as a closed connection: update the host and this test", err)
			}
			if _, err := s.Session.ListTools(t.Context(), nil); err != nil {
				t.Errorf("after the refusal tools/list fails: %v; want the session alive", err)
			}
			// The code itself is on the wire, as the server's log shows.
			e := s.Stderr.WaitEntry(t, fixturetest.Timeout, fixturetest.ToolCall("get_ticket", "trace-forbidden", 1))
			if e.Outcome != fixture.OutcomeError || e.ErrorCode != codeForbidden {
				t.Errorf("logged as %s %d, want error -32003", e.Outcome, e.ErrorCode)
			}
		})
	}
}

func TestBadEnvironmentStopsTheServer(t *testing.T) {
	tests := []struct{ env, want string }{
		{env: "SUPPORT_SLOW_SECONDS=soon", want: `support: SUPPORT_SLOW_SECONDS: want a number of seconds from 0 to 3600, got "soon"`},
		{env: "SUPPORT_SLOW_SECONDS=-1", want: `support: SUPPORT_SLOW_SECONDS: want a number of seconds from 0 to 3600, got "-1"`},
		{env: "SUPPORT_BIG_RESULTS=yes", want: `support: SUPPORT_BIG_RESULTS: want 1 or 0, got "yes"`},
		{env: "SUPPORT_PROGRESS_SECONDS=0", want: `support: SUPPORT_PROGRESS_SECONDS: want a number of seconds over 0, up to 3600, got "0"`},
		{env: "FIXTURE_GROW=Bad-Name", want: `support: FIXTURE_GROW="Bad-Name": want a tool name (lower-case letters, digits and _)`},
		{env: "SUPPORT_ORG=Acme Corp", want: `support: SUPPORT_ORG: "Acme Corp" is not an organisation id`},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			s, err := fixturetest.StartErr(t, bin, fixturetest.Options{Env: []string{tt.env}})
			if err == nil {
				t.Fatal("connected, want the server to stop")
			}
			if !strings.Contains(s.Stderr.String(), tt.want) || s.Cmd.ProcessState.ExitCode() != 2 {
				t.Errorf("stderr %q, %v; want %q and exit status 2", s.Stderr, s.Cmd.ProcessState, tt.want)
			}
		})
	}
}
