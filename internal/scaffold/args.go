package scaffold

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Placeholder is the value written for a string argument that the schema
// gives no example, default or choice for: easy to find and replace.
const Placeholder = "TODO"

// maxDepth bounds how deep nested objects and arrays are filled in (a
// recursive schema would otherwise never end).
const maxDepth = 6

// arguments builds a tool's arguments from its input schema: every
// required property, with a value taken from the schema where it gives one
// (examples, default, const, enum) and made up from the type otherwise,
// each with a line comment (TODO where made up). It also returns a line
// for each optional property, for a comment.
func arguments(schema any) (*yaml.Node, []string) {
	root := asObject(schema)
	f := filler{root: root}
	args := &yaml.Node{Kind: yaml.MappingNode}
	var optional []string
	props := asObject(root["properties"])
	required := requiredOf(root)
	for _, name := range required {
		v, note := f.value(asObject(props[name]), 1)
		key := str(name)
		// A comment after a block collection's key would land on its
		// first item: it goes above the key instead.
		if c := comment(note, asObject(props[name])); v.Kind == yaml.ScalarNode || v.Style == yaml.FlowStyle {
			v.LineComment = c
		} else {
			key.HeadComment = c
		}
		args.Content = append(args.Content, key, v)
	}
	for _, name := range sortedKeys(props) {
		if slices.Contains(required, name) {
			continue
		}
		p := f.resolve(asObject(props[name]))
		line := name + " (" + typeName(p) + ")"
		if d := oneLine(str2(p["description"]), 80); d != "" {
			line += ": " + d
		}
		optional = append(optional, line)
	}
	if len(args.Content) == 0 {
		args.Style = yaml.FlowStyle
	}
	return args, optional
}

// Args is the arguments of the call a tool's scenario makes, as JSON: the
// values its args: mapping holds.
func Args(schema any) ([]byte, error) {
	n, _ := arguments(schema)
	return nodeJSON(n)
}

// Answer is the content of a canned answer to a form with the requested
// schema: every required field, and each optional one the schema gives a
// value for (a default, a const, an example, the first of an enum); a
// value made up from a field's type is marked TODO. It returns the content
// as written and as the value it stands for.
func Answer(schema map[string]any) (*yaml.Node, map[string]any) {
	f := filler{root: schema}
	content := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	props := asObject(schema["properties"])
	required := requiredOf(schema)
	todo := false
	for _, name := range sortedKeys(props) {
		p := f.resolve(asObject(props[name]))
		v, note := f.value(p, 1)
		if !slices.Contains(required, name) && note != "" {
			continue // optional, and nothing says what it should be
		}
		if note != "" {
			todo = true
		}
		content.Content = append(content.Content, str(name), v)
	}
	if todo {
		content.LineComment = "TODO: values made up from their types"
	}
	var value map[string]any
	if err := content.Decode(&value); err != nil || value == nil {
		value = map[string]any{}
	}
	return content, value
}

// nodeJSON is a YAML value as JSON.
func nodeJSON(n *yaml.Node) ([]byte, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	if v == nil {
		v = map[string]any{}
	}
	return json.Marshal(v)
}

// filler fills in values below the root schema, whose $defs a $ref names.
type filler struct {
	root map[string]any
}

// value returns a value for schema s and a note: "" when the schema gave
// it, else what was made up ("TODO: string").
func (f filler) value(s map[string]any, depth int) (*yaml.Node, string) {
	s = f.resolve(s)
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
		return node(ex[0]), ""
	}
	for _, k := range []string{"example", "default", "const"} {
		if v, ok := s[k]; ok {
			return node(v), ""
		}
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return node(enum[0]), ""
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			// The first alternative that is not null.
			for _, a := range alts {
				if typeOf(f.resolve(asObject(a))) != "null" {
					return f.value(asObject(a), depth)
				}
			}
		}
	}
	made := "TODO: " + typeName(s)
	switch typeOf(s) {
	case "integer", "number":
		n := 1.0
		if m, ok := number(s["minimum"]); ok {
			n = m
		} else if m, ok := number(s["exclusiveMinimum"]); ok {
			n = math.Floor(m) + 1
		} else if m, ok := number(s["maximum"]); ok && m < n {
			n = m
		}
		return node(n), made
	case "boolean":
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "false"}, made
	case "null":
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, ""
	case "array":
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		if depth < maxDepth {
			item, _ := f.value(asObject(s["items"]), depth+1)
			seq.Content = append(seq.Content, item)
		}
		if flat(seq) {
			seq.Style = yaml.FlowStyle
		}
		return seq, made
	case "object":
		m := &yaml.Node{Kind: yaml.MappingNode}
		props := asObject(s["properties"])
		if depth < maxDepth {
			for _, name := range requiredOf(s) {
				v, note := f.value(asObject(props[name]), depth+1)
				if note != "" && v.Kind == yaml.ScalarNode {
					v.LineComment = note
				}
				m.Content = append(m.Content, str(name), v)
			}
		}
		if len(m.Content) == 0 {
			m.Style = yaml.FlowStyle
		}
		return m, made
	}
	if v, ok := formatPlaceholders[str2(s["format"])]; ok {
		return str(v), made
	}
	return str(Placeholder), made
}

