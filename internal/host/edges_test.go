package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/record"
)

// The spec's edges, each through the raw server (rawserver_test.go) on
// both transports: what the server writes is exactly what the test says.

// startRaw starts a host on one raw server, reached by spec, and checks
// that it connected.
func startRaw(t *testing.T, spec ServerSpec, opts Options) *Host {
	t.Helper()
	opts.Servers = []ServerSpec{spec}
	h := startHost(t, opts)
	if s := h.Servers()[0]; s.Error != "" {
		t.Fatalf("raw server did not connect: %s", s.Error)
	}
	return h
}

func TestUnknownResultTypeIsInvalid(t *testing.T) {
	t.Parallel()
	results := map[string]string{
		"bogus":    `{"resultType":"bogus","content":[{"type":"text","text":"SECRET the model must not read"}]}`,
		"task":     `{"resultType":"task","taskId":"t-1","status":"working"}`,
		"complete": `{"resultType":"complete","content":[{"type":"text","text":"fine"}]}`,
		"absent":   `{"content":[{"type":"text","text":"fine"}]}`,
	}
	for _, tr := range rawTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			srv := newToolServer(t, func(req rawMessage, send func(string)) {
				var p struct {
					Name string `json:"name"`
				}
				json.Unmarshal(req.Params, &p)
				send(rawResult(req.ID, results[p.Name]))
			}, "bogus", "task", "complete", "absent")
			h := startRaw(t, tr.spec(srv, "raw"), Options{})
			for _, tt := range []struct {
				tool, resultType string
			}{{"bogus", "bogus"}, {"task", "task"}} {
				text, ev := call(t, h, "raw__"+tt.tool, `{}`)
				want := fmt.Sprintf("error: the server raw answered with a kind of result this host does not know (resultType %q), so the answer was not used.", tt.resultType)
				if ev.Outcome != record.OutcomeError || code(ev) != "-32603" || text != want {
					t.Errorf("%s: outcome %s, code %s, text %q; want error, -32603, %q", tt.tool, ev.Outcome, code(ev), text, want)
				}
				if !ev.ProtocolError() {
					t.Errorf("%s: not counted as a protocol error", tt.tool)
				}
			}
			for _, tool := range []string{"complete", "absent"} {
				if text, ev := call(t, h, "raw__"+tool, `{}`); ev.Outcome != record.OutcomeOK || text != "fine" {
					t.Errorf("%s: outcome %s, text %q; want ok, fine", tool, ev.Outcome, text)
				}
			}
		})
	}
}

// An empty string is a valid cursor: only a missing nextCursor ends the
// listing (server/utilities/pagination).
func TestEmptyCursorIsACursor(t *testing.T) {
	t.Parallel()
	for _, tr := range rawTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			srv := newRawServer(t, Revision20260728)
			srv.on("tools/list", func(req rawMessage, send func(string)) {
				var p struct {
					Cursor *string `json:"cursor"`
				}
				json.Unmarshal(req.Params, &p)
				switch {
				case p.Cursor == nil:
					send(rawResult(req.ID, `{"tools":[`+rawTool("first")+`],"nextCursor":""}`))
				case *p.Cursor == "":
					send(rawResult(req.ID, `{"tools":[`+rawTool("second")+`],"nextCursor":"c2"}`))
				case *p.Cursor == "c2":
					send(rawResult(req.ID, `{"tools":[`+rawTool("third")+`]}`))
				default:
					send(rawError(req.ID, -32602, "invalid cursor"))
				}
			})
			h := startRaw(t, tr.spec(srv, "raw"), Options{})
			var names []string
			for _, tool := range h.Tools() {
				names = append(names, tool.Name)
			}
			if diff := cmp.Diff([]string{"raw__first", "raw__second", "raw__third"}, names); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			var cursors []string
			for _, m := range srv.messages("tools/list") {
				var p map[string]json.RawMessage
				json.Unmarshal(m.Params, &p)
				cursors = append(cursors, string(p["cursor"]))
			}
			if diff := cmp.Diff([]string{"", `""`, `"c2"`}, cursors); diff != "" {
				t.Errorf("cursors sent (-want +got):\n%s", diff)
			}
		})
	}
}

