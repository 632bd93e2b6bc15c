package model

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bikesYAML is the seed's Harbour Cycles mock model as a rules configuration.
const bikesYAML = `
name: bikes
rules:
  - {match: '\bB-\d{3}\b', call: bikes__get_bike, args: {bike_id: '{{index .Groups 0}}'}}
  - {match: '\b(S|M|L)\b', call: bikes__list_available, args: {size: '{{index .Groups 1}}', limit: 3}}
fallback: "Please give a bike ID (for example B-101) or a size (S, M or L)."
answers:
  - {error: true, template: "I could not check this: {{.Error}}"}
  - tool: bikes__get_bike
    template: "Bike {{.Result.bike_id}} ({{.Result.size}}, {{.Result.kind}}) is {{if .Result.available}}free now{{else}}not free now{{end}}, at {{.Result.dock}}."
  - tool: bikes__list_available
    template: "Free {{.Result.size}} bikes: {{range $i, $b := .Result.bikes}}{{if $i}}, {{end}}{{$b.bike_id}} at {{$b.dock}}{{else}}none{{end}}."
`

// bikeServer answers the way the seed's harbour_server.py does, in the
// host's words: JSON for a result, "error: ..." for a tool error.
func bikeServer(c ToolCall) string {
	var args map[string]any
	if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
		return "error: the arguments were not valid JSON"
	}
	switch c.Name {
	case "bikes__get_bike":
		if args["bike_id"] == "B-104" {
			return `{"bike_id":"B-104","size":"M","kind":"electric","available":true,"dock":"Old Pier"}`
		}
		return "error: Error executing tool get_bike: not_found: there is no bike " + args["bike_id"].(string)
	case "bikes__list_available":
		if args["size"] == "M" {
			return `{"size":"M","bikes":[{"bike_id":"B-101","dock":"Harbour Street"},{"bike_id":"B-104","dock":"Old Pier"}]}`
		}
		return `{"size":"` + args["size"].(string) + `","bikes":[]}`
	}
	return "error: there is no tool named " + c.Name
}

// converse plays the host for one turn: it asks the model, runs every
// proposed call through server and appends the messages, until the model
// answers. Tool messages carry only the tool_call_id, not the name, as an
// endpoint's would.
func converse(t *testing.T, m Model, msgs []Message, question string, server func(ToolCall) string) (answer string, calls []ToolCall, out []Message) {
	t.Helper()
	msgs = append(msgs, Message{Role: RoleUser, Content: question})
	for range 8 {
		r, err := m.Next(context.Background(), Request{Messages: msgs})
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		msgs = append(msgs, Message{Role: RoleAssistant, Content: r.Text, ToolCalls: r.ToolCalls})
		if len(r.ToolCalls) == 0 {
			return r.Text, calls, msgs
		}
		for _, c := range r.ToolCalls {
			calls = append(calls, c)
			msgs = append(msgs, Message{Role: RoleTool, ToolCallID: c.ID, Content: server(c)})
		}
	}
	t.Fatalf("no answer after 8 steps")
	return "", nil, nil
}

