package gate

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hosteval/hosteval/internal/yamlx"
)

// Load reads a gates file:
//
//	gates:
//	  - pass_rate >= 1
//	  - unknown_tools == 0
//	  - {scenario: "ticket-.*", gate: "p95_call_ms <= 50"}
//	  - gate: tool_def_tokens <= baseline * 1.05
//	    variant: "b-.*"
//	    model: scripted
//
// An item is a gate's text, or a mapping with "gate" and optional
// "scenario", "variant" and "model" regular expressions, which must match
// a name in full. Every problem of the file is reported at once, one per
// line, each with the file and line ("gates.yaml:4: invalid gate ..."); the
// error wraps ErrInvalid, and errors.As finds each [yamlx.Problem].
func Load(path string) ([]Gate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load gates: %w", err)
	}
	return parse(path, data)
}

func parse(path string, data []byte) ([]Gate, error) {
	var ps yamlx.Problems
	docs, err := yamlx.Parse(path, data, &ps)
	if err != nil {
		ps.Add(err.(yamlx.Problem))
	}
	var f gatesFile
	switch {
	case len(docs) > 0:
		if root := docs[0].Root(); root != nil {
			root.Decode(&f)
		}
	case err == nil:
		ps.Add(yamlx.Problem{File: path, Msg: `empty file, want a "gates:" list`})
	}
	if ps.Len() > 0 {
		return nil, &gatesError{problems: ps.Sorted()}
	}
	var gates []Gate
	for _, it := range f.Gates {
		gates = append(gates, it.gate)
	}
	return gates, nil
}

// FileSchema is the JSON Schema of a gates file.
func FileSchema(id string) *jsonschema.Schema {
	return yamlx.Schema(reflect.TypeFor[gatesFile](), id, "hosteval gates file",
		"Thresholds a run must hold, checked by hosteval gate and hosteval run -gates.")
}

// gatesFile is a gates file, as written.
type gatesFile struct {
	Gates []gateItem `yaml:"gates" required:"true" doc:"The gates: each \"<metric> <op> <number>\" (op one of < <= == != >= >) or \"<metric> <op> baseline\" (optionally * + or - a number), checked on every scenario+variant+model group its scopes match." example:"[\"pass_rate >= 1\", \"tool_def_tokens <= baseline * 1.05\"]"`
}

// UnmarshalYAML reads the file's one key, in the words of the gate errors.
func (f *gatesFile) UnmarshalYAML(n *yamlx.Node) error {
	if n.Kind() != yamlx.Mapping {
		return fmt.Errorf(`want a mapping with a "gates:" list`)
	}
	for _, kv := range n.Fields() {
		if kv.Key != "gates" {
			n.Report(yamlx.Problem{Line: kv.KeyLine, Path: n.Path(), Msg: fmt.Sprintf("unknown field %q (known: gates)%s", kv.Key, yamlx.Suggest(kv.Key, []string{"gates"}))})
		}
	}
	list := n.Get("gates")
	switch {
	case list == nil:
		return fmt.Errorf(`missing "gates:" list`)
	case list.Kind() == yamlx.Sequence && len(list.Items()) == 0:
		list.Errorf("the list is empty")
		return nil
	}
	list.Decode(&f.Gates)
	return nil
}

// JSONSchema is the file's fields.
func (*gatesFile) JSONSchema(r *yamlx.Reflector) *jsonschema.Schema {
	return r.Inline(reflect.TypeFor[gatesFields]())
}

// gatesFields are gatesFile's fields, without its reading rules.
type gatesFields gatesFile

// gateItem is one gate: its text, or a mapping with scopes.
type gateItem struct {
	gate Gate
}

// scopedGate is a gate written as a mapping.
type scopedGate struct {
	Gate     string `yaml:"gate" required:"true" doc:"The gate's text." example:"p95_call_ms <= 900"`
	Scenario string `yaml:"scenario" want:"a regular expression" doc:"Only groups whose scenario name this regular expression matches in full." example:"ticket-.*"`
	Variant  string `yaml:"variant" want:"a regular expression" doc:"Only groups whose variant name it matches in full." example:"b-.*"`
	Model    string `yaml:"model" want:"a regular expression" doc:"Only groups whose model name it matches in full." example:"scripted"`
}

