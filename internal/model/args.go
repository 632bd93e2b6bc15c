package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"
)

// maxNodeDepth bounds the nesting of argument values, so that an alias cycle
// in a YAML file is an error instead of a stack overflow.
const maxNodeDepth = 64

// marshalJSON encodes v without HTML escaping: arguments reach the host as the
// scenario's author wrote them ("a < b" stays "a < b", not "a \u003c b").
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// nodeJSON returns the JSON form of a YAML value. Mapping keys keep the order
// they were written in, so a call's arguments are the same bytes on every run
// and read the way the scenario does.
func nodeJSON(n *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	if err := appendNodeJSON(&buf, n, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func appendNodeJSON(buf *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > maxNodeDepth {
		return fmt.Errorf("line %d: value nested deeper than %d levels", n.Line, maxNodeDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			buf.WriteString("null")
			return nil
		}
		return appendNodeJSON(buf, n.Content[0], depth+1)
	case yaml.AliasNode:
		return appendNodeJSON(buf, n.Alias, depth+1)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a mapping key must be a plain value", k.Line)
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			key, err := marshalJSON(k.Value)
			if err != nil {
				return err
			}
			buf.Write(key)
			buf.WriteByte(':')
			if err := appendNodeJSON(buf, n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := appendNodeJSON(buf, c, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		b, err := scalarJSON(n)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		buf.Write(b)
		return nil
	default:
		return fmt.Errorf("line %d: unsupported YAML value", n.Line)
	}
}

// scalarJSON encodes a scalar by its YAML type. Only numbers, booleans and
// null become JSON values of their own; everything else (timestamps,
// binary, custom tags) stays the text written, so 2026-07-28 is not turned
// into a time.
func scalarJSON(n *yaml.Node) ([]byte, error) {
	var v any = n.Value
	switch n.ShortTag() {
	case "!!int", "!!float", "!!bool", "!!null":
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
	}
	return marshalJSON(v)
}

// mappingJSON is nodeJSON for a value that must be a mapping (call arguments).
func mappingJSON(n *yaml.Node) ([]byte, error) {
	n, err := mappingNode(n)
	if err != nil {
		return nil, err
	}
	return nodeJSON(n)
}

// mappingNode returns the mapping n holds, looking through a document and an
// alias, or an error saying what n is instead.
func mappingNode(n *yaml.Node) (*yaml.Node, error) {
	for n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a mapping like {key: value}, got %s", n.Line, kindName(n))
	}
	return n, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return fmt.Sprintf("%q", n.Value)
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.DocumentNode:
		return "an empty document"
	default:
		return "an alias"
	}
}

// argTemplate is a call's arguments as a tree whose string leaves are
// text/template templates; every other value passes through as JSON, so
// "limit: 3" stays the number 3.
type argTemplate struct {
	keys  []string       // object keys, in written order (object only)
	elems []*argTemplate // object values or array elements
	array bool
	tmpl  *template.Template // a string leaf
	lit   []byte             // any other leaf, as JSON
}

// compileArgs turns a YAML mapping of arguments into an argTemplate. path
// names the mapping in errors (e.g. "rules[1].args").
func compileArgs(n *yaml.Node, path string) (*argTemplate, error) {
	if n.Kind == 0 {
		return &argTemplate{}, nil // no arguments: {}
	}
	n, err := mappingNode(n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return compileArgNode(n, path, 0)
}

func compileArgNode(n *yaml.Node, path string, depth int) (*argTemplate, error) {
	if depth > maxNodeDepth {
		return nil, fmt.Errorf("%s: line %d: value nested deeper than %d levels", path, n.Line, maxNodeDepth)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return compileArgNode(n.Alias, path, depth+1)
	case yaml.MappingNode:
		a := &argTemplate{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s: line %d: a mapping key must be a plain value", path, k.Line)
			}
			e, err := compileArgNode(n.Content[i+1], path+"."+k.Value, depth+1)
			if err != nil {
				return nil, err
			}
			a.keys = append(a.keys, k.Value)
			a.elems = append(a.elems, e)
		}
		return a, nil
	case yaml.SequenceNode:
		a := &argTemplate{array: true}
		for i, c := range n.Content {
			e, err := compileArgNode(c, fmt.Sprintf("%s[%d]", path, i), depth+1)
			if err != nil {
				return nil, err
			}
			a.elems = append(a.elems, e)
		}
		return a, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int", "!!float", "!!bool", "!!null":
			lit, err := scalarJSON(n)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d: %w", path, n.Line, err)
			}
			return &argTemplate{lit: lit}, nil
		}
		t, err := newTemplate(path, n.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &argTemplate{tmpl: t}, nil
	default:
		return nil, fmt.Errorf("%s: line %d: unsupported YAML value", path, n.Line)
	}
}

// render executes the templates over data and returns the arguments as a
// JSON object.
func (a *argTemplate) render(data any) (string, error) {
	var buf bytes.Buffer
	if err := a.appendTo(&buf, data); err != nil {
		return "", err
	}
	return buf.String(), nil
}

func (a *argTemplate) appendTo(buf *bytes.Buffer, data any) error {
	switch {
	case a.tmpl != nil:
		var sb strings.Builder
		if err := a.tmpl.Execute(&sb, data); err != nil {
			return err
		}
		b, err := marshalJSON(sb.String())
		if err != nil {
			return err
		}
		buf.Write(b)
	case a.lit != nil:
		buf.Write(a.lit)
	case a.array:
		buf.WriteByte('[')
		for i, e := range a.elems {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := e.appendTo(buf, data); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		buf.WriteByte('{')
		for i, e := range a.elems {
			if i > 0 {
				buf.WriteByte(',')
			}
			k, err := marshalJSON(a.keys[i])
			if err != nil {
				return err
			}
			buf.Write(k)
			buf.WriteByte(':')
			if err := e.appendTo(buf, data); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	}
	return nil
}

// newTemplate parses a rules-model template. missingkey=error makes a typo in
// a field name visible in the answer ("rules model: ... no entry for key")
// instead of a quiet "<no value>". A template that reads an optional field
// uses {{with index .Result "key"}}{{.}}{{end}}: index does not fail on a
// missing key.
func newTemplate(name, text string) (*template.Template, error) {
	return template.New(name).
		Option("missingkey=error").
		Funcs(template.FuncMap{"json": templateJSON}).
		Parse(text)
}

// templateJSON renders a value as compact JSON, for templates that pass a
// whole object or list on.
func templateJSON(v any) (string, error) {
	b, err := marshalJSON(v)
	return string(b), err
}
