package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/servers/fixturetest"
	"github.com/hosteval/hosteval/servers/internal/fixture"
)

var bin string

func TestMain(m *testing.M) {
	os.Exit(fixturetest.Main(m, "github.com/hosteval/hosteval/servers/tickets", &bin))
}

const (
	sharedKey = "8f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
	host      = "jump-prod-02"
	summary   = "Brute force followed by a successful login from 203.0.113.77"
)

// manual is a 2026-07-28 client that declares form elicitation but runs no
// round itself, so that the test drives both rounds.
func manual(env ...string) fixturetest.Options {
	return fixturetest.Options{
		Protocol: fixturetest.Revision2026,
		Env:      env,
		Client: &mcp.ClientOptions{
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			Capabilities: &mcp.ClientCapabilities{
				Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}},
			},
		},
	}
}

func openArgs(h string) map[string]any { return map[string]any{"host": h, "summary": summary} }

// round1 calls open_ticket without a state and returns the question and
// the state it came with.
func round1(t *testing.T, s *fixturetest.Server, h string, step int) (*mcp.ElicitParams, string) {
	t.Helper()
	res, err := s.Session.CallTool(t.Context(), &mcp.CallToolParams{
		Name: toolOpenTicket, Arguments: openArgs(h), Meta: fixturetest.Meta("trace-tickets", step),
	})
	if err != nil {
		t.Fatalf("round 1: %v", err)
	}
	if !res.NeedsInput() || res.RequestState == "" || len(res.InputRequests) != 1 {
		t.Fatalf("round 1 = %+v, want input_required with one request and a state", res)
	}
	q, ok := res.InputRequests["confirm"].(*mcp.ElicitParams)
	if !ok {
		t.Fatalf("round 1 input requests = %v, want an elicitation keyed confirm", res.InputRequests)
	}
	return q, res.RequestState
}

// round2 answers the question with state, as a host does.
func round2(t *testing.T, s *fixturetest.Server, h, state string, answer *mcp.ElicitResult, step int) (*mcp.CallToolResult, error) {
	t.Helper()
	return s.Session.CallTool(t.Context(), &mcp.CallToolParams{
		Name:           toolOpenTicket,
		Arguments:      openArgs(h),
		InputResponses: mcp.InputResponseMap{"confirm": answer},
		RequestState:   state,
		Meta:           fixturetest.Meta("trace-tickets", step),
	})
}

func accept(priority any) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"priority": priority}}
}

func listTickets(t *testing.T, s *fixturetest.Server) listTicketsOut {
	t.Helper()
	res, err := s.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_tickets", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_tickets: %v %v", err, res)
	}
	return fixturetest.Structured[listTicketsOut](t, res)
}

func wantNoTickets(t *testing.T, s *fixturetest.Server) {
	t.Helper()
	if got := listTickets(t, s); got.Total != 0 {
		t.Errorf("tickets opened: %+v, want none", got.Tickets)
	}
}

func wantToolError(t *testing.T, res *mcp.CallToolResult, err error, wantText string) {
	t.Helper()
	if err != nil {
		t.Fatalf("got protocol error %v, want a tool error", err)
	}
	if !res.IsError || fixturetest.Text(res) != wantText {
		t.Errorf("got isError=%v %q, want a tool error %q", res.IsError, fixturetest.Text(res), wantText)
	}
}

func wantInvalidState(t *testing.T, res *mcp.CallToolResult, err error) {
	t.Helper()
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		t.Fatalf("got %+v, %v; want JSON-RPC error -32602", res, err)
	}
	if werr.Code != jsonrpc.CodeInvalidParams || werr.Message != "Invalid or expired requestState" {
		t.Errorf("got error %d %q, want -32602 %q", werr.Code, werr.Message, "Invalid or expired requestState")
	}
}