// The requestState is echoed exactly as the server wrote it: a lone
// surrogate, which a Go string cannot hold, survives, and so does an empty
// state (present, so sent back).
func TestRequestStateEchoedByteExact(t *testing.T) {
	t.Parallel()
	states := []string{`"a\ud800b<&>\u00e9"`, `""`, `"plain"`}
	for _, tr := range rawTransports {
		for _, state := range states {
			t.Run(tr.name+"/"+state, func(t *testing.T) {
				t.Parallel()
				srv := newToolServer(t, func(req rawMessage, send func(string)) {
					var p map[string]json.RawMessage
					json.Unmarshal(req.Params, &p)
					if _, ok := p["requestState"]; !ok {
						send(rawResult(req.ID, `{"resultType":"input_required","requestState":`+state+`}`))
						return
					}
					send(rawResult(req.ID, `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`))
				}, "confirm")
				h := startRaw(t, tr.spec(srv, "raw"), Options{})
				if text, ev := call(t, h, "raw__confirm", `{}`); ev.Outcome != record.OutcomeOK || ev.Rounds != 2 {
					t.Fatalf("outcome %s, rounds %d, text %q; want ok after 2 rounds", ev.Outcome, ev.Rounds, text)
				}
				calls := srv.messages("tools/call")
				if len(calls) != 2 {
					t.Fatalf("%d tools/call, want 2", len(calls))
				}
				if want := `"requestState":` + state; !strings.Contains(calls[1].Raw, want) {
					t.Errorf("the retry does not carry %s byte for byte:\n%s", want, calls[1].Raw)
				}
				if strings.Contains(calls[0].Raw, "requestState") {
					t.Errorf("the first round carries a requestState: %s", calls[0].Raw)
				}
			})
		}
	}
}

// A task-only tool is not offered, over any transport (docs/peers.md #7).
func TestTaskOnlyToolsHiddenOnEveryTransport(t *testing.T) {
	t.Parallel()
	for _, tr := range rawTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			srv := newRawServer(t, Revision20260728)
			srv.answer("tools/list", `{"tools":[`+rawTool("quick")+`,`+
				`{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},`+
				`{"name":"maybe","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`)
			h := startRaw(t, tr.spec(srv, "raw"), Options{})
			var offered []string
			for _, tool := range h.Offered() {
				offered = append(offered, tool.Name)
			}
			if diff := cmp.Diff([]string{"raw__quick", "raw__maybe"}, offered); diff != "" {
				t.Errorf("offered (-want +got):\n%s", diff)
			}
			if len(h.Tools()) != 3 {
				t.Errorf("the table has %d tools, want 3 (the task-only one stays for the harness)", len(h.Tools()))
			}
		})
	}
}

// A JSON-RPC error with code 0 is a protocol error with code 0, in the
// event and the log.
func TestErrorCodeZeroIsKept(t *testing.T) {
	t.Parallel()
	for _, tr := range rawTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			srv := newToolServer(t, func(req rawMessage, send func(string)) { send(rawError(req.ID, 0, "plain failure")) }, "plain")
			var log logLines
			h := startRaw(t, tr.spec(srv, "raw"), Options{Log: &log})
			text, ev := call(t, h, "raw__plain", `{}`)
			if ev.Outcome != record.OutcomeError || code(ev) != "0" || text != "error: plain failure" || !ev.ProtocolError() {
				t.Errorf("outcome %s, code %s, text %q; want error, 0, %q", ev.Outcome, code(ev), text, "error: plain failure")
			}
			if got := log.entries(map[string]any{"operation": record.OpToolCall, "error_code": 0}); len(got) != 1 {
				t.Errorf("%d host.tool_call log lines with error_code 0, want 1", len(got))
			}
		})
	}
}

