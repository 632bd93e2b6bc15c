package model

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"gopkg.in/yaml.v3"
)

// ScriptDone is the answer of a [Scripted] model whose script has run out.
// It matches the seed's Scripted model, which answers "done" after its calls.
const ScriptDone = "done"

// ScriptStep is one model message of a script: exactly one of Call, Calls or
// Answer is set. In YAML:
//
//	# a name and inline arguments
//	- call: "cmdb__get_asset {hostname: jump-prod-02}"
//	# a name, and the arguments as a mapping
//	- call: cmdb__get_asset
//	  args: {hostname: jump-prod-02}
//	# arguments sent exactly as written
//	- call: cmdb__get_asset
//	  raw_args: '{"hostname": '
//	# parallel calls in one message
//	- calls:
//	    - "cmdb__get_asset {hostname: a}"
//	    - {call: cmdb__get_asset, args: {hostname: b}}
//	# the answer, which ends the turn
//	- answer: "Opened the ticket."
type ScriptStep struct {
	// Call is "<name>" or "<name> <args>", where <args> is a YAML flow
	// mapping or a JSON object (see [ParseCall]). In YAML, quote it when it
	// has arguments: a plain scalar cannot hold ": ".
	Call string `yaml:"call,omitempty"`
	// Args are the arguments of Call as a mapping, in the order written
	// (a zero Node means none).
	Args yaml.Node `yaml:"args,omitempty"`
	// RawArgs is the arguments text of Call, sent unchanged (it may be
	// invalid JSON on purpose).
	RawArgs *string `yaml:"raw_args,omitempty"`
	// Calls are several calls proposed in one message.
	Calls []ScriptCall `yaml:"calls,omitempty"`
	// Answer is the final answer of the turn. An empty answer cannot be
	// scripted: an empty Answer means the field is not set.
	Answer string `yaml:"answer,omitempty"`
}

// ScriptCall is one call of a [ScriptStep]'s Calls. In YAML it is either a
// string ("<name> <args>") or a mapping with the fields below.
type ScriptCall struct {
	Call    string    `yaml:"call"`
	Args    yaml.Node `yaml:"args,omitempty"`
	RawArgs *string   `yaml:"raw_args,omitempty"`
}

// UnmarshalYAML accepts the string shorthand as well as the mapping form.
// The mapping's keys are checked here because a custom unmarshaler does not
// inherit the caller's KnownFields strictness.
func (c *ScriptCall) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*c = ScriptCall{Call: n.Value}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want a call as a string or a mapping, got %s", n.Line, kindName(n))}}
	}
	var unknown []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i]; k.Value {
		case "call", "args", "raw_args":
		default:
			unknown = append(unknown, fmt.Sprintf("line %d: field %s not found in type model.ScriptCall", k.Line, k.Value))
		}
	}
	if len(unknown) > 0 {
		return &yaml.TypeError{Errors: unknown}
	}
	type plain ScriptCall // without this method, so Decode does not recurse
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*c = ScriptCall(p)
	return nil
}

// ParseCall parses "<name>" or "<name> <args>" into a tool call without an
// ID. <args> is a YAML flow mapping or a JSON object, re-encoded as a JSON
// object with its keys in the order written; without <args> the arguments
// are "{}". The name is taken as written, so a script (or a person at the
// CLI) can propose a name no server offers.
//
//	ParseCall(`cmdb__get_asset {hostname: jump-prod-02}`)
//	// ToolCall{Name: "cmdb__get_asset", Arguments: `{"hostname":"jump-prod-02"}`}
func ParseCall(s string) (ToolCall, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return ToolCall{}, errors.New("empty call: want \"<name> <args>\"")
	}
	end := strings.IndexFunc(s, argsStart)
	if end == 0 {
		return ToolCall{}, fmt.Errorf("call %q has no tool name: want \"<name> <args>\"", s)
	}
	if end < 0 {
		return ToolCall{Name: s, Arguments: "{}"}, nil
	}
	name, rest := s[:end], strings.TrimSpace(s[end:])
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(rest), &n); err != nil {
		return ToolCall{}, fmt.Errorf("arguments of %s: %w", name, err)
	}
	args, err := mappingJSON(&n)
	if err != nil {
		return ToolCall{}, fmt.Errorf("arguments of %s: %w", name, err)
	}
	return ToolCall{Name: name, Arguments: string(args)}, nil
}