func TestToolsList(t *testing.T) {
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto})
			res, err := s.Session.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]mcp.ToolAnnotations{}
			for _, tool := range res.Tools {
				if tool.OutputSchema == nil || tool.InputSchema == nil || len(tool.Description) < 100 {
					t.Errorf("%s: schemas %v/%v, description %q", tool.Name, tool.InputSchema != nil, tool.OutputSchema != nil, tool.Description)
				}
				got[tool.Name] = *tool.Annotations
			}
			f := new(false)
			want := map[string]mcp.ToolAnnotations{
				"open_ticket":  {DestructiveHint: f, OpenWorldHint: f},
				"list_tickets": {ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: f},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHonestFlowOpensOneTicket(t *testing.T) {
	s := fixturetest.Start(t, bin, manual())
	q, state := round1(t, s, host, 1)

	if want := "Open an incident ticket for jump-prod-02?\n\n" + summary; q.Message != want {
		t.Errorf("message = %q, want %q", q.Message, want)
	}
	wantSchema := map[string]any{
		"type": "object",
		"properties": map[string]any{"priority": map[string]any{
			"type": "string", "enum": []any{"P1", "P2", "P3"},
			"description": "P1 = drop everything, P3 = next business day",
		}},
		"required": []any{"priority"},
	}
	if diff := cmp.Diff(wantSchema, q.RequestedSchema); diff != "" {
		t.Errorf("requested schema (-want +got):\n%s", diff)
	}

	res, err := round2(t, s, host, state, accept("P1"), 1)
	if err != nil || res.IsError {
		t.Fatalf("round 2: %v %s", err, fixturetest.Text(res))
	}
	want := Ticket{ID: "INC-4100", Host: host, Summary: summary, Priority: "P1", Status: "open"}
	if got := fixturetest.Structured[Ticket](t, res); got != want {
		t.Errorf("ticket = %+v, want %+v", got, want)
	}

	// Replaying round 2 opens nothing.
	res, err = round2(t, s, host, state, accept("P1"), 2)
	wantToolError(t, res, err, msgUsed)

	if got := listTickets(t, s); got.Total != 1 || len(got.Tickets) != 1 || got.Tickets[0] != want {
		t.Errorf("list_tickets = %+v, want exactly %+v", got, want)
	}

	// One log line per round, joined on trace and step.
	in := s.Stderr.WaitEntry(t, fixturetest.Timeout, func(e fixture.Entry) bool {
		return e.Step == 1 && e.Outcome == fixture.OutcomeInputRequired
	})
	ok := s.Stderr.WaitEntry(t, fixturetest.Timeout, func(e fixture.Entry) bool {
		return e.Step == 1 && e.Outcome == fixture.OutcomeOK
	})
	replay := s.Stderr.WaitEntry(t, fixturetest.Timeout, fixturetest.ToolCall(toolOpenTicket, "trace-tickets", 2))
	for _, e := range []fixture.Entry{in, ok} {
		if e.Tool != toolOpenTicket || e.TraceID != "trace-tickets" || e.Protocol != fixturetest.Revision2026 {
			t.Errorf("round logged as %+v", e)
		}
	}
	if replay.Outcome != fixture.OutcomeToolError {
		t.Errorf("replay logged as %q, want tool_error", replay.Outcome)
	}
}

func TestAnswerWithoutStateIsAskedAgain(t *testing.T) {
	s := fixturetest.Start(t, bin, manual())
	// Sending the answer on the first call skips nobody: no state, no ticket.
	res, err := round2(t, s, host, "", accept("P1"), 1)
	if err != nil || !res.NeedsInput() {
		t.Fatalf("got %+v, %v; want input_required", res, err)
	}
	wantNoTickets(t, s)
}

func TestRefusedStates(t *testing.T) {
	s := fixturetest.Start(t, bin, manual("TICKETS_STATE_KEY="+sharedKey))
	_, state := round1(t, s, host, 1)
	raw, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil {
		t.Fatal(err)
	}
	oneByte := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 0x20
		return base64.RawURLEncoding.EncodeToString(b)
	}
	random := make([]byte, len(raw))
	rand.Read(random)

	tests := []struct {
		name, host, state string
	}{
		{name: "forged", host: host, state: base64.RawURLEncoding.EncodeToString(random)},
		{name: "not base64", host: host, state: "please-open-it!"},
		{name: "one byte changed in the ciphertext", host: host, state: oneByte(len(raw) / 2)},
		{name: "one byte changed in the nonce", host: host, state: oneByte(0)},
		{name: "one byte changed in the tag", host: host, state: oneByte(len(raw) - 1)},
		{name: "reused for another host", host: "jump-prod-01", state: state},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := round2(t, s, tt.host, tt.state, accept("P1"), 10+i)
			wantInvalidState(t, res, err)
			e := s.Stderr.WaitEntry(t, fixturetest.Timeout, fixturetest.ToolCall(toolOpenTicket, "trace-tickets", 10+i))
			if e.Outcome != fixture.OutcomeError || e.ErrorCode != jsonrpc.CodeInvalidParams {
				t.Errorf("logged as %s %d, want error -32602", e.Outcome, e.ErrorCode)
			}
		})
	}
	t.Run("expired", func(t *testing.T) {
		// The same key, with a clock 11 minutes ahead: the state is stale.
		later := fixturetest.Start(t, bin, manual("TICKETS_STATE_KEY="+sharedKey, "TICKETS_CLOCK_OFFSET=11m"))
		res, err := round2(t, later, host, state, accept("P1"), 20)
		wantInvalidState(t, res, err)
		wantNoTickets(t, later)
	})
	t.Run("from before a restart", func(t *testing.T) {
		// A new process without the shared key has a key of its own.
		restarted := fixturetest.Start(t, bin, manual())
		res, err := round2(t, restarted, host, state, accept("P1"), 21)
		wantInvalidState(t, res, err)
		wantNoTickets(t, restarted)
	})
	wantNoTickets(t, s)

	// The genuine state was never consumed by the refusals: it still works.
	res, err := round2(t, s, host, state, accept("P3"), 30)
	if err != nil || res.IsError || fixturetest.Structured[Ticket](t, res).Priority != "P3" {
		t.Fatalf("genuine round 2 after the refusals: %v %+v", err, res)
	}
}