// formatPlaceholders are made-up strings of the formats servers check.
var formatPlaceholders = map[string]string{
	"date":      "2026-01-31",
	"date-time": "2026-01-31T12:00:00Z",
	"time":      "12:00:00",
	"email":     "todo@example.com",
	"uri":       "https://example.com/TODO",
	"url":       "https://example.com/TODO",
	"uuid":      "00000000-0000-0000-0000-000000000000",
	"ipv4":      "192.0.2.1",
	"ipv6":      "2001:db8::1",
	"hostname":  "todo.example.com",
}

// resolve follows a local $ref (#/$defs/x or #/definitions/x) once.
func (f filler) resolve(s map[string]any) map[string]any {
	for range 8 {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		path, ok := strings.CutPrefix(ref, "#/")
		if !ok {
			return s
		}
		var cur any = f.root
		for part := range strings.SplitSeq(path, "/") {
			cur = asObject(cur)[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
		}
		next := asObject(cur)
		if len(next) == 0 {
			return s
		}
		s = next
	}
	return s
}

// comment is a required argument's line comment: what was made up, and
// the start of its description.
func comment(note string, s map[string]any) string {
	d := oneLine(str2(s["description"]), 70)
	switch {
	case note != "" && d != "":
		return note + ", required: " + d
	case note != "":
		return note + ", required"
	case d != "":
		return "required: " + d
	}
	return "required"
}

// flat reports whether a sequence holds scalars only (written [a, b]).
func flat(seq *yaml.Node) bool {
	for _, it := range seq.Content {
		if it.Kind != yaml.ScalarNode {
			return false
		}
	}
	return true
}

// typeOf is a schema's type: the first of a list that is not null; object
// or array when the schema has their keywords but no type.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok && x != "null" {
				return x
			}
		}
	}
	switch {
	case s["properties"] != nil:
		return "object"
	case s["items"] != nil:
		return "array"
	}
	return ""
}

// typeName is a schema's type for a comment: "string", "array of integer",
// "string (date-time)".
func typeName(s map[string]any) string {
	t := typeOf(s)
	switch {
	case t == "":
		return "any"
	case t == "array":
		if it := typeOf(asObject(s["items"])); it != "" {
			return "array of " + it
		}
	case t == "string" && str2(s["format"]) != "":
		return "string, " + oneLine(str2(s["format"]), 20)
	}
	return t
}

// node is a JSON value as a YAML node.
func node(v any) *yaml.Node {
	switch v := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(v), 10)}
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(v, 'g', -1, 64)}
	case json.Number:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: v.String()}
	case string:
		return str(v)
	case []any:
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, it := range v {
			seq.Content = append(seq.Content, node(it))
		}
		if flat(seq) {
			seq.Style = yaml.FlowStyle
		}
		return seq
	case map[string]any:
		m := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range sortedKeys(v) {
			add(m, k, node(v[k]))
		}
		if len(m.Content) == 0 {
			m.Style = yaml.FlowStyle
		}
		return m
	}
	return str(fmt.Sprint(v))
}

// asObject is v as a JSON object: a map, or anything that marshals to one
// (a server's schema may come as json.RawMessage or a struct); nil when it
// is not one.
func asObject(v any) map[string]any {
	switch v := v.(type) {
	case nil:
		return nil
	case map[string]any:
		return v
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	return m
}

func requiredOf(s map[string]any) []string {
	var out []string
	list, _ := s["required"].([]any)
	for _, r := range list {
		if r, ok := r.(string); ok && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

func number(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok
}

func str2(v any) string {
	s, _ := v.(string)
	return s
}