// argsStart reports whether r ends the name of a call and starts its
// arguments.
func argsStart(r rune) bool { return unicode.IsSpace(r) || r == '{' }

// Scripted is a model that proposes exactly the calls a test wants, then an
// answer. The script is one flat list consumed across the turns of a
// conversation: each Next returns the next step, and once the script has run
// out every Next answers [ScriptDone]. Tool call IDs are call_1, call_2, ...
// over the whole conversation.
//
// A Scripted model holds its position in the script, so it belongs to one
// conversation: build one per case. It is safe for concurrent use, but
// concurrent conversations would share (and split) the script.
type Scripted struct {
	steps []Response // ToolCalls without IDs

	mu     sync.Mutex
	next   int // index into steps
	callID int // the last call ID handed out
}

// NewScripted checks and parses a script. Errors name the step and field,
// e.g. "steps[2].call: arguments of get_asset: ...".
func NewScripted(steps []ScriptStep) (*Scripted, error) {
	return newScripted(steps, "steps")
}

func newScripted(steps []ScriptStep, path string) (*Scripted, error) {
	s := &Scripted{steps: make([]Response, 0, len(steps))}
	for i, st := range steps {
		p := fmt.Sprintf("%s[%d]", path, i)
		r, err := parseStep(st, p)
		if err != nil {
			return nil, err
		}
		s.steps = append(s.steps, r)
	}
	return s, nil
}

func parseStep(st ScriptStep, path string) (Response, error) {
	set := 0
	for _, b := range []bool{st.Call != "", st.Calls != nil, st.Answer != ""} {
		if b {
			set++
		}
	}
	switch {
	case set == 0:
		return Response{}, fmt.Errorf("%s: empty step: want one of call, calls or answer", path)
	case set > 1:
		return Response{}, fmt.Errorf("%s: want only one of call, calls or answer", path)
	case st.Call == "" && (st.Args.Kind != 0 || st.RawArgs != nil):
		return Response{}, fmt.Errorf("%s: args and raw_args belong to a call", path)
	case st.Answer != "":
		return Response{Text: st.Answer}, nil
	case st.Call != "":
		c, err := parseScriptCall(ScriptCall{Call: st.Call, Args: st.Args, RawArgs: st.RawArgs}, path)
		if err != nil {
			return Response{}, err
		}
		return Response{ToolCalls: []ToolCall{c}}, nil
	}
	if len(st.Calls) == 0 {
		return Response{}, fmt.Errorf("%s.calls: empty list: want at least one call", path)
	}
	var r Response
	for j, c := range st.Calls {
		tc, err := parseScriptCall(c, fmt.Sprintf("%s.calls[%d]", path, j))
		if err != nil {
			return Response{}, err
		}
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	return r, nil
}

func parseScriptCall(c ScriptCall, path string) (ToolCall, error) {
	if c.Args.Kind != 0 && c.RawArgs != nil {
		return ToolCall{}, fmt.Errorf("%s: want args or raw_args, not both", path)
	}
	tc, err := ParseCall(c.Call)
	if err != nil {
		return ToolCall{}, fmt.Errorf("%s.call: %w", path, err)
	}
	// ParseCall succeeded, so a name comes first: inline arguments are
	// whatever follows it.
	inline := strings.IndexFunc(strings.TrimSpace(c.Call), argsStart) > 0
	if inline && (c.Args.Kind != 0 || c.RawArgs != nil) {
		return ToolCall{}, fmt.Errorf("%s: arguments given both inline in call and in args or raw_args", path)
	}
	switch {
	case c.RawArgs != nil:
		tc.Arguments = *c.RawArgs
	case c.Args.Kind != 0:
		args, err := mappingJSON(&c.Args)
		if err != nil {
			return ToolCall{}, fmt.Errorf("%s.args: %w", path, err)
		}
		tc.Arguments = string(args)
	}
	return tc, nil
}

// Name implements [Model].
func (*Scripted) Name() string { return "scripted" }

// Next implements [Model]: it returns the next step of the script.
func (s *Scripted) Next(ctx context.Context, _ Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.steps) {
		return Response{Text: ScriptDone}, nil
	}
	step := s.steps[s.next]
	s.next++
	r := Response{Text: step.Text}
	for _, c := range step.ToolCalls {
		s.callID++
		c.ID = fmt.Sprintf("call_%d", s.callID)
		r.ToolCalls = append(r.ToolCalls, c)
	}
	return r, nil
}