func TestSecondProcessWithSharedKeyAnswers(t *testing.T) {
	first := fixturetest.Start(t, bin, manual("TICKETS_STATE_KEY="+sharedKey))
	second := fixturetest.Start(t, bin, manual("TICKETS_STATE_KEY="+strings.ToUpper(sharedKey)))
	_, state := round1(t, first, host, 1)
	res, err := round2(t, second, host, state, accept("P2"), 1)
	if err != nil || res.IsError {
		t.Fatalf("round 2 on the second process: %v %s", err, fixturetest.Text(res))
	}
	if got := fixturetest.Structured[Ticket](t, res); got.ID != "INC-4100" || got.Priority != "P2" {
		t.Errorf("ticket = %+v, want INC-4100 at P2", got)
	}
	wantNoTickets(t, first)
	if got := listTickets(t, second); got.Total != 1 {
		t.Errorf("second process has %d tickets, want 1", got.Total)
	}
}

func TestNoWithoutAcceptedPriority(t *testing.T) {
	tests := []struct {
		name   string
		answer *mcp.ElicitResult
		want   string
	}{
		{name: "decline", answer: &mcp.ElicitResult{Action: "decline"},
			want: "the user declined: no ticket was opened. Don't retry unless they ask again."},
		{name: "cancel", answer: &mcp.ElicitResult{Action: "cancel"},
			want: "the user closed the form: no ticket was opened. Don't retry unless they ask again."},
		{name: "accept without priority", answer: &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, want: msgNoPriority},
		{name: "accept with P4", answer: accept("P4"), want: msgNoPriority},
		{name: "accept with a number", answer: accept(1), want: msgNoPriority},
	}
	s := fixturetest.Start(t, bin, manual())
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, state := round1(t, s, host, i)
			res, err := round2(t, s, host, state, tt.answer, i)
			wantToolError(t, res, err, tt.want)
		})
	}
	wantNoTickets(t, s)
}

func TestFailsClosedWithoutElicitation(t *testing.T) {
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			s := fixturetest.Start(t, bin, fixturetest.Options{
				Protocol: proto,
				Client:   &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}},
			})
			res, err := s.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: toolOpenTicket, Arguments: openArgs(host)})
			wantToolError(t, res, err, msgNoElicitation)
			wantNoTickets(t, s)
		})
	}
}

