package model

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/yamlx"
)

// decodeStrict decodes YAML the way internal/scenario does: with the one
// strict reader, unknown fields and wrong kinds are errors.
func decodeStrict(t *testing.T, src string, v any) error {
	t.Helper()
	return yamlx.Decode("test.yaml", []byte(src), v, nil)
}

func TestParseCall(t *testing.T) {
	tests := []struct {
		in   string
		want ToolCall
	}{
		{"cmdb__get_asset {hostname: jump-prod-02}", ToolCall{Name: "cmdb__get_asset", Arguments: `{"hostname":"jump-prod-02"}`}},
		{"  cmdb__find_assets  ", ToolCall{Name: "cmdb__find_assets", Arguments: `{}`}},
		{"cmdb__find_assets {}", ToolCall{Name: "cmdb__find_assets", Arguments: `{}`}},
		{"t{a: 1}", ToolCall{Name: "t", Arguments: `{"a":1}`}},
		// Keys keep the order written, JSON input included.
		{`t {"b": 1, "a": [1, "two", null, true, 2.5]}`, ToolCall{Name: "t", Arguments: `{"b":1,"a":[1,"two",null,true,2.5]}`}},
		{"t {z: {y: 1, x: 2}, a: [{q: r}]}", ToolCall{Name: "t", Arguments: `{"z":{"y":1,"x":2},"a":[{"q":"r"}]}`}},
		// YAML types decide: quoted numbers stay strings, dates stay text.
		{`t {id: "42", n: 42, on: true, when: 2026-07-28, none: ~}`, ToolCall{Name: "t", Arguments: `{"id":"42","n":42,"on":true,"when":"2026-07-28","none":null}`}},
		{`tickets__open_ticket {host: jump-prod-02, summary: "brute force then login"}`, ToolCall{Name: "tickets__open_ticket", Arguments: `{"host":"jump-prod-02","summary":"brute force then login"}`}},
		// No HTML escaping: the host gets what the script says.
		{`t {q: "a < b & c"}`, ToolCall{Name: "t", Arguments: `{"q":"a < b & c"}`}},
		// A garbled name is kept as written.
		{"get_asset<|channel|>commentary {hostname: a}", ToolCall{Name: "get_asset<|channel|>commentary", Arguments: `{"hostname":"a"}`}},
		{"t {1: one}", ToolCall{Name: "t", Arguments: `{"1":"one"}`}},
		{"t {a: &x {b: 1}, c: *x}", ToolCall{Name: "t", Arguments: `{"a":{"b":1},"c":{"b":1}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCall(tt.in)
			if err != nil {
				t.Fatalf("ParseCall(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseCall(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseCallErrors(t *testing.T) {
	tests := []struct {
		in   string
		want string // substring of the error
	}{
		{"", "empty call"},
		{"   ", "empty call"},
		{"{a: 1}", "has no tool name"},
		{"t [1, 2]", `arguments of t: line 1: want a mapping like {key: value}, got a list`},
		{"t hello", `arguments of t: line 1: want a mapping like {key: value}, got "hello"`},
		{`t {"hostname": `, "arguments of t: yaml:"},
		{"t {a: .inf}", "arguments of t: line 1: json: unsupported value: +Inf"},
		{"t {[a]: 1}", "a mapping key must be a plain value"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseCall(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseCall(%q) error = %v, want it to contain %q", tt.in, err, tt.want)
			}
		})
	}
}

// The script of the DESIGN sketch plus every other step form, decoded the
// way a scenario file is.
const scriptYAML = `
- call: "cmdb__get_asset {hostname: jump-prod-02}"
- call: tickets__open_ticket
  args: {host: jump-prod-02, summary: "brute force then login", priority: 1}
- call: cmdb__get_asset
  raw_args: '{"hostname": '
- call: cmdb__get_asset
  raw_args: ''
- call: delete_everything
- calls:
    - "cmdb__get_asset {hostname: a}"
    - {call: cmdb__get_asset, args: {hostname: b}}
    - {call: cmdb__find_assets, raw_args: 'not json'}
- answer: "Opened the ticket."
- answer: second turn
`

func TestScripted(t *testing.T) {
	var steps []ScriptStep
	if err := decodeStrict(t, scriptYAML, &steps); err != nil {
		t.Fatal(err)
	}
	m, err := NewScripted(steps)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Name(), "scripted"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	want := []Response{
		{ToolCalls: []ToolCall{{ID: "call_1", Name: "cmdb__get_asset", Arguments: `{"hostname":"jump-prod-02"}`}}},
		{ToolCalls: []ToolCall{{ID: "call_2", Name: "tickets__open_ticket", Arguments: `{"host":"jump-prod-02","summary":"brute force then login","priority":1}`}}},
		{ToolCalls: []ToolCall{{ID: "call_3", Name: "cmdb__get_asset", Arguments: `{"hostname": `}}},
		{ToolCalls: []ToolCall{{ID: "call_4", Name: "cmdb__get_asset", Arguments: ``}}},
		{ToolCalls: []ToolCall{{ID: "call_5", Name: "delete_everything", Arguments: `{}`}}},
		{ToolCalls: []ToolCall{
			{ID: "call_6", Name: "cmdb__get_asset", Arguments: `{"hostname":"a"}`},
			{ID: "call_7", Name: "cmdb__get_asset", Arguments: `{"hostname":"b"}`},
			{ID: "call_8", Name: "cmdb__find_assets", Arguments: `not json`},
		}},
		{Text: "Opened the ticket."},
		{Text: "second turn"},
		// Exhausted: "done", every time.
		{Text: ScriptDone},
		{Text: ScriptDone},
	}
	ctx := context.Background()
	for i, w := range want {
		got, err := m.Next(ctx, Request{})
		if err != nil {
			t.Fatalf("Next #%d: %v", i+1, err)
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("Next #%d mismatch (-want +got):\n%s", i+1, diff)
		}
	}
}

func TestScriptedGoSteps(t *testing.T) {
	// Built in Go, the way the host's tests build scripts.
	raw := `{"x":`
	m, err := NewScripted([]ScriptStep{
		{Call: "cmdb__get_asset {hostname: jump-prod-02}"},
		{Call: "cmdb__get_asset", RawArgs: &raw},
		{Calls: []ScriptCall{{Call: "a"}, {Call: "b {k: v}"}}},
		{Answer: "ok"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []Response
	for range 5 {
		r, err := m.Next(context.Background(), Request{})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	want := []Response{
		{ToolCalls: []ToolCall{{ID: "call_1", Name: "cmdb__get_asset", Arguments: `{"hostname":"jump-prod-02"}`}}},
		{ToolCalls: []ToolCall{{ID: "call_2", Name: "cmdb__get_asset", Arguments: `{"x":`}}},
		{ToolCalls: []ToolCall{{ID: "call_3", Name: "a", Arguments: `{}`}, {ID: "call_4", Name: "b", Arguments: `{"k":"v"}`}}},
		{Text: "ok"},
		{Text: "done"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestNewScriptedErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"empty step", "- answer: ok\n- {}", "steps[1]: empty step: want one of call, calls or answer"},
		{"call and answer", "- {call: a, answer: b}", "steps[0]: want only one of call, calls or answer"},
		{"call and calls", "- {call: a, calls: [b]}", "steps[0]: want only one of call, calls or answer"},
		{"args without call", "- {answer: x, args: {a: 1}}", "steps[0]: args and raw_args belong to a call"},
		{"args and raw_args", "- {call: a, args: {a: 1}, raw_args: '{}'}", "steps[0]: want args or raw_args, not both"},
		{"inline and args", "- {call: 'a {b: 1}', args: {a: 1}}", "steps[0]: arguments given both inline in call and in args or raw_args"},
		{"inline and raw_args", "- {call: 'a {b: 1}', raw_args: '{}'}", "steps[0]: arguments given both inline"},
		{"args not a mapping", "- answer: x\n- answer: y\n- {call: a, args: [1, 2]}", "steps[2].args: line 3: want a mapping like {key: value}, got a list"},
		{"bad inline args", "- {call: 'a {b: '}", "steps[0].call: arguments of a: yaml:"},
		{"no name", "- {call: '{b: 1}'}", "steps[0].call: call \"{b: 1}\" has no tool name"},
		{"empty calls", "- {calls: []}", "steps[0].calls: empty list: want at least one call"},
		{"bad parallel call", "- calls: [a, 'b [1]']", "steps[0].calls[1].call: arguments of b: line 1: want a mapping"},
		{"bad parallel args", "- calls: [a, {call: b, args: x}]", `steps[0].calls[1].args: line 1: want a mapping like {key: value}, got "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var steps []ScriptStep
			if err := decodeStrict(t, tt.yaml, &steps); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			_, err := NewScripted(steps)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewScripted error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestScriptStepYAMLStrict(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"unknown step field", "- {call: a, arguments: {}}", `test.yaml:1: [0]: unknown field "arguments"`},
		{"unknown parallel call field", "- calls: [{call: a, argz: {}}]", `test.yaml:1: [0].calls[0]: unknown field "argz" (did you mean "args"?)`},
		{"parallel call of the wrong type", "- calls: [[a]]", "test.yaml:1: [0].calls[0]: want a call as a string or a mapping, got a list"},
		{"wrong type inside a parallel call", "- calls: [{call: [a]}]", "test.yaml:1: [0].calls[0].call: want a string, got a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var steps []ScriptStep
			err := decodeStrict(t, tt.yaml, &steps)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("decoding %q: error = %v, want it to contain %q", tt.yaml, err, tt.want)
			}
		})
	}
}

func TestScriptedCancelled(t *testing.T) {
	m, err := NewScripted([]ScriptStep{{Answer: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Next(ctx, Request{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Next on a cancelled context: error = %v, want context.Canceled", err)
	}
	// The cancelled request did not use up the step.
	got, err := m.Next(context.Background(), Request{})
	if err != nil || got.Text != "x" {
		t.Errorf("Next = %+v, %v; want the answer x", got, err)
	}
}

func TestScriptedConcurrentIDs(t *testing.T) {
	const n = 50
	steps := make([]ScriptStep, n)
	for i := range steps {
		steps[i] = ScriptStep{Calls: []ScriptCall{{Call: "a"}, {Call: "b"}}}
	}
	m, err := NewScripted(steps)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
		wg   sync.WaitGroup
	)
	for range n {
		wg.Go(func() {
			r, err := m.Next(context.Background(), Request{})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, c := range r.ToolCalls {
				seen[c.ID] = true
			}
		})
	}
	wg.Wait()
	for i := 1; i <= 2*n; i++ {
		if id := fmt.Sprintf("call_%d", i); !seen[id] {
			t.Errorf("call id %s never handed out", id)
		}
	}
}

// TestScriptRepeatsParseOnce: a script that repeats a call parses its
// arguments once (a parse is 67 allocations), and every copy is the call
// ParseCall makes of it, the last one with its own args too.
func TestScriptRepeatsParseOnce(t *testing.T) {
	const n = 100
	call := "everything__echo {message: hello}"
	steps := make([]ScriptStep, n)
	for i := range steps {
		steps[i] = ScriptStep{Call: call}
	}
	raw := `{"message":"bye"}`
	steps = append(steps, ScriptStep{Call: "everything__echo", RawArgs: &raw}, ScriptStep{Answer: "done"})
	s, err := newScripted(steps, "model.scripted")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseCall(call)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range s.steps[:n] {
		if diff := cmp.Diff([]ToolCall{want}, r.ToolCalls); diff != "" {
			t.Fatalf("step %d (-want +got):\n%s", i, diff)
		}
	}
	if got := s.steps[n].ToolCalls[0]; got != (ToolCall{Name: "everything__echo", Arguments: raw}) {
		t.Errorf("step %d: %+v, want its raw_args", n, got)
	}
	// A step's own allocations (its path, its call) are a few; a parse
	// of each call would be 100 x 67.
	const most = 8 * n
	if got := testing.AllocsPerRun(5, func() { newScripted(steps, "model.scripted") }); got > most {
		t.Errorf("a script of %d copies of one call: %.0f allocations, want at most %d", n, got, most)
	}
}
