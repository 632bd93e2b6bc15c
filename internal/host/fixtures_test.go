package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// logLines collects JSON lines written to it (a server log, the host's
// log, a wire trace), safe for concurrent writers.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// entries returns every complete line that is a JSON object matching all of
// the given key/value pairs (compared as fmt.Sprint of the value).
func (l *logLines) entries(match map[string]any) []map[string]any {
	l.mu.Lock()
	data := append([]byte(nil), l.buf.Bytes()...)
	l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(data, []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		ok := true
		for k, v := range match {
			if fmt.Sprint(m[k]) != fmt.Sprint(v) {
				ok = false
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// waitFor waits until entries(match) is not empty, or fails.
func (l *logLines) waitFor(t *testing.T, match map[string]any, timeout time.Duration) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if e := l.entries(match); len(e) > 0 {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line matching %v within %v", match, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// setToolTimeout changes the host's tool timeout between two calls, for a
// test whose one call must time out and whose others must not: only that
// call gets the tiny budget, and a call that must succeed gets one far
// above any load. Nothing of the host's may be in flight.
func (h *Host) setToolTimeout(d time.Duration) { h.opts.ToolTimeout = d }

// code shows a call's error code, "none" for none.
func code(ev record.Call) string {
	if ev.ErrorCode == nil {
		return "none"
	}
	return fmt.Sprint(*ev.ErrorCode)
}

// script builds a scripted model from YAML steps.
func script(t *testing.T, steps string) model.Model {
	t.Helper()
	var s []model.ScriptStep
	if err := yamlx.Decode("script", []byte(steps), &s, nil); err != nil {
		t.Fatal(err)
	}
	m, err := model.New(model.Config{Scripted: s})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestUnknownToolNeverReachesTheServer(t *testing.T) {
	t.Parallel()
	var serverLog logLines
	h := startHost(t, Options{Servers: []ServerSpec{fixture("support")}, ServerLog: &serverLog})
	for _, name := range []string{"delete_everything", "support__delete_ticket", "search_knowledge"} {
		text, ev := call(t, h, name, `{"ticket_id": "T-30002"}`)
		if ev.Outcome != record.OutcomeUnknownTool || ev.Rounds != 0 {
			t.Errorf("%s: outcome %s, rounds %d; want unknown_tool, 0", name, ev.Outcome, ev.Rounds)
		}
		if want := fmt.Sprintf("error: there is no tool named %q. Use only the tools you were given.", name); text != want {
			t.Errorf("%s: text = %q, want %q", name, text, want)
		}
	}
	h.Close()
	if got := serverLog.entries(map[string]any{"method": "tools/call"}); len(got) != 0 {
		t.Errorf("the server logged %d tools/call requests, want none: %v", len(got), got)
	}
}

func TestSlowToolTimesOutAndTheServerFinishes(t *testing.T) {
	t.Parallel()
	var serverLog, wire logLines
	h := startHost(t, Options{
		Servers: []ServerSpec{fixture("support", "SUPPORT_SLOW_SECONDS=3")},
		Budgets: budget.Budgets{ToolTimeout: 300 * time.Millisecond}, ServerLog: &serverLog, Wire: &wire,
	})
	text, ev := call(t, h, "support__search_knowledge", `{"query": "What is the return window?"}`)
	if ev.Outcome != record.OutcomeTimeout {
		t.Fatalf("outcome = %s, want timeout", ev.Outcome)
	}
	if want := "error: no answer within 0.3 seconds. The server may still finish the work: don't repeat a call that changes something."; text != want {
		t.Errorf("text = %q\nwant   %q", text, want)
	}
	// Not a timing test: the host stopped waiting well before the server's
	// 3 s, whatever the load.
	if ev.MS < 300 || ev.MS > 2500 {
		t.Errorf("the host waited %.0f ms, want 300 and not the server's 3000", ev.MS)
	}
	// The timeout stops the waiting, not the work: the SDK tells the server
	// the call was cancelled, and the server still finishes and logs it.
	wire.waitFor(t, map[string]any{"stream": "stdin", "method": "notifications/cancelled"}, 10*time.Second)
	done := serverLog.waitFor(t, map[string]any{"method": "tools/call", "tool": "search_knowledge", "outcome": "ok"}, 20*time.Second)
	if ms := done[0]["ms"].(float64); ms < 2900 {
		t.Errorf("the server logged the search after %.0f ms, want about 3000", ms)
	}
	// The turn goes on: the server still answers.
	if _, ev := call(t, h, "support__get_ticket", `{"ticket_id": "T-30002"}`); ev.Outcome != record.OutcomeOK {
		t.Errorf("the next call's outcome = %s, want ok", ev.Outcome)
	}
}

func TestOversizedResultIsCutAndLabelled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, server, tool, args string
		env                      []string
		budget                   int
	}{
		{"support big results", "support", "search_knowledge", `{"query": "refund policy"}`, []string{"SUPPORT_BIG_RESULTS=1"}, 4000},
		{"cmdb limit 50", "cmdb", "find_assets", `{"service": "customer-db", "env": "prod", "limit": 50}`, nil, 4000},
		{"a small budget", "cmdb", "find_assets", `{"limit": 50}`, nil, 600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startHost(t, Options{Servers: []ServerSpec{fixture(tt.server, tt.env...)}, Budgets: budget.Budgets{MaxResultBytes: tt.budget}})
			text, ev := call(t, h, tt.server+"__"+tt.tool, tt.args)
			if ev.Outcome != record.OutcomeOK || !ev.Clipped || !ev.Structured {
				t.Fatalf("outcome %s, clipped %v, structured %v; want ok, true, true", ev.Outcome, ev.Clipped, ev.Structured)
			}
			if ev.ResultBytes > tt.budget || ev.ResultBytes != len(text) || ev.RawBytes <= tt.budget {
				t.Errorf("result_bytes %d (text %d), raw_bytes %d; want at most %d and raw over it", ev.ResultBytes, len(text), ev.RawBytes, tt.budget)
			}
			if note := fmt.Sprintf("[result cut to %d bytes by the host: ask for less, e.g. with a filter or a smaller limit]", tt.budget); !strings.HasSuffix(text, note) {
				t.Errorf("text does not end with the note %q", note)
			}
		})
	}
}

func TestProtocolErrorReachesTheModel(t *testing.T) {
	t.Parallel()
	h := startHost(t, Options{Servers: []ServerSpec{fixture("support", "SUPPORT_CALLER_ORG=harbour")}})
	if n := len(h.Offered()); n != 2 {
		t.Errorf("discovery offered %d tools, want 2: discovery works for a caller without access", n)
	}
	text, ev := call(t, h, "support__get_ticket", `{"ticket_id": "T-30002"}`)
	if ev.Outcome != record.OutcomeError || code(ev) != "-32003" {
		t.Errorf("outcome %s, code %s; want error, -32003", ev.Outcome, code(ev))
	}
	if want := "error: forbidden: you have no access to this organization"; text != want {
		t.Errorf("text = %q, want %q", text, want)
	}
}

func TestProtocolModes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		server string
		args   []string
		mode   Mode
		want   record.Server // Protocol, Offered, Restarted, VersionFailure, EraReason
		errHas string
	}{
		{"cmdb", nil, ModeAuto, record.Server{Protocol: "2026-07-28", Offered: "2026-07-28", EraReason: "answered discover"}, ""},
		{"cmdb", nil, ModeLegacy, record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", EraReason: "legacy mode"}, ""},
		{"cmdb", nil, ModePinned, record.Server{Protocol: "2026-07-28", Offered: "2026-07-28", EraReason: "answered discover"}, ""},
		{"legacy", []string{"-discover=unknown"}, ModeAuto, record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", EraReason: "discover error code -32601"}, ""},
		{"legacy", []string{"-discover=unsupported"}, ModeAuto, record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", EraReason: "discover error code -32022"}, ""},
		// The silent server answers the host's ping, so the host knows it
		// reads requests and does not wait out the discover budget.
		{"legacy", []string{"-discover=silent"}, ModeAuto, record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", Restarted: true, EraReason: "answered ping, not discover"}, ""},
		{"legacy", []string{"-discover=unknown"}, ModeLegacy, record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", EraReason: "legacy mode"}, ""},
		// Pinned refuses on the answer to discover: nothing of the legacy
		// handshake is sent, so what the server offers is known only when
		// discover says.
		{"legacy", []string{"-discover=unknown"}, ModePinned, record.Server{VersionFailure: true, EraReason: "discover error code -32601"},
			"server legacy does not speak 2026-07-28 (server/discover: error -32601): the protocol mode is pinned to 2026-07-28"},
		{"legacy", []string{"-discover=unsupported"}, ModePinned, record.Server{Offered: "2025-11-25", VersionFailure: true, EraReason: "discover error code -32022"},
			"server legacy does not speak 2026-07-28 (server/discover: error -32022)"},
		{"legacy", []string{"-discover=silent"}, ModePinned, record.Server{VersionFailure: true, EraReason: "answered ping, not discover"},
			"server legacy did not answer server/discover (answered ping, not discover; pinned to 2026-07-28)"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s%v/%s", tt.server, tt.args, tt.mode), func(t *testing.T) {
			t.Parallel()
			spec := fixture(tt.server)
			spec.Args = tt.args
			h, err := Start(context.Background(), Options{Servers: []ServerSpec{spec}, Protocol: tt.mode})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if !checkConnection(t, h, tt.want, tt.errHas) {
				return
			}
			if tt.server == "legacy" {
				text, ev := call(t, h, "legacy__hello", `{"name": "Amira"}`)
				if text != `{"greeting":"Hello, Amira!"}` || ev.Protocol != "2025-11-25" {
					t.Errorf("hello -> %q over %s, want Hello, Amira! over 2025-11-25", text, ev.Protocol)
				}
			}
		})
	}
}

// checkConnection checks how the host's first server connected: its
// revision, what it offered, a restart, a version failure, and an error
// containing errHas (none when errHas is empty; a failed server then offers
// no tools). It reports whether the server connected.
func checkConnection(t *testing.T, h *Host, want record.Server, errHas string) bool {
	t.Helper()
	s := h.Servers()[0]
	got := record.Server{Protocol: s.Protocol, Offered: s.Offered, Restarted: s.Restarted, VersionFailure: s.VersionFailure, EraReason: s.EraReason}
	if got != want {
		t.Errorf("server = %+v\nwant     %+v", got, want)
	}
	if errHas == "" && s.Error != "" || !strings.Contains(s.Error, errHas) {
		t.Errorf("error = %q, want it to contain %q", s.Error, errHas)
	}
	if errHas != "" {
		if n := len(h.Tools()); n != 0 {
			t.Errorf("a server that failed offers %d tools, want none", n)
		}
		return false
	}
	return true
}

// recordingApprover answers every approval with yes or no and remembers.
type recordingApprover struct {
	mu    sync.Mutex
	yes   bool
	asked []ApprovalRequest
}

func (r *recordingApprover) Approve(_ context.Context, req ApprovalRequest) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, req)
	return r.yes, nil
}

func TestApprovalForEffects(t *testing.T) {
	t.Parallel()
	for _, yes := range []bool{false, true} {
		t.Run(fmt.Sprintf("approve=%v", yes), func(t *testing.T) {
			var serverLog logLines
			ap := &recordingApprover{yes: yes}
			el := &recordingElicitor{answer: ElicitAnswer{Action: ActionAccept, Content: map[string]any{"priority": "P2"}}}
			h := startHost(t, Options{Servers: []ServerSpec{fixture("cmdb"), fixture("tickets")}, Approver: ap, Elicitor: el, ServerLog: &serverLog})

			_, ev := call(t, h, "cmdb__get_asset", `{"hostname": "jump-prod-02"}`)
			if ev.Outcome != "ok" || ev.Approval != "auto" || len(ap.asked) != 0 {
				t.Fatalf("get_asset: outcome %s, approval %s, person asked %d times; want ok, auto, 0", ev.Outcome, ev.Approval, len(ap.asked))
			}
			text, ev := call(t, h, "tickets__open_ticket", `{"host": "jump-prod-02", "summary": "brute force then login"}`)
			if len(ap.asked) != 1 || ap.asked[0].Name != "tickets__open_ticket" || ap.asked[0].Server != "tickets" || ap.asked[0].Arguments["host"] != "jump-prod-02" {
				t.Fatalf("approvals asked = %+v, want one for tickets__open_ticket", ap.asked)
			}
			calls := serverLog.entries(map[string]any{"method": "tools/call", "tool": "open_ticket"})
			if !yes {
				if ev.Outcome != "denied" || ev.Approval != "denied" || ev.Rounds != 0 || ev.AskedUser {
					t.Errorf("denied call: %+v", ev)
				}
				if !strings.Contains(text, "did not approve") {
					t.Errorf("text = %q, want it to say the user did not approve", text)
				}
				h.Close()
				if calls = serverLog.entries(map[string]any{"method": "tools/call", "tool": "open_ticket"}); len(calls) != 0 {
					t.Errorf("a denied call reached the server: %v", calls)
				}
				return
			}
			if ev.Outcome != "ok" || ev.Approval != "approved" || ev.Rounds != 2 || !ev.AskedUser || len(ev.RoundMS) != 2 {
				t.Errorf("approved call: outcome %s, approval %s, rounds %d, asked %v, round_ms %v", ev.Outcome, ev.Approval, ev.Rounds, ev.AskedUser, ev.RoundMS)
			}
			if !strings.Contains(text, `"id":"INC-4100"`) || !strings.Contains(text, `"priority":"P2"`) {
				t.Errorf("text = %s, want ticket INC-4100 with priority P2", text)
			}
		})
	}
}

func TestTicketConfirmation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		mode          Mode
		noElicitation bool
		answer        ElicitAnswer
		answerErr     error
		wantOutcome   string
		wantText      string
		wantRounds    int
		wantAsked     bool
	}{
		{"accept", ModeAuto, false, ElicitAnswer{Action: ActionAccept, Content: map[string]any{"priority": "P1"}}, nil, "ok", `"id":"INC-4100"`, 2, true},
		{"accept over 2025-11-25", ModeLegacy, false, ElicitAnswer{Action: ActionAccept, Content: map[string]any{"priority": "P1"}}, nil, "ok", `"id":"INC-4100"`, 1, true},
		{"decline", ModeAuto, false, ElicitAnswer{Action: ActionDecline}, nil, "tool_error", "declined: no ticket was opened", 2, true},
		{"decline over 2025-11-25", ModeLegacy, false, ElicitAnswer{Action: ActionDecline}, nil, "tool_error", "declined: no ticket was opened", 1, true},
		{"cancel", ModeAuto, false, ElicitAnswer{Action: ActionCancel}, nil, "tool_error", "closed the form: no ticket was opened", 2, true},
		{"an answer the form does not allow is declined, not sent", ModeAuto, false, ElicitAnswer{Action: ActionAccept, Content: map[string]any{"priority": "P7"}}, nil, "tool_error", "declined: no ticket was opened", 2, true},
		{"the same over 2025-11-25", ModeLegacy, false, ElicitAnswer{Action: ActionAccept, Content: map[string]any{"priority": "P1", "owner": "me"}}, nil, "tool_error", "declined: no ticket was opened", 1, true},
		{"no canned answer", ModeAuto, false, ElicitAnswer{}, ErrNoAnswer, "tool_error", "declined: no ticket was opened", 2, true},
		{"no elicitation capability", ModeAuto, true, ElicitAnswer{}, nil, "tool_error", "No ticket was opened", 1, false},
		{"no elicitation capability over 2025-11-25", ModeLegacy, true, ElicitAnswer{}, nil, "tool_error", "No ticket was opened", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			el := &recordingElicitor{answer: tt.answer, err: tt.answerErr}
			h := startHost(t, Options{Servers: []ServerSpec{fixture("tickets")}, Protocol: tt.mode, NoElicitation: tt.noElicitation,
				Elicitor: el, Approver: CannedApprovals{Tools: []string{"tickets__open_ticket"}}})
			text, ev := call(t, h, "tickets__open_ticket", `{"host": "jump-prod-02", "summary": "brute force then login"}`)
			if ev.Outcome != tt.wantOutcome || ev.Rounds != tt.wantRounds || ev.AskedUser != tt.wantAsked {
				t.Errorf("outcome %s, rounds %d, asked %v; want %s, %d, %v", ev.Outcome, ev.Rounds, ev.AskedUser, tt.wantOutcome, tt.wantRounds, tt.wantAsked)
			}
			if !strings.Contains(text, tt.wantText) {
				t.Errorf("text = %q, want it to contain %q", text, tt.wantText)
			}
			if tt.wantAsked {
				if len(el.asked) != 1 {
					t.Fatalf("the person was asked %d times, want 1", len(el.asked))
				}
				q := el.asked[0]
				if q.Server != "tickets" || q.Tool != "open_ticket" || !strings.Contains(q.Message, "jump-prod-02") {
					t.Errorf("question = %+v, want tickets asking about jump-prod-02", q)
				}
			}
			_, list := call(t, h, "tickets__list_tickets", `{}`)
			wantTotal := 0
			if tt.wantOutcome == "ok" {
				wantTotal = 1
			}
			if !strings.Contains(list.Result, fmt.Sprintf(`"total":%d`, wantTotal)) {
				t.Errorf("list_tickets = %s, want total %d", list.Result, wantTotal)
			}
		})
	}
}