// TestSameHandlerBothRevisions lets the SDK run the rounds: under
// 2026-07-28 its client retries the call with the answer; under 2025-11-25
// the server's compatibility middleware sends elicitation/create instead.
// The person's answer decides either way.
func TestSameHandlerBothRevisions(t *testing.T) {
	tests := []struct {
		proto    string
		answer   *mcp.ElicitResult
		wantText string // empty: a ticket at P2
		wantLog  []string
	}{
		{proto: fixturetest.Revision2026, answer: accept("P2"), wantLog: []string{fixture.OutcomeInputRequired, fixture.OutcomeOK}},
		{proto: fixturetest.Revision2025, answer: accept("P2"), wantLog: []string{fixture.OutcomeOK}},
		{proto: fixturetest.Revision2026, answer: &mcp.ElicitResult{Action: "decline"},
			wantText: "the user declined: no ticket was opened. Don't retry unless they ask again.",
			wantLog:  []string{fixture.OutcomeInputRequired, fixture.OutcomeToolError}},
		{proto: fixturetest.Revision2025, answer: &mcp.ElicitResult{Action: "decline"},
			wantText: "the user declined: no ticket was opened. Don't retry unless they ask again.",
			wantLog:  []string{fixture.OutcomeToolError}},
	}
	for _, tt := range tests {
		t.Run(tt.proto+"/"+tt.answer.Action, func(t *testing.T) {
			var asked atomic.Int32
			var message atomic.Value
			s := fixturetest.Start(t, bin, fixturetest.Options{
				Protocol: tt.proto,
				Client: &mcp.ClientOptions{
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked.Add(1)
						message.Store(req.Params.Message)
						return tt.answer, nil
					},
				},
			})
			res, err := s.Session.CallTool(t.Context(), &mcp.CallToolParams{
				Name: toolOpenTicket, Arguments: openArgs(host), Meta: fixturetest.Meta("trace-auto", 1),
			})
			if err != nil {
				t.Fatal(err)
			}
			if n := asked.Load(); n != 1 {
				t.Fatalf("the person was asked %d times, want once", n)
			}
			if got, _ := message.Load().(string); !strings.HasPrefix(got, "Open an incident ticket for jump-prod-02?") {
				t.Errorf("the person saw %q", got)
			}
			if tt.wantText == "" {
				if got := fixturetest.Structured[Ticket](t, res); res.IsError || got.ID != "INC-4100" || got.Priority != "P2" {
					t.Errorf("got isError=%v %+v, want INC-4100 at P2", res.IsError, got)
				}
			} else {
				wantToolError(t, res, nil, tt.wantText)
				wantNoTickets(t, s)
			}
			last := tt.wantLog[len(tt.wantLog)-1]
			s.Stderr.WaitEntry(t, fixturetest.Timeout, func(e fixture.Entry) bool { return e.TraceID == "trace-auto" && e.Outcome == last })
			var got []string
			for _, e := range s.Stderr.Entries() {
				if e.TraceID == "trace-auto" {
					got = append(got, e.Outcome)
					if e.Protocol != tt.proto || e.Step != 1 {
						t.Errorf("logged %+v, want protocol %s step 1", e, tt.proto)
					}
				}
			}
			if diff := cmp.Diff(tt.wantLog, got); diff != "" {
				t.Errorf("log outcomes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInvalidAnswerThroughTheSDK: when the SDK runs the rounds, it checks
// the person's answer against the form itself, so an answer outside the
// enum never reaches the handler: the call fails with an error instead of
// the handler's tool error, and nothing is opened.
func TestInvalidAnswerThroughTheSDK(t *testing.T) {
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			s := fixturetest.Start(t, bin, fixturetest.Options{
				Protocol: proto,
				Client: &mcp.ClientOptions{
					ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						return accept("P4"), nil
					},
				},
			})
			_, err := s.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: toolOpenTicket, Arguments: openArgs(host)})
			if err == nil || !strings.Contains(err.Error(), "does not match requested schema") {
				t.Errorf("got %v, want the SDK refusing the answer", err)
			}
			wantNoTickets(t, s)
		})
	}
}

func TestBadEnvironmentStopsTheServer(t *testing.T) {
	tests := []struct {
		env, want string
	}{
		{env: "TICKETS_STATE_KEY=abc", want: "tickets: TICKETS_STATE_KEY: want 64 hex characters (32 bytes), got 3 characters"},
		{env: "TICKETS_STATE_KEY=" + strings.Repeat("g", 64), want: "tickets: TICKETS_STATE_KEY: want 64 hex characters (32 bytes): encoding/hex: invalid byte"},
		{env: "TICKETS_CLOCK_OFFSET=soon", want: "tickets: TICKETS_CLOCK_OFFSET: want a Go duration such as 11m"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			s, err := fixturetest.StartErr(t, bin, fixturetest.Options{Env: []string{tt.env}})
			if err == nil {
				t.Fatal("connected, want the server to stop")
			}
			if !strings.Contains(s.Stderr.String(), tt.want) {
				t.Errorf("stderr = %q, want it to say %q", s.Stderr, tt.want)
			}
			if s.Cmd.ProcessState == nil || s.Cmd.ProcessState.ExitCode() != 2 {
				t.Errorf("process state %v, want exit status 2", s.Cmd.ProcessState)
			}
		})
	}
}

// Keep the JSON shape of a ticket stable: hosts and scenarios read it.
func TestTicketJSON(t *testing.T) {
	b, err := json.Marshal(Ticket{ID: "INC-4100", Host: host, Summary: "s", Priority: "P1", Status: "open"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"INC-4100","host":"jump-prod-02","summary":"s","priority":"P1","status":"open"}`
	if string(b) != want {
		t.Errorf("ticket JSON = %s, want %s", b, want)
	}
}
