package scenario

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/record"
)

// evalRecord is a finished case with a bit of everything: a lookup, a
// denied ticket then an approved one after a confirmation, an unknown tool,
// a protocol error, a clipped result, a timeout, and a state check.
func evalRecord() *record.Record {
	return &record.Record{
		Status: record.StatusFail,
		Servers: []record.Server{
			{Name: "cmdb", Mode: "auto", Protocol: "2026-07-28"},
			{Name: "tickets", Mode: "auto", Protocol: "2025-11-25", Restarted: true, EraReason: "answered ping, not discover"},
			{Name: "legacy", Mode: "2026-07-28", Offered: "2025-11-25", VersionFailure: true, Error: "server speaks only 2025-11-25"},
		},
		Turns: []record.Turn{
			{Question: "who owns jump-prod-02?", Answer: "It belongs to the platform team."},
			{Question: "open a ticket", Answer: "Opened INC-4100 (P1)."},
		},
		Calls: []record.Call{
			{Name: "cmdb__get_asset", Outcome: "ok", Approval: "auto", Rounds: 1, ResultBytes: 120,
				Arguments: map[string]any{"hostname": "jump-prod-02", "limit": json.Number("3")}, Result: `{"owner":"platform"}`},
			{Name: "tickets__open_ticket", Outcome: "denied", Approval: "denied",
				Error: "the user did not approve running tickets__open_ticket, so nothing was done."},
			{Name: "tickets__open_ticket", Outcome: "ok", Approval: "approved", AskedUser: true, Rounds: 2, ResultBytes: 40,
				Arguments: map[string]any{"host": "jump-prod-02", "priority": 1.0, "tags": []any{"ssh"}}, Result: `{"id":"INC-4100"}`,
				Elicitations: 2, Declined: 1},
			{Name: "delete_everything", Outcome: "unknown_tool", Error: `there is no tool named "delete_everything".`},
			{Name: "cmdb__find_assets", Outcome: "error", ErrorCode: record.Code(-32003), Rounds: 1, Error: "forbidden: not your team"},
			{Name: "cmdb__find_assets", Outcome: "ok", Rounds: 1, Clipped: true, ResultBytes: 4000, RawBytes: 9000, Result: "[{...}]"},
			{Name: "tickets__list_tickets", Outcome: "timeout", Rounds: 1, Error: "no answer within 2 seconds."},
		},
		ModelRequests: make([]record.ModelRequest, 5),
		Checks: []record.Call{
			{Name: "tickets__list_tickets", Outcome: "ok", Result: `{"total":1,"tickets":[{"id":"INC-4100","priority":"P1"}],"meta":{"page":1,"more":false}}`},
			{Name: "tickets__count", Outcome: "tool_error", Error: "no such table"},
			{Name: "tickets__list_tickets", Outcome: "ok", Result: "not json"},
		},
		ToolDefs: record.ToolDefs{Tools: 4, Bytes: 1800, Tokens: 420},
		ToolChanges: []record.ToolChange{
			{Server: "tickets", Added: []string{"close_ticket"}, Changed: []string{"open_ticket"}},
			{Server: "tickets", Removed: []string{"list_tickets"}},
		},
	}
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		expect string
		name   string
		detail string // "" when it passes
	}{
		// Per tool, some call matches.
		{`{tool: tickets__open_ticket, outcome: ok, asked_user: true, rounds: 2}`,
			"tool tickets__open_ticket outcome=ok asked_user=true rounds=2", ""},
		{`{tool: tickets__open_ticket, outcome: ok, asked_user: false}`,
			"tool tickets__open_ticket outcome=ok asked_user=false",
			`calls of tickets__open_ticket: #1 outcome=denied approval=denied asked_user=false error="the user did not approve running tickets__open_ticket, so nothing was done."; #2 outcome=ok approval=approved asked_user=true`},
		{`{tool: tickets__open_ticket}`, "tool tickets__open_ticket", ""},
		{`{tool: tickets__close_ticket}`, "tool tickets__close_ticket",
			"no calls of tickets__close_ticket (calls: cmdb__get_asset, tickets__open_ticket, tickets__open_ticket, delete_everything, cmdb__find_assets, cmdb__find_assets, tickets__list_tickets)"},
		{`{tool: tickets__close_ticket, called: false}`, "tool tickets__close_ticket called=false", ""},
		{`{tool: delete_everything, called: false}`, "tool delete_everything called=false",
			`delete_everything was called once: #1 outcome=unknown_tool error="there is no tool named \"delete_everything\"."`},
		{`{tool: delete_everything, outcome: unknown_tool}`, "tool delete_everything outcome=unknown_tool", ""},
		{`{tool: tickets__open_ticket, count: 2}`, "tool tickets__open_ticket count=2", ""},
		{`{tool: tickets__open_ticket, count: {max: 1}}`, "tool tickets__open_ticket count<=1", "tickets__open_ticket was called 2 times"},
		{`{tool: tickets__open_ticket, count: {min: 1, max: 3}}`, "tool tickets__open_ticket count=1..3", ""},
		{`{tool: cmdb__get_asset, count: {min: 2}}`, "tool cmdb__get_asset count>=2", "cmdb__get_asset was called once"},
		{`{tool: x__y, count: 0}`, "tool x__y count=0", ""},
		// nth: that call must match.
		{`{tool: tickets__open_ticket, nth: 1, approval: denied}`, "tool tickets__open_ticket nth=1 approval=denied", ""},
		{`{tool: tickets__open_ticket, nth: 2, approval: denied}`, "tool tickets__open_ticket nth=2 approval=denied",
			"call of tickets__open_ticket: #2 outcome=ok approval=approved"},
		{`{tool: tickets__open_ticket, nth: 3}`, "tool tickets__open_ticket nth=3", "no call #3 of tickets__open_ticket: it was called 2 times"},
		// Error fields.
		{`{tool: cmdb__find_assets, outcome: error, error_code: -32003, error_matches: "(?i)forbidden"}`,
			`tool cmdb__find_assets outcome=error error_code=-32003 error_matches="(?i)forbidden"`, ""},
		{`{tool: cmdb__find_assets, error_code: -32602}`, "tool cmdb__find_assets error_code=-32602",
			`calls of cmdb__find_assets: #1 outcome=error error_code=-32003 error="forbidden: not your team"; #2 outcome=ok error_code=none`},
		{`{tool: tickets__list_tickets, outcome: timeout}`, "tool tickets__list_tickets outcome=timeout", ""},
		// Arguments: subset and exact, numbers compared as numbers.
		{`{tool: cmdb__get_asset, args: {hostname: jump-prod-02}}`, `tool cmdb__get_asset args={"hostname":"jump-prod-02"}`, ""},
		{`{tool: cmdb__get_asset, args: {limit: 3.0}}`, `tool cmdb__get_asset args={"limit":3}`, ""},
		{`{tool: cmdb__get_asset, args: {hostname: jump-prod-03}}`, `tool cmdb__get_asset args={"hostname":"jump-prod-03"}`,
			`calls of cmdb__get_asset: #1 outcome=ok approval=auto args={"hostname":"jump-prod-02","limit":3}`},
		{`{tool: cmdb__get_asset, args_exact: {hostname: jump-prod-02}}`, `tool cmdb__get_asset args_exact={"hostname":"jump-prod-02"}`,
			`calls of cmdb__get_asset: #1 outcome=ok approval=auto args={"hostname":"jump-prod-02","limit":3}`},
		{`{tool: tickets__open_ticket, args_exact: {host: jump-prod-02, priority: 1, tags: [ssh]}}`,
			`tool tickets__open_ticket args_exact={"host":"jump-prod-02","priority":1,"tags":["ssh"]}`, ""},
		{`{tool: tickets__open_ticket, args: {tags: [ssh, root]}}`, `tool tickets__open_ticket args={"tags":["ssh","root"]}`,
			`calls of tickets__open_ticket: #1 outcome=denied approval=denied args={} error="the user did not approve running tickets__open_ticket, so nothing was done."; #2 outcome=ok approval=approved args={"host":"jump-prod-02","priority":1,"tags":["ssh"]}`},
		// Results.
		{`{tool: cmdb__find_assets, clipped: true}`, "tool cmdb__find_assets clipped=true", ""},
		{`{tool: cmdb__get_asset, clipped: true}`, "tool cmdb__get_asset clipped=true", "calls of cmdb__get_asset: #1 outcome=ok approval=auto clipped=false"},
		{`{tool: cmdb__get_asset, result_matches: '"owner":"platform"'}`, `tool cmdb__get_asset result_matches="\"owner\":\"platform\""`, ""},
		{`{tool: cmdb__get_asset, result_matches: 'security'}`, `tool cmdb__get_asset result_matches="security"`,
			`calls of cmdb__get_asset: #1 outcome=ok approval=auto result="{\"owner\":\"platform\"}"`},
		// Order.
		{`{order: [cmdb__get_asset, tickets__open_ticket, tickets__list_tickets]}`, "order cmdb__get_asset < tickets__open_ticket < tickets__list_tickets", ""},
		{`{order: [tickets__open_ticket, cmdb__get_asset]}`, "order tickets__open_ticket < cmdb__get_asset",
			"no cmdb__get_asset after tickets__open_ticket in the calls: cmdb__get_asset, tickets__open_ticket, tickets__open_ticket, delete_everything, cmdb__find_assets, cmdb__find_assets, tickets__list_tickets"},
		// Answers.
		{`{answer_matches: "(?i)opened INC-\\d+"}`, `answer_matches="(?i)opened INC-\\d+"`, ""},
		{`{answer_matches: platform}`, `answer_matches="platform"`, `answer of turn 2: "Opened INC-4100 (P1)."`},
		{`{answer_matches: platform, turn: 1}`, `answer_matches="platform" turn=1`, ""},
		{`{answer_not_matches: "(?i)sorry"}`, `answer_not_matches="(?i)sorry"`, ""},
		{`{answer_not_matches: "P1", turn: 2}`, `answer_not_matches="P1" turn=2`, `answer of turn 2: "Opened INC-4100 (P1)."`},
		{`{answer_matches: x, turn: 3}`, `answer_matches="x" turn=3`, "no turn 3: the record has 2"},
		// Counts.
		{`{unknown_tools: 1}`, "unknown_tools=1", ""},
		{`{unknown_tools: 0}`, "unknown_tools=0", "unknown_tools=1 (delete_everything)"},
		{`{timeouts: 0}`, "timeouts=0", "timeouts=1 (tickets__list_tickets)"},
		{`{protocol_errors: 0, tool_errors: 0}`, "protocol_errors=0 tool_errors=0", "protocol_errors=1 (cmdb__find_assets -32003)"},
		{`{tool: cmdb__find_assets, error_code: 0}`, "tool cmdb__find_assets error_code=0",
			`calls of cmdb__find_assets: #1 outcome=error error_code=-32003 error="forbidden: not your team"; #2 outcome=ok error_code=none`},
		{`{denied: {max: 0}}`, "denied<=0", "denied=1 (tickets__open_ticket)"},
		{`{steps: 7, model_requests: {min: 5, max: 6}}`, "steps=7 model_requests=5..6", ""},
		{`{steps: {max: 4}, model_requests: 2}`, "steps<=4 model_requests=2", "steps=7; model_requests=5"},
		{`{elicitations: 2, declined: 1}`, "elicitations=2 declined=1", ""},
		{`{declined: 0}`, "declined=0", "declined=1"},
		// Bounds.
		{`{result_bytes: {max: 4000}}`, "result_bytes<=4000", ""},
		{`{result_bytes: {max: 100}}`, "result_bytes<=100", "#1 cmdb__get_asset result_bytes=120; #6 cmdb__find_assets result_bytes=4000"},
		{`{tool_def_bytes: {max: 2000, min: 1000}, tool_def_tokens: {max: 500}}`, "tool_def_bytes=1000..2000 tool_def_tokens<=500", ""},
		{`{tool_def_tokens: {max: 400}}`, "tool_def_tokens<=400", "tool_def_tokens=420"},
		{`{answer_matches: "(?i)opened", unknown_tools: 0}`, `answer_matches="(?i)opened" unknown_tools=0`, "unknown_tools=1 (delete_everything)"},
		// Servers.
		{`{server: cmdb, protocol: 2026-07-28}`, "server cmdb protocol=2026-07-28", ""},
		{`{server: tickets, protocol: 2026-07-28}`, "server tickets protocol=2026-07-28",
			"server tickets: protocol=2025-11-25 version_failure=false restarted=true connected=true"},
		{`{server: tickets, restarted: true}`, "server tickets restarted=true", ""},
		{`{server: tickets, era_reason: "ping, not discover$"}`, `server tickets era_reason="ping, not discover$"`, ""},
		{`{server: cmdb, era_reason: "^answered discover$"}`, `server cmdb era_reason="^answered discover$"`,
			`server cmdb: protocol=2026-07-28 version_failure=false restarted=false connected=true era_reason=""`},
		{`{server: legacy, version_failure: true, connected: false}`, "server legacy version_failure=true connected=false", ""},
		{`{server: legacy}`, "server legacy connected=true",
			`server legacy: protocol=none version_failure=true restarted=false connected=false offered=2025-11-25 error="server speaks only 2025-11-25"`},
		// Tool changes, over all of a server's changes.
		{`{tools_changed: tickets}`, "tools_changed tickets", ""},
		{`{tools_changed: tickets, added: [close_ticket], removed: [list_tickets], changed: [open_ticket], count: 2}`,
			"tools_changed tickets added=close_ticket removed=list_tickets changed=open_ticket count=2", ""},
		{`{tools_changed: tickets, added: [open_ticket], count: 1}`, "tools_changed tickets added=open_ticket count=1",
			"the tools of tickets changed 2 times; open_ticket was not added (added: close_ticket)"},
		{`{tools_changed: cmdb}`, "tools_changed cmdb", "the tools of cmdb never changed"},
		{`{tools_changed: cmdb, count: 0}`, "tools_changed cmdb count=0", ""},
		{`{tools_changed: cmdb, removed: [get_asset]}`, "tools_changed cmdb removed=get_asset",
			"the tools of cmdb never changed; get_asset was not removed (removed: none)"},
		// State checks, by position.
		{`{state: "tickets__list_tickets {}", matches: {total: 1, tickets: [{id: INC-4100, priority: P1}], meta: {page: 1}}}`,
			`state "tickets__list_tickets {}" matches={"meta":{"page":1},"tickets":[{"id":"INC-4100","priority":"P1"}],"total":1}`, ""},
		{`{state: "tickets__list_tickets {}", matches: {meta: {more: true}}}`,
			`state "tickets__list_tickets {}" matches={"meta":{"more":true}}`, "meta.more: got false, want true"},
		// Arrays match item by item, in order, objects inside them as
		// subsets; a missing or an extra item fails.
		{`{state: "tickets__list_tickets {}", matches: {tickets: [{id: INC-4100}]}}`,
			`state "tickets__list_tickets {}" matches={"tickets":[{"id":"INC-4100"}]}`, ""},
		{`{state: "tickets__list_tickets {}", matches: {tickets: [{id: INC-4100, priority: P2}]}}`,
			`state "tickets__list_tickets {}" matches={"tickets":[{"id":"INC-4100","priority":"P2"}]}`,
			`tickets[0].priority: got "P1", want "P2"`},
		{`{state: "tickets__list_tickets {}", matches: {tickets: [{id: INC-4100, owner: x}]}}`,
			`state "tickets__list_tickets {}" matches={"tickets":[{"id":"INC-4100","owner":"x"}]}`,
			`tickets[0].owner: missing`},
		{`{state: "tickets__list_tickets {}", matches: {tickets: []}}`,
			`state "tickets__list_tickets {}" matches={"tickets":[]}`,
			`tickets: got [{"id":"INC-4100","priority":"P1"}], want 0 items: an array matches item by item, and it has 1 item`},
		{`{state: "tickets__list_tickets {}", matches: {tickets: [{id: INC-4100}, {id: INC-4101}]}}`,
			`state "tickets__list_tickets {}" matches={"tickets":[{"id":"INC-4100"},{"id":"INC-4101"}]}`,
			`tickets: got [{"id":"INC-4100","priority":"P1"}], want 2 items: an array matches item by item, and it has 1 item`},
		{`{state: "tickets__list_tickets {}", matches: {total: [1]}}`,
			`state "tickets__list_tickets {}" matches={"total":[1]}`, `total: got 1, want an array`},
		{`{state: "tickets__list_tickets {}", matches: {owner: x}}`, `state "tickets__list_tickets {}" matches={"owner":"x"}`, "owner: missing"},
		{`{state: "tickets__list_tickets {}", result_matches: INC-4100}`, `state "tickets__list_tickets {}" result_matches="INC-4100"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testEnv(t)
			c := evalCase(t, tt.expect)
			got := Evaluate(c, evalRecord())
			want := []record.Expectation{{Name: tt.name, Line: 8, Passed: tt.detail == "", Detail: tt.detail}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Evaluate(%s) (-want +got):\n%s", tt.expect, diff)
			}
		})
	}
}

// evalCase loads a scenario with one expectation, on line 8.
func evalCase(t *testing.T, expect string) *Case {
	t.Helper()
	suite := loadText(t, `name: eval
servers: [{name: cmdb, command: cmdb}, {name: tickets, command: tickets}, {name: legacy, command: legacy}]
question: q
model: {scripted: []}
# Expectations start on line 8.

expect:
  - `+expect+"\n")
	cases, err := suite.Cases(CaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cases[0]
}

// TestEvaluateStatePositions checks that state expectations read
// Record.Checks by position, in the order written, and what a failed or
// non-JSON state call says.
func TestEvaluateStatePositions(t *testing.T) {
	testEnv(t)
	suite := loadText(t, `name: states
servers: [{name: tickets, command: tickets}]
question: q
model: {scripted: []}
expect:
  - {state: "tickets__list_tickets {}", matches: {total: 1}}
  - {answer_matches: "."}
  - {state: "tickets__count {table: tickets}"}
  - {state: "tickets__list_tickets {status: open}", matches: {total: 1}}
  - {state: "tickets__list_tickets {}"}
`)
	cases, _ := suite.Cases(CaseOptions{})
	c := cases[0]
	checks := c.StateChecks()
	var calls []string
	for _, ch := range checks {
		calls = append(calls, ch.Name+" "+ch.Arguments)
	}
	wantCalls := []string{"tickets__list_tickets {}", `tickets__count {"table":"tickets"}`, `tickets__list_tickets {"status":"open"}`, "tickets__list_tickets {}"}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("StateChecks (-want +got):\n%s", diff)
	}
	var got []string
	for _, e := range Evaluate(c, evalRecord()) {
		got = append(got, strings.TrimSpace(e.Name+" | "+e.Detail))
	}
	want := []string{
		`state "tickets__list_tickets {}" matches={"total":1} |`,
		`answer_matches="." |`,
		`state "tickets__count {table: tickets}" | state call outcome=tool_error error="no such table"`,
		`state "tickets__list_tickets {status: open}" matches={"total":1} | result is not JSON: "not json"`,
		`state "tickets__list_tickets {}" | no result for this state check: the record has 3`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Evaluate (-want +got):\n%s", diff)
	}
}

// TestEvaluateErrorRecord checks that a case that could not run (no turns,
// no calls, no servers) is still evaluated, each expectation saying what
// is missing.
func TestEvaluateErrorRecord(t *testing.T) {
	testEnv(t)
	suite := loadText(t, `name: broken-run
servers: [{name: cmdb, command: cmdb}]
question: q
model: {scripted: []}
expect:
  - {tool: cmdb__get_asset}
  - {answer_matches: x}
  - {unknown_tools: 0}
  - {server: cmdb, connected: false}
  - {state: "cmdb__count {}"}
`)
	cases, _ := suite.Cases(CaseOptions{})
	rec := &record.Record{Status: record.StatusError, Error: "server cmdb would not start"}
	var got []string
	for _, e := range Evaluate(cases[0], rec) {
		got = append(got, e.Name+" | "+strconv.FormatBool(e.Passed)+" | "+e.Detail)
	}
	want := []string{
		"tool cmdb__get_asset | false | no calls of cmdb__get_asset (no tool calls)",
		`answer_matches="x" | false | no turns in the record`,
		"unknown_tools=0 | true | ",
		"server cmdb connected=false | false | no server cmdb in the record",
		`state "cmdb__count {}" | false | no result for this state check: the record has 0`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Evaluate (-want +got):\n%s", diff)
	}
}

// TestEvaluateRecordFromJSON checks that a record read back from
// records.jsonl (numbers as float64) evaluates as the in-process one does.
func TestEvaluateRecordFromJSON(t *testing.T) {
	testEnv(t)
	data, err := json.Marshal(evalRecord())
	if err != nil {
		t.Fatal(err)
	}
	var rec record.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	c := evalCase(t, `{tool: tickets__open_ticket, args_exact: {host: jump-prod-02, priority: 1, tags: [ssh]}}`)
	if got := Evaluate(c, &rec); !got[0].Passed {
		t.Errorf("Evaluate on the decoded record: %+v, want passed", got[0])
	}
}

func TestNormalizeNumbers(t *testing.T) {
	tests := []struct {
		a, b any
		same bool
	}{
		{json.Number("1"), int64(1), true},
		{json.Number("1.0"), 1.0, true},
		{json.Number("1e3"), int64(1000), true},
		{json.Number("0.1"), 0.1, true},
		{0.1, 0.2, false},
		{json.Number("9007199254740993"), json.Number("9007199254740992"), false},
		{"1", int64(1), false},
		{map[string]any{"a": []any{1.0}}, map[string]any{"a": []any{json.Number("1")}}, true},
	}
	for _, tt := range tests {
		if got := cmp.Equal(normalize(tt.a), normalize(tt.b)); got != tt.same {
			t.Errorf("normalize(%#v) == normalize(%#v): %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}