func newBikes(t *testing.T) *Rules {
	t.Helper()
	var cfg RulesConfig
	if err := decodeStrict(t, bikesYAML, &cfg); err != nil {
		t.Fatal(err)
	}
	m, err := NewRules(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRulesBikes(t *testing.T) {
	tests := []struct {
		question  string
		wantCalls []ToolCall
		want      string
	}{
		{
			question:  "Is bike B-104 free?",
			wantCalls: []ToolCall{{ID: "call_1", Name: "bikes__get_bike", Arguments: `{"bike_id":"B-104"}`}},
			want:      "Bike B-104 (M, electric) is free now, at Old Pier.",
		},
		{
			question:  "Which M bikes are free now?",
			wantCalls: []ToolCall{{ID: "call_1", Name: "bikes__list_available", Arguments: `{"size":"M","limit":3}`}},
			want:      "Free M bikes: B-101 at Harbour Street, B-104 at Old Pier.",
		},
		{
			question:  "Any L bikes?",
			wantCalls: []ToolCall{{ID: "call_1", Name: "bikes__list_available", Arguments: `{"size":"L","limit":3}`}},
			want:      "Free L bikes: none.",
		},
		{
			question:  "Is bike B-999 free?",
			wantCalls: []ToolCall{{ID: "call_1", Name: "bikes__get_bike", Arguments: `{"bike_id":"B-999"}`}},
			want:      "I could not check this: Error executing tool get_bike: not_found: there is no bike B-999",
		},
		{
			question: "Can I rent a bike tomorrow?",
			want:     "Please give a bike ID (for example B-101) or a size (S, M or L).",
		},
	}
	m := newBikes(t)
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			msgs := []Message{{Role: RoleSystem, Content: "You help at Harbour Cycles."}}
			got, calls, _ := converse(t, m, msgs, tt.question, bikeServer)
			if diff := cmp.Diff(tt.wantCalls, calls); diff != "" {
				t.Errorf("calls mismatch (-want +got):\n%s", diff)
			}
			if got != tt.want {
				t.Errorf("answer = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRulesSecondTurn(t *testing.T) {
	// The model decides on the latest user message, and its call IDs go on
	// from the ones already in the conversation.
	m := newBikes(t)
	_, _, msgs := converse(t, m, nil, "Is bike B-104 free?", bikeServer)
	got, calls, _ := converse(t, m, msgs, "And M bikes?", bikeServer)
	wantCalls := []ToolCall{{ID: "call_2", Name: "bikes__list_available", Arguments: `{"size":"M","limit":3}`}}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("calls mismatch (-want +got):\n%s", diff)
	}
	if want := "Free M bikes: B-101 at Harbour Street, B-104 at Old Pier."; got != want {
		t.Errorf("answer = %q, want %q", got, want)
	}
	// A third question that matches nothing gets the fallback, although
	// earlier turns have results.
	got, calls, _ = converse(t, m, msgs, "thanks!", bikeServer)
	if len(calls) != 0 || !strings.HasPrefix(got, "Please give a bike ID") {
		t.Errorf("third turn: calls %v, answer %q; want no calls and the fallback", calls, got)
	}
}

func TestRulesName(t *testing.T) {
	if got, want := newBikes(t).Name(), "rules:bikes"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	m, err := NewRules(RulesConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Name(), "rules"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
}

// clipped is a list_available result the host cut to its budget: no longer JSON.
const clipped = `{"size":"M","bikes":[{"bike_id":"B-101","dock":"Harb` + "\n[result cut to 48 bytes by the host: ask for less, e.g. with a filter or a smaller limit]"

func TestRulesResults(t *testing.T) {
	tests := []struct {
		name     string
		template string
		result   string
		want     string
	}{
		{
			name:     "clipped result, template checks",
			template: `{{if .Clipped}}The list was too long ({{len .Text}} bytes).{{else}}{{.Result.size}}{{end}}`,
			result:   clipped,
			want:     "The list was too long (142 bytes).",
		},
		{
			// The seed's template over a cut result: an answer, not a crash.
			name:     "clipped result, template reads fields",
			template: `Free {{.Result.size}} bikes.`,
			result:   clipped,
			want:     `rules model: template: answers[0].template:1:14: executing "answers[0].template" at <.Result.size>: nil pointer evaluating interface {}.size`,
		},
		{
			name:     "plain text result",
			template: `{{if .Result}}json{{else}}text: {{.Text}}{{end}}`,
			result:   "Bike B-104 is at Old Pier.",
			want:     "text: Bike B-104 is at Old Pier.",
		},
		{
			name:     "missing key",
			template: `{{.Result.colour}}`,
			result:   `{"size":"M"}`,
			want:     `rules model: template: answers[0].template:1:9: executing "answers[0].template" at <.Result.colour>: map has no entry for key "colour"`,
		},
		{
			name:     "optional key through with index",
			template: `[{{with index .Result "colour"}}{{.}}{{else}}any colour{{end}}]`,
			result:   `{"size":"M"}`,
			want:     "[any colour]",
		},
		{
			name:     "numbers print as sent",
			template: `{{.Result.count}} {{.Result.ratio}} {{.Result.big}}`,
			result:   `{"count":1234567,"ratio":0.25,"big":12345678901234567890}`,
			want:     "1234567 0.25 12345678901234567890",
		},
		{
			name:     "json of a value",
			template: `{{json .Result.bikes}}`,
			result:   `{"bikes":[{"id":"B-1","at":"a < b"}]}`,
			want:     `[{"at":"a < b","id":"B-1"}]`, // keys sorted: the result was decoded into a map
		},
		{
			name:     "question, groups and tool",
			template: `{{.Question}}|{{index .Groups 0}}|{{.Tool}}`,
			result:   `{}`,
			want:     "where is B-104?|B-104|bikes__get_bike",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewRules(RulesConfig{
				Rules:   []Rule{{Match: `B-\d+`, Call: "bikes__get_bike"}},
				Answers: []AnswerRule{{Template: tt.template}},
			})
			if err != nil {
				t.Fatal(err)
			}
			got, _, _ := converse(t, m, nil, "where is B-104?", func(ToolCall) string { return tt.result })
			if got != tt.want {
				t.Errorf("answer = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRulesAnswerChoice(t *testing.T) {
	// Answer rules are tried in order; Tool and Error narrow them; the
	// defaults cover what no rule does.
	cfg := RulesConfig{
		Rules: []Rule{
			{Match: `^a`, Call: "srv__a"},
			{Match: `^b`, Call: "srv__b"},
			{Match: `^c`, Call: "srv__c"},
		},
		Answers: []AnswerRule{
			{Tool: "srv__a", Error: true, Template: "a failed: {{.Error}}"},
			{Tool: "srv__a", Template: "a: {{.Text}}"},
			{Tool: "srv__b", Template: "b: {{.Text}}"},
		},
	}
	m, err := NewRules(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		question, result, want string
	}{
		{"a", `{"x":1}`, `a: {"x":1}`},
		{"a", "error: boom", "a failed: boom"},
		{"b", `"text"`, `b: "text"`},
		{"b", "error: boom", "I could not do this: boom"}, // DefaultRulesErrorAnswer
		{"c", `{"y":2}`, `{"y":2}`},                       // DefaultRulesAnswer
		{"z", "", DefaultRulesFallback},
	}
	for _, tt := range tests {
		t.Run(tt.question+" "+tt.result, func(t *testing.T) {
			got, _, _ := converse(t, m, nil, tt.question, func(ToolCall) string { return tt.result })
			if got != tt.want {
				t.Errorf("answer = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRulesThen(t *testing.T) {
	const cfgYAML = `
rules:
  - match: '\b(jump-[a-z0-9-]+)'
    call: cmdb__get_asset
    args: {hostname: '{{index .Groups 1}}'}
    then:
      call: tickets__open_ticket
      args: {host: '{{.Result.hostname}}', team: '{{.Result.owner}}', tags: [ssh, '{{.Result.env}}'], priority: 1}
answers:
  - {error: true, template: "failed: {{.Error}}"}
  - {tool: tickets__open_ticket, template: "Opened {{.Result.ticket_id}}."}
`
	var cfg RulesConfig
	if err := decodeStrict(t, cfgYAML, &cfg); err != nil {
		t.Fatal(err)
	}
	m, err := NewRules(cfg)
	if err != nil {
		t.Fatal(err)
	}
	server := func(c ToolCall) string {
		switch {
		case c.Name == "cmdb__get_asset" && strings.Contains(c.Arguments, "jump-prod-02"):
			return `{"hostname":"jump-prod-02","owner":"platform","env":"prod"}`
		case c.Name == "cmdb__get_asset":
			return "error: no such host"
		case c.Name == "tickets__open_ticket":
			return `{"ticket_id":"INC-7"}`
		}
		return "error: unknown"
	}

	got, calls, _ := converse(t, m, nil, "open a ticket for jump-prod-02", server)
	wantCalls := []ToolCall{
		{ID: "call_1", Name: "cmdb__get_asset", Arguments: `{"hostname":"jump-prod-02"}`},
		{ID: "call_2", Name: "tickets__open_ticket", Arguments: `{"host":"jump-prod-02","team":"platform","tags":["ssh","prod"],"priority":1}`},
	}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("calls mismatch (-want +got):\n%s", diff)
	}
	if want := "Opened INC-7."; got != want {
		t.Errorf("answer = %q, want %q", got, want)
	}

	// A failed first call answers at once: no second call.
	got, calls, _ = converse(t, m, nil, "open a ticket for jump-dev-09", server)
	if len(calls) != 1 || got != "failed: no such host" {
		t.Errorf("calls %v, answer %q; want one call and %q", calls, got, "failed: no such host")
	}
}

func TestRulesArgTemplateFailure(t *testing.T) {
	m, err := NewRules(RulesConfig{Rules: []Rule{{Match: `x`, Call: "t"}}})
	if err != nil {
		t.Fatal(err)
	}
	// No arguments: {}.
	r, err := m.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []ToolCall{{ID: "call_1", Name: "t", Arguments: "{}"}}; !cmp.Equal(want, r.ToolCalls) {
		t.Errorf("ToolCalls = %v, want %v", r.ToolCalls, want)
	}

	var cfg RulesConfig
	if err := decodeStrict(t, `rules: [{match: 'B', call: t, args: {id: '{{index .Groups 3}}'}}]`, &cfg); err != nil {
		t.Fatal(err)
	}
	if m, err = NewRules(cfg); err != nil {
		t.Fatal(err)
	}
	r, err = m.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "B"}}})
	if err != nil {
		t.Fatalf("Next returned an error, want the failure as the answer: %v", err)
	}
	want := `rules model: template: rules[0].args.id:1:2: executing "rules[0].args.id" at <index .Groups 3>: error calling index: index out of range: 3`
	if r.Text != want || len(r.ToolCalls) != 0 {
		t.Errorf("Next = %+v, want the answer %q", r, want)
	}
}

func TestRulesNoUserMessage(t *testing.T) {
	m := newBikes(t)
	r, err := m.Next(context.Background(), Request{Messages: []Message{{Role: RoleSystem, Content: "B-104"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Text, "Please give a bike ID") || len(r.ToolCalls) != 0 {
		t.Errorf("Next = %+v, want the fallback", r)
	}
}

func TestNewRulesErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"bad regexp", "rules: [{match: a, call: t}, {match: '(', call: t}]", "rules[1].match: error parsing regexp: missing closing ): `(`"},
		{"no match", "rules: [{call: t}]", "rules[0].match: required"},
		{"no call", "rules: [{match: a}]", "rules[0].call: required"},
		{"args not a mapping", "rules: [{match: a, call: t, args: [1]}]", "rules[0].args: line 1: want a mapping like {key: value}, got a list"},
		{"bad arg template", "rules: [{match: a, call: t, args: {x: {y: '{{.Question'}}}]", "rules[0].args.x.y: template: rules[0].args.x.y:1: unclosed action"},
		{"bad arg in a list", "rules: [{match: a, call: t, args: {x: [ok, '{{end}}']}}]", "rules[0].args.x[1]: template:"},
		{"then without call", "rules: [{match: a, call: t, then: {args: {}}}]", "rules[0].then.call: required"},
		{"bad then template", "rules: [{match: a, call: t, then: {call: u, args: {a: '{{'}}}]", "rules[0].then.args.a: template:"},
		{"bad fallback", "fallback: '{{.Nope'", "fallback: template: fallback:1: unclosed action"},
		{"bad answer", "answer: '{{if}}'", "answer: template: answer:1: missing value for if"},
		{"empty answer rule", "answers: [{tool: t}]", "answers[0].template: required"},
		{"bad answer rule", "answers: [{template: ok}, {template: '{{range}}'}]", "answers[1].template: template: answers[1].template:1: missing value for range"},
		{"bad number", "rules: [{match: a, call: t, args: {x: .nan}}]", "rules[0].args.x: line 1: json: unsupported value: NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg RulesConfig
			if err := decodeStrict(t, tt.yaml, &cfg); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			_, err := NewRules(cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewRules error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestRulesConfigYAMLStrict(t *testing.T) {
	var cfg RulesConfig
	err := decodeStrict(t, "rules: [{match: a, call: t, arguments: {}}]", &cfg)
	if err == nil || !strings.Contains(err.Error(), `test.yaml:1: rules[0]: unknown field "arguments"`) {
		t.Errorf("decoding an unknown field: error = %v, want the unknown field arguments", err)
	}
}