func TestEventsJoinServerLogs(t *testing.T) {
	t.Parallel()
	var hostLog, serverLog logLines
	var (
		mu   sync.Mutex
		seen []record.Call
	)
	h := startHost(t, Options{
		Servers: []ServerSpec{fixture("cmdb"), fixture("tickets")}, Log: &hostLog, ServerLog: &serverLog,
		Calls: func(ev record.Call) {
			mu.Lock()
			seen = append(seen, ev)
			mu.Unlock()
		},
		Elicitor: Canned{Answers: []CannedAnswer{{Server: "tickets", Action: ActionAccept, Content: map[string]any{"priority": "P1"}}}},
		Approver: CannedApprovals{Tools: []string{"tickets__open_ticket"}},
	})
	m := script(t, `
- call: "cmdb__get_asset {hostname: jump-prod-02}"
- call: "tickets__open_ticket {host: jump-prod-02, summary: brute force then login}"
- answer: Opened INC-4100.
`)
	res, err := h.NewConversation(m, "").Ask(context.Background(), "who owns jump-prod-02? Open a ticket for it")
	if err != nil {
		t.Fatal(err)
	}
	h.Close() // every server line is in
	// Calls hears of each call with what the log line leaves out.
	mu.Lock()
	if diff := cmp.Diff(res.Calls, seen); diff != "" {
		t.Errorf("Calls heard (-turn +heard):\n%s", diff)
	}
	if len(seen) != 2 || seen[1].Arguments["host"] != "jump-prod-02" || !strings.Contains(seen[1].Result, "INC-4100") {
		t.Errorf("Calls heard %+v, want open_ticket's arguments and result", seen)
	}
	mu.Unlock()
	events := hostLog.entries(map[string]any{"operation": record.OpToolCall, "trace_id": res.TraceID})
	if len(events) != 2 {
		t.Fatalf("%d host.tool_call events for the trace, want 2", len(events))
	}
	want := map[string][]string{
		"1": {"ok"},                   // get_asset
		"2": {"input_required", "ok"}, // open_ticket: round 1 asks, round 2 opens
	}
	for _, ev := range events {
		step := fmt.Sprint(ev["step"])
		var outcomes []string
		for _, line := range serverLog.entries(map[string]any{"trace_id": res.TraceID, "step": step}) {
			if line["method"] == "tools/call" {
				outcomes = append(outcomes, line["outcome"].(string))
				if line["session_id"] != h.SessionID() {
					t.Errorf("server line session_id = %v, want %s", line["session_id"], h.SessionID())
				}
			}
		}
		if fmt.Sprint(outcomes) != fmt.Sprint(want[step]) {
			t.Errorf("step %s (%s): server outcomes %v, want %v", step, ev["tool"], outcomes, want[step])
		}
	}
}