// Pinned mode refuses a server that does not speak 2026-07-28 on its first
// answer: nothing of the legacy handshake is sent.
func TestPinnedRefusesOnTheFirstAnswer(t *testing.T) {
	t.Parallel()
	for _, tr := range rawTransports {
		for _, discover := range []struct {
			name    string
			answer  func(req rawMessage) string
			offered string
		}{
			{"method not found", func(req rawMessage) string { return rawError(req.ID, -32601, "Method not found") }, ""},
			{"unsupported version", func(req rawMessage) string {
				return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`, req.ID)
			}, "2025-11-25"},
		} {
			t.Run(tr.name+"/"+discover.name, func(t *testing.T) {
				t.Parallel()
				srv := newRawServer(t, Revision20251125)
				srv.on("server/discover", func(req rawMessage, send func(string)) { send(discover.answer(req)) })
				srv.answer("tools/list", `{"tools":[`+rawTool("hello")+`]}`)
				h, err := Start(t.Context(), Options{Servers: []ServerSpec{tr.spec(srv, "old")}, Protocol: ModePinned})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { h.Close() })
				s := h.Servers()[0]
				if !s.VersionFailure || s.Protocol != "" || s.Offered != discover.offered || s.Error == "" {
					t.Errorf("server %+v: want a version failure, no protocol, offered %q", s, discover.offered)
				}
				for _, method := range []string{"initialize", "notifications/initialized", "tools/list"} {
					if n := len(srv.messages(method)); n != 0 {
						t.Errorf("the server got %d %s, want none", n, method)
					}
				}
				if n := len(srv.messages("server/discover")); n < 1 {
					t.Errorf("the server got no server/discover")
				}
			})
		}
	}
}

// formAsk is an input_required round with one form question.
const formAsk = `{"resultType":"input_required","requestState":"s1","inputRequests":{"contact":{"method":"elicitation/create","params":{` +
	`"mode":"form","message":"Who should we tell?","requestedSchema":{"type":"object","properties":{` +
	`"email":{"type":"string","format":"email"},"priority":{"type":"string","enum":["P1","P2"]},"count":{"type":"integer","minimum":1}},` +
	`"required":["email"]}}}}}`

// answerEcho is a tools/call handler that asks formAsk, then answers with
// the response it got.
func answerEcho(req rawMessage, send func(string)) {
	var p struct {
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	json.Unmarshal(req.Params, &p)
	if p.InputResponses == nil {
		send(rawResult(req.ID, formAsk))
		return
	}
	text, _ := json.Marshal(string(p.InputResponses["contact"]))
	send(rawResult(req.ID, `{"resultType":"complete","content":[{"type":"text","text":`+string(text)+`}]}`))
}

// The person's answer is checked against the requested schema before it is
// sent: one that does not fit is declined, with the reason naming the field
// recorded, on the 2026-07-28 path and the 2025-11-25 one.
func TestAnswersAreCheckedAgainstTheForm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		content    map[string]any
		wantAction string
		wantReason string
	}{
		{"fits", map[string]any{"email": "ana@example.com", "priority": "P1", "count": 2}, "accept", ""},
		{"bad email", map[string]any{"email": "not an address"}, "decline", "email: must be an email address"},
		{"not a choice", map[string]any{"email": "ana@example.com", "priority": "P9"}, "decline", "priority: must be one of P1, P2"},
		{"missing required", map[string]any{"priority": "P1"}, "decline", "email: required"},
		{"unknown field", map[string]any{"email": "ana@example.com", "priorty": "P1"}, "decline", "priorty: not a field of this form"},
		{"below minimum", map[string]any{"email": "ana@example.com", "count": 0}, "decline", "count: must be at least 1"},
	}
	for _, tt := range tests {
		for _, path := range []string{"2026-07-28", "2025-11-25"} {
			t.Run(tt.name+"/"+path, func(t *testing.T) {
				t.Parallel()
				srv := newRawServer(t, path)
				srv.answer("tools/list", `{"tools":[`+rawTool("notify")+`]}`)
				if path == Revision20260728 {
					srv.on("tools/call", answerEcho)
				} else {
					srv.on("tools/call", func(req rawMessage, send func(string)) {
						var form struct {
							InputRequests map[string]struct {
								Params json.RawMessage `json:"params"`
							} `json:"inputRequests"`
						}
						json.Unmarshal([]byte(formAsk), &form)
						answer := srv.ask(context.Background(), send, "elicitation/create", string(form.InputRequests["contact"].Params))
						text, _ := json.Marshal(string(answer))
						send(rawResult(req.ID, `{"content":[{"type":"text","text":`+string(text)+`}]}`))
					})
				}
				person := Canned{Answers: []CannedAnswer{{Action: ActionAccept, Content: tt.content}}}
				h := startRaw(t, srv.spec("raw"), Options{Elicitor: person})
				text, ev := call(t, h, "raw__notify", `{}`)
				if ev.Outcome != record.OutcomeOK {
					t.Fatalf("outcome %s: %s", ev.Outcome, text)
				}
				var sent struct {
					Action  string         `json:"action"`
					Content map[string]any `json:"content"`
				}
				if err := json.Unmarshal([]byte(text), &sent); err != nil {
					t.Fatalf("the server's echo %q: %v", text, err)
				}
				if sent.Action != tt.wantAction {
					t.Errorf("the server got action %q, want %q (content %v)", sent.Action, tt.wantAction, sent.Content)
				}
				if tt.wantAction == "decline" && sent.Content != nil {
					t.Errorf("a declined answer carried content to the server: %v", sent.Content)
				}
				var reasons []string
				if tt.wantReason != "" {
					reasons = []string{"the answer to contact does not fit the form: " + tt.wantReason}
					if path == Revision20251125 {
						reasons = []string{"the answer does not fit the form: " + tt.wantReason}
					}
				}
				var got []string
				for _, a := range ev.Asks {
					if a.Reason != "" {
						got = append(got, a.Reason)
					}
				}
				if diff := cmp.Diff(reasons, got); diff != "" {
					t.Errorf("decline reasons (-want +got):\n%s", diff)
				}
				if wantDeclined := len(reasons); ev.Declined != wantDeclined || ev.Elicitations != 1 {
					t.Errorf("elicitations %d, declined %d; want 1, %d", ev.Elicitations, ev.Declined, wantDeclined)
				}
			})
		}
	}
}

// recordingPerson remembers every question put to it and accepts it.
type recordingPerson struct{ asked []string }

func (p *recordingPerson) Elicit(_ context.Context, req ElicitRequest) (ElicitAnswer, error) {
	p.asked = append(p.asked, req.Message)
	return ElicitAnswer{Action: ActionAccept, Content: map[string]any{"email": "ana@example.com"}}, nil
}

// With no elicitation declared, a server's question reaches nobody: a
// 2026-07-28 server that asks anyway broke the protocol and the call stops.
func TestNoElicitationAsksNobody(t *testing.T) {
	t.Parallel()
	for _, tr := range rawTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			srv := newToolServer(t, answerEcho, "notify")
			person := &recordingPerson{}
			h := startRaw(t, tr.spec(srv, "raw"), Options{Elicitor: person, NoElicitation: true})
			text, ev := call(t, h, "raw__notify", `{}`)
			want := "error: the server raw asked the user a question, which this host told it it cannot do, so the call was stopped."
			if ev.Outcome != record.OutcomeError || text != want || ev.AskedUser || ev.Elicitations != 0 {
				t.Errorf("outcome %s, asked %t, elicitations %d, text %q; want error, not asked, %q", ev.Outcome, ev.AskedUser, ev.Elicitations, text, want)
			}
			if len(person.asked) != 0 {
				t.Errorf("the person was asked %q", person.asked)
			}
			if n := len(srv.messages("tools/call")); n != 1 {
				t.Errorf("%d tools/call sent, want 1 (no retry with answers)", n)
			}
			var discover struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}
			json.Unmarshal(srv.messages("server/discover")[0].Params, &discover)
			if caps := string(discover.Meta["io.modelcontextprotocol/clientCapabilities"]); strings.Contains(caps, "elicitation") {
				t.Errorf("the host declared %s, want no elicitation", caps)
			}
		})
	}
}

// A tool's parameters are its inputSchema as the server wrote it, key order
// and escapes kept (only whitespace goes): a re-encoded map would sort the
// properties the model reads and change what the catalog costs. The listed
// form has the server's own name and description around the same bytes.
func TestDefinitionsCarryTheSchemaAsSent(t *testing.T) {
	t.Parallel()
	const schema = `{"type": "object",
	  "properties": {"zeta": {"type": "string", "description": "a \u003cfirst\u003e field"}, "alpha": {"type": "integer"}},
	  "required": ["zeta"]}`
	const compact = `{"type":"object","properties":{"zeta":{"type":"string","description":"a \u003cfirst\u003e field"},"alpha":{"type":"integer"}},"required":["zeta"]}`
	for _, tr := range rawTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			srv := newRawServer(t, Revision20260728)
			srv.answer("tools/list", `{"tools":[{"name":"pick","description":"Pick <one>.","inputSchema":`+schema+`,"annotations":{"readOnlyHint":true}}]}`)
			h := startRaw(t, tr.spec(srv, "raw"), Options{})
			tool := h.Offered()[0]
			want := `{"type":"function","function":{"name":"raw__pick","description":"[raw] Pick <one>.","parameters":` + compact + `}}`
			if string(tool.Def) != want || string(h.ToolsJSON()) != "["+want+"]" {
				t.Errorf("definition\n got %s\nwant %s", tool.Def, want)
			}
			listed, err := tool.ListedDef()
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"type":"function","function":{"name":"pick","description":"Pick <one>.","parameters":` + compact + `}}`; string(listed) != want {
				t.Errorf("listed definition\n got %s\nwant %s", listed, want)
			}
		})
	}
}
