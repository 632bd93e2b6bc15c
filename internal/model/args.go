package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"

	"github.com/hosteval/hosteval/internal/yamlx"
)

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

// valueJSON returns the JSON form of a YAML value. Mapping keys keep the
// order they were written in, so a call's arguments are the same bytes on
// every run and read the way the scenario does. The value was read within
// its document's alias budget, so writing it out is bounded too.
func valueJSON(v yamlx.Value) ([]byte, error) {
	var buf bytes.Buffer
	if err := appendValueJSON(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func appendValueJSON(buf *bytes.Buffer, v yamlx.Value) error {
	switch v.Kind {
	case yamlx.Mapping:
		buf.WriteByte('{')
		for i, k := range v.Keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			key, err := marshalJSON(k)
			if err != nil {
				return err
			}
			buf.Write(key)
			buf.WriteByte(':')
			if err := appendValueJSON(buf, v.Items[i]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yamlx.Sequence:
		buf.WriteByte('[')
		for i, it := range v.Items {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := appendValueJSON(buf, it); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		b, err := scalarJSON(v)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}

// scalarJSON encodes a scalar by its YAML type. Only numbers, booleans and
// null become JSON values of their own; everything else (timestamps,
// binary, custom tags) stays the text written, so 2026-07-28 is not turned
// into a time.
func scalarJSON(v yamlx.Value) ([]byte, error) {
	x, err := v.Scalar()
	if err == nil {
		var b []byte
		if b, err = marshalJSON(x); err == nil {
			return b, nil
		}
	}
	return nil, yamlx.Problem{Line: v.Line, Column: v.Column, Msg: err.Error(), Err: err}
}

// mappingJSON is valueJSON for a value that must be a mapping (call arguments).
func mappingJSON(v yamlx.Value) ([]byte, error) {
	if err := wantMapping(v); err != nil {
		return nil, err
	}
	return valueJSON(v)
}

// wantMapping says what v is instead of a mapping.
func wantMapping(v yamlx.Value) error {
	if v.Kind != yamlx.Mapping {
		return yamlx.Problem{Line: v.Line, Column: v.Column, Msg: "want a mapping like {key: value}, got " + v.Describe()}
	}
	return nil
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
func compileArgs(v yamlx.Value, path string) (*argTemplate, error) {
	if v.IsZero() {
		return &argTemplate{}, nil // no arguments: {}
	}
	if err := wantMapping(v); err != nil {
		return nil, yamlx.At(path, 0, err)
	}
	return compileArgValue(v, path)
}

func compileArgValue(v yamlx.Value, path string) (*argTemplate, error) {
	switch v.Kind {
	case yamlx.Mapping:
		a := &argTemplate{keys: v.Keys}
		for i, k := range v.Keys {
			e, err := compileArgValue(v.Items[i], path+"."+k)
			if err != nil {
				return nil, err
			}
			a.elems = append(a.elems, e)
		}
		return a, nil
	case yamlx.Sequence:
		a := &argTemplate{array: true}
		for i, it := range v.Items {
			e, err := compileArgValue(it, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			a.elems = append(a.elems, e)
		}
		return a, nil
	}
	switch v.Tag {
	case "!!int", "!!float", "!!bool", "!!null":
		lit, err := scalarJSON(v)
		if err != nil {
			return nil, yamlx.At(path, 0, err)
		}
		return &argTemplate{lit: lit}, nil
	}
	t, err := newTemplate(path, v.Text)
	if err != nil {
		return nil, yamlx.At(path, 0, err)
	}
	return &argTemplate{tmpl: t}, nil
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
