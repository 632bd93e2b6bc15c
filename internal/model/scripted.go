package model

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hosteval/hosteval/internal/yamlx"
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
	Call string `yaml:"call" doc:"A tool call: the name as the model would write it (it need not exist), then optionally its arguments as a YAML flow mapping or a JSON object. Quote it when it has arguments." example:"'cmdb__get_asset {hostname: jump-prod-02}'"`
	// Args are the arguments of Call as a mapping, in the order written
	// (a zero Value means none).
	Args yamlx.Value `yaml:"args" doc:"The arguments of call as a mapping, sent as JSON with the keys in the order written." example:"{hostname: jump-prod-02}"`
	// RawArgs is the arguments text of Call, sent unchanged (it may be
	// invalid JSON on purpose).
	RawArgs *string `yaml:"raw_args" doc:"The arguments of call as text, sent unchanged: invalid JSON on purpose, to test the host." example:"'{\"hostname\": '"`
	// Calls are several calls proposed in one message.
	Calls []ScriptCall `yaml:"calls" doc:"Several calls proposed in one message (parallel calls): each a call string or {call, args, raw_args}." example:"['cmdb__get_asset {hostname: a}', {call: cmdb__get_asset, args: {hostname: b}}]"`
	// Answer is the final answer of the turn. An empty answer cannot be
	// scripted: an empty Answer means the field is not set.
	Answer string `yaml:"answer" doc:"The model's answer, which ends the turn." example:"Opened the ticket."`
}

// ScriptCall is one call of a [ScriptStep]'s Calls. In YAML it is either a
// string ("<name> <args>") or a mapping with the fields below.
type ScriptCall struct {
	Call    string      `yaml:"call" required:"true" doc:"The tool call: a name, optionally followed by its arguments." example:"cmdb__get_asset"`
	Args    yamlx.Value `yaml:"args" doc:"The arguments as a mapping." example:"{hostname: b}"`
	RawArgs *string     `yaml:"raw_args" doc:"The arguments as text, sent unchanged." example:"'not json'"`
}

// scriptCallFields is ScriptCall without its methods, read as a mapping.
type scriptCallFields ScriptCall

// UnmarshalYAML accepts the string shorthand as well as the mapping form.
func (c *ScriptCall) UnmarshalYAML(n *yamlx.Node) error {
	switch n.Kind() {
	case yamlx.Scalar:
		*c = ScriptCall{Call: n.Text()}
	case yamlx.Mapping:
		n.Decode((*scriptCallFields)(c))
	default:
		return fmt.Errorf("want a call as a string or a mapping, got %s", n.Describe())
	}
	return nil
}

// JSONSchema is a call string or a mapping.
func (*ScriptCall) JSONSchema(r *yamlx.Reflector) *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
		{Type: "string", Description: "A call: a name, optionally followed by its arguments."},
		r.For(reflect.TypeFor[scriptCallFields]()),
	}}
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
	v, err := yamlx.ParseValue(rest)
	if err != nil {
		return ToolCall{}, fmt.Errorf("arguments of %s: %w", name, err)
	}
	args, err := mappingJSON(v)
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

// NewScripted checks and parses a script. Errors are [yamlx.Problem]s
// naming the step and field, e.g. "steps[2].call: arguments of get_asset:
// ...".
func NewScripted(steps []ScriptStep) (*Scripted, error) {
	return newScripted(steps, "steps")
}

func newScripted(steps []ScriptStep, path string) (*Scripted, error) {
	s := &Scripted{steps: make([]Response, 0, len(steps))}
	calls := callMemo{}
	for i, st := range steps {
		p := fmt.Sprintf("%s[%d]", path, i)
		r, err := parseStep(st, p, calls)
		if err != nil {
			return nil, err
		}
		s.steps = append(s.steps, r)
	}
	return s, nil
}

// callMemo holds the calls of a script already parsed, by their text: a
// script repeats its calls (a benchmark's hundred echoes, a retry), and
// each costs a YAML parse of its arguments, 9 KB and 67 allocations.
// A ToolCall is two strings, so one parse can stand for every copy.
type callMemo map[string]ToolCall

// parse is ParseCall(s), parsed once per text.
func (m callMemo) parse(s string) (ToolCall, error) {
	if tc, ok := m[s]; ok {
		return tc, nil
	}
	tc, err := ParseCall(s)
	if err == nil {
		m[s] = tc
	}
	return tc, err
}

func parseStep(st ScriptStep, path string, calls callMemo) (Response, error) {
	set := 0
	for _, b := range []bool{st.Call != "", st.Calls != nil, st.Answer != ""} {
		if b {
			set++
		}
	}
	switch {
	case set == 0:
		return Response{}, yamlx.Errorf(path, "empty step: want one of call, calls or answer")
	case set > 1:
		return Response{}, yamlx.Errorf(path, "want only one of call, calls or answer")
	case st.Call == "" && (!st.Args.IsZero() || st.RawArgs != nil):
		return Response{}, yamlx.Errorf(path, "args and raw_args belong to a call")
	case st.Answer != "":
		return Response{Text: st.Answer}, nil
	case st.Call != "":
		c, err := parseScriptCall(ScriptCall{Call: st.Call, Args: st.Args, RawArgs: st.RawArgs}, path, calls)
		if err != nil {
			return Response{}, err
		}
		return Response{ToolCalls: []ToolCall{c}}, nil
	}
	if len(st.Calls) == 0 {
		return Response{}, yamlx.Errorf(path+".calls", "empty list: want at least one call")
	}
	var r Response
	for j, c := range st.Calls {
		tc, err := parseScriptCall(c, fmt.Sprintf("%s.calls[%d]", path, j), calls)
		if err != nil {
			return Response{}, err
		}
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	return r, nil
}

func parseScriptCall(c ScriptCall, path string, calls callMemo) (ToolCall, error) {
	if !c.Args.IsZero() && c.RawArgs != nil {
		return ToolCall{}, yamlx.Errorf(path, "want args or raw_args, not both")
	}
	tc, err := calls.parse(c.Call)
	if err != nil {
		return ToolCall{}, yamlx.At(path+".call", 0, err)
	}
	// ParseCall succeeded, so a name comes first: inline arguments are
	// whatever follows it.
	inline := strings.IndexFunc(strings.TrimSpace(c.Call), argsStart) > 0
	if inline && (!c.Args.IsZero() || c.RawArgs != nil) {
		return ToolCall{}, yamlx.Errorf(path, "arguments given both inline in call and in args or raw_args")
	}
	switch {
	case c.RawArgs != nil:
		tc.Arguments = *c.RawArgs
	case !c.Args.IsZero():
		args, err := mappingJSON(c.Args)
		if err != nil {
			return ToolCall{}, yamlx.At(path+".args", 0, err)
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
