package yamlx

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schemer is a type that describes its YAML shape itself, in a JSON
// Schema: an [Unmarshaler] whose shape is not its Go shape (a name or a
// definition, a number or a range).
type Schemer interface {
	JSONSchema(r *Reflector) *jsonschema.Schema
}

// Reflector builds the JSON Schema of the types the reader decodes into,
// by the same rules: keys and `doc`, `example`, `required` and `min` tags
// of struct fields (and `max`), [Enum] types, [Schemer] types, durations as text.
// Named struct types are defined once, under $defs.
type Reflector struct {
	defs  map[string]*jsonschema.Schema
	names map[reflect.Type]string
}

// Schema returns the JSON Schema (draft 2020-12) of a YAML document that
// decodes into root's type, with the given $id, title and description.
func Schema(root reflect.Type, id, title, description string) *jsonschema.Schema {
	r := &Reflector{defs: map[string]*jsonschema.Schema{}, names: map[reflect.Type]string{}}
	s := r.inline(root)
	s.Schema = "https://json-schema.org/draft/2020-12/schema"
	s.ID, s.Title, s.Description = id, title, description
	if len(r.defs) > 0 {
		s.Defs = r.defs
	}
	return s
}

// For returns the schema of values of type t: a reference to its $defs
// entry for a named struct type.
func (r *Reflector) For(t reflect.Type) *jsonschema.Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.Name() == "" || schemerOf(t) != nil {
		return r.inline(t)
	}
	name, ok := r.names[t]
	if !ok {
		name = t.Name()
		if _, taken := r.defs[name]; taken {
			name = strings.ReplaceAll(t.String(), ".", "_")
		}
		r.names[t] = name
		r.defs[name] = &jsonschema.Schema{} // taken, while it is being built
		r.defs[name] = r.inline(t)
	}
	return &jsonschema.Schema{Ref: "#/$defs/" + name}
}

// fieldSchema is the schema of a field's values: the [FieldChecker]'s
// word on it, when its struct is one, else its type's.
func (r *Reflector) fieldSchema(checker FieldChecker, f field) *jsonschema.Schema {
	if checker != nil {
		if s := checker.FieldSchema(f.Name, r); s != nil {
			return s
		}
	}
	return r.For(f.Type)
}

func schemerOf(t reflect.Type) Schemer {
	if s, ok := reflect.New(t).Interface().(Schemer); ok {
		return s
	}
	return nil
}

// Inline returns the schema of t written out, not referenced: for a
// [Schemer] whose schema is its fields'.
func (r *Reflector) Inline(t reflect.Type) *jsonschema.Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		return r.object(t)
	}
	return r.inline(t)
}

// inline is the schema of t written out, not referenced.
func (r *Reflector) inline(t reflect.Type) *jsonschema.Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s := schemerOf(t); s != nil {
		return s.JSONSchema(r)
	}
	if t == durationType {
		return Duration()
	}
	if e, ok := reflect.Zero(t).Interface().(Enum); ok {
		var values []any
		for _, v := range e.Enum() {
			values = append(values, v)
		}
		return &jsonschema.Schema{Type: "string", Enum: values}
	}
	switch t.Kind() {
	case reflect.Struct:
		return r.object(t)
	case reflect.Slice:
		return &jsonschema.Schema{Type: "array", Items: r.For(t.Elem())}
	case reflect.Map:
		return &jsonschema.Schema{Type: "object", AdditionalProperties: r.For(t.Elem())}
	case reflect.String:
		return &jsonschema.Schema{Type: "string"}
	case reflect.Bool:
		return &jsonschema.Schema{Type: "boolean"}
	case reflect.Interface:
		return &jsonschema.Schema{}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &jsonschema.Schema{Type: "integer"}
	case reflect.Float32, reflect.Float64:
		return &jsonschema.Schema{Type: "number"}
	}
	panic(fmt.Sprintf("yamlx: no schema for %s", t))
}

// object is a struct's schema: its fields, none other.
func (r *Reflector) object(t reflect.Type) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: False()}
	checker, _ := reflect.New(t).Interface().(FieldChecker)
	for _, f := range fieldsOf(t) {
		fs := *r.fieldSchema(checker, f) // a copy: the field's words go on it, not on a shared definition
		fs.Description = f.Doc
		if f.Example != "" {
			fs.Examples = []any{exampleValue(t, f)}
		}
		if f.Min != nil {
			least := float64(*f.Min)
			fs.Minimum = &least
		}
		if f.Max != nil {
			most := float64(*f.Max)
			fs.Maximum = &most
		}
		s.Properties[f.Name] = &fs
		s.PropertyOrder = append(s.PropertyOrder, f.Name)
		if f.Required {
			s.Required = append(s.Required, f.Name)
		}
	}
	return s
}

// exampleValue reads a field's example tag as YAML, for the schema's
// examples (a JSON value; a date stays the text written).
func exampleValue(t reflect.Type, f field) any {
	v, err := ParseValue(f.Example)
	if err == nil {
		var plain any
		if plain, err = v.Plain(); err == nil {
			return plain
		}
	}
	panic(fmt.Sprintf("yamlx: %s.%s: example %q: %v", t, f.Name, f.Example, err))
}

// False is the schema that no value meets (JSON Schema's false).
func False() *jsonschema.Schema { return &jsonschema.Schema{Not: &jsonschema.Schema{}} }

// durationPattern matches what time.ParseDuration reads.
const durationPattern = `^[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$|^0$`

// Duration is the schema of a duration written as text, e.g. 10s.
func Duration() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: durationPattern}
}