var scopedGateKeys = sync.OnceValue(func() []string { return yamlx.Keys(reflect.TypeFor[scopedGate]()) })

func (it *gateItem) UnmarshalYAML(n *yamlx.Node) error {
	gateText := n
	var scopes scopedGate
	switch n.Kind() {
	case yamlx.Scalar:
	case yamlx.Mapping:
		var unknown []string
		for _, kv := range n.Fields() {
			if !slices.Contains(scopedGateKeys(), kv.Key) {
				unknown = append(unknown, kv.Key)
				n.Report(yamlx.Problem{Line: kv.KeyLine, Path: n.Path(), Msg: fmt.Sprintf("unknown field %q (known: %s)%s",
					kv.Key, strings.Join(scopedGateKeys(), ", "), yamlx.Suggest(kv.Key, scopedGateKeys()))})
			}
		}
		if !n.Has("gate") {
			return fmt.Errorf(`missing "gate"`)
		}
		if gateText = n.Get("gate"); gateText == nil || gateText.Kind() != yamlx.Scalar {
			return yamlx.Errorf("gate", `want text like "pass_rate >= 1"`)
		}
		if !n.Omit(unknown...).Decode(&scopes) {
			return nil
		}
	default:
		return fmt.Errorf(`want a gate's text or a mapping with "gate"`)
	}
	g, err := Parse(gateText.Text())
	if err != nil {
		gateText.Locate(err)
		return nil
	}
	for _, sc := range []struct {
		name, re string
		dst      **regexp.Regexp
	}{{"scenario", scopes.Scenario, &g.Scenario}, {"variant", scopes.Variant, &g.Variant}, {"model", scopes.Model, &g.Model}} {
		if n.Get(sc.name) == nil {
			continue
		}
		if _, err := regexp.Compile(sc.re); err != nil { // the expression as written, not anchored
			n.Locate(yamlx.Errorf(sc.name, "%v", err))
			return nil
		}
		*sc.dst, _ = anchor(sc.re)
	}
	g.Pos = fmt.Sprintf("%s:%d", n.File(), n.Line())
	it.gate = g
	return nil
}

func (*gateItem) JSONSchema(r *yamlx.Reflector) *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
		{Type: "string", Description: "A gate's text, checked on every group.", Examples: []any{"pass_rate >= 1"}},
		r.For(reflect.TypeFor[scopedGate]()),
	}}
}

// gatesError is every problem of a gates file, one per line in the words of
// Parse's errors: "gates.yaml:4: invalid gate: ..." with the path
// within the gate, or the gate's own error after "gates.yaml:4: ".
type gatesError struct {
	problems []yamlx.Problem
}

func (e *gatesError) Error() string {
	lines := make([]string, len(e.problems))
	for i, p := range e.problems {
		at := p.File
		if p.Line > 0 {
			at += fmt.Sprintf(":%d", p.Line)
		}
		var se *yamlx.SyntaxError
		switch {
		case errors.As(p.Err, &se):
			lines[i] = fmt.Sprintf("%s: %v: %v", p.File, ErrInvalid, se.Err)
		case errors.Is(p.Err, ErrInvalid):
			lines[i] = at + ": " + p.Msg
		default:
			path := gateItemPathRE().ReplaceAllString(p.Path, "")
			if path != "" {
				path += ": "
			}
			lines[i] = fmt.Sprintf("%s: %v: %s%s", at, ErrInvalid, path, p.Msg)
		}
	}
	return strings.Join(lines, "\n")
}

// gateItemPathRE is the item's part of a problem's path: within one gate,
// "gates[3].scenario" reads "scenario".
var gateItemPathRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^gates\[\d+\]\.?`) })

// Unwrap is ErrInvalid and every problem.
func (e *gatesError) Unwrap() []error {
	errs := []error{ErrInvalid}
	for _, p := range e.problems {
		errs = append(errs, p)
	}
	return errs
}