func TestChaosNeverCrashesTheTurn(t *testing.T) {
	t.Parallel()
	// A result over the SDK's 16 MiB frame limit (17 MB here: the host reads
	// up to 64 MiB) takes seconds to read under -race, and minutes on a
	// busy machine (over 2 under 4 busy loops at load average 34): a call
	// that must succeed gets a budget far above any load, and only the
	// call that must time out a small one.
	opts := Options{Budgets: budget.Budgets{ToolTimeout: 10 * time.Minute}, Approver: CannedApprovals{Tools: []string{"chaos__*"}}}
	// Faults the server survives: the same server keeps answering.
	t.Run("recoverable", func(t *testing.T) {
		o := opts
		o.Servers = []ServerSpec{fixture("chaos")}
		h := startHost(t, o)
		tests := []struct{ tool, args, wantOutcome, wantText string }{
			{"ok", `{}`, "ok", ""},
			{"plain_error", `{}`, "error", "error: "},
			{"weird_content", `{}`, "error", `error: the server's answer could not be read`},
			{"huge", `{"bytes": 17000000}`, "ok", "[result cut to 4000 bytes by the host"},
			{"ok", `{}`, "ok", ""},
		}
		for _, tt := range tests {
			got, ev := call(t, h, "chaos__"+tt.tool, tt.args)
			if ev.Outcome != tt.wantOutcome || !strings.Contains(got, tt.wantText) {
				t.Errorf("%s: outcome %s, text %q; want %s, containing %q", tt.tool, ev.Outcome, text.Shorten(got, 300), tt.wantOutcome, tt.wantText)
			}
		}
	})
	t.Run("hang", func(t *testing.T) {
		o := opts
		o.Servers, o.ToolTimeout = []ServerSpec{fixture("chaos")}, 500*time.Millisecond
		h := startHost(t, o)
		text, ev := call(t, h, "chaos__hang", `{}`)
		if ev.Outcome != "timeout" || !strings.HasPrefix(text, "error: no answer within 0.5 seconds") {
			t.Errorf("hang: outcome %s, text %q; want timeout", ev.Outcome, text)
		}
		if _, ev := call(t, h, "chaos__ok", `{}`); ev.Outcome != "ok" {
			t.Errorf("the call after a hang: outcome %s, want ok", ev.Outcome)
		}
	})
	// Faults that end the server: that call and every later call to it are
	// errors that say why, and the process is reaped.
	for _, tt := range []struct{ tool, why string }{
		{"crash", "it exited with status 3"},
		// The garbage ends the connection; the server's death that follows
		// (SIGPIPE) is not the cause.
		{"garbage", `it wrote something that is not JSON-RPC on stdout: "garbage: this line is not JSON-RPC, a server printed it to stdout by mistake"`},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			o := opts
			o.Servers = []ServerSpec{fixture("chaos")}
			h := startHost(t, o)
			pid := h.servers["chaos"].proc.cmd.Process.Pid
			text, ev := call(t, h, "chaos__"+tt.tool, `{}`)
			if want := "error: the server chaos stopped working during the call (" + tt.why + "), so its tools can't be used now."; ev.Outcome != "error" || text != want {
				t.Errorf("outcome %s, text %q; want error, %q", ev.Outcome, text, want)
			}
			text, ev = call(t, h, "chaos__ok", `{}`)
			if want := "error: the server chaos has stopped working (" + tt.why + "), so its tools can't be used now."; ev.Outcome != "error" || ev.Rounds != 0 || text != want {
				t.Errorf("later call: outcome %s, rounds %d, text %q; want error, 0, %q", ev.Outcome, ev.Rounds, text, want)
			}
			h.Close()
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("the chaos server (pid %d) is still there after Close: %v", pid, err)
			}
		})
	}
}
