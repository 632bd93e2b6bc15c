package host

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The person's answer is checked against the form before it is sent. A
// server's form (requestedSchema) is flat: an object whose properties are
// strings (minLength, maxLength, format email, uri, date, date-time),
// numbers and integers (minimum, maximum), booleans, single-select enums
// (enum, or oneOf of const) and multi-select enums (an array whose items
// are an enum or anyOf of const; minItems, maxItems), with a required
// list. The spec asks clients to validate answers against it; the host
// does, on every path (an input_required round, a 2025-11-25
// elicitation/create), for every person (the terminal, a scenario's canned
// answers, the lab's form): an answer that does not fit is not sent. It is
// declined instead, with the reason recorded on the call, naming the
// field. (A canned answer cannot be checked when its scenario loads: the
// form is the server's, and comes with the question.)

// AnswerError says why an answer does not fit its form: one problem per
// field, in field order.
type AnswerError struct {
	Problems []FieldProblem
}

// FieldProblem is what is wrong with one field of an answer.
type FieldProblem struct {
	Field   string
	Problem string
}

func (e *AnswerError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = fmt.Sprintf("field %q: %s", p.Field, p.Problem)
	}
	return strings.Join(parts, "; ")
}

// CheckAnswer checks the content of an accepted answer against the form's
// requested schema (as decoded from JSON, or as a scenario wrote it). It
// returns nil when the answer fits, and an *AnswerError otherwise. Fields
// the person left out must not be required; fields the form does not have
// are refused (a typo in a canned answer would otherwise be sent unseen).
func CheckAnswer(schema, content map[string]any) error {
	props, _ := schema["properties"].(map[string]any)
	var problems []FieldProblem
	for _, name := range requiredFields(schema) {
		if _, ok := content[name]; !ok {
			problems = append(problems, FieldProblem{name, "required, but the answer has no value for it"})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(content)) {
		spec, ok := props[name].(map[string]any)
		if !ok {
			problems = append(problems, FieldProblem{name, fmt.Sprintf("not a field of the form (its fields: %s)", fieldList(props))})
			continue
		}
		if p := checkValue(spec, content[name]); p != "" {
			problems = append(problems, FieldProblem{name, p})
		}
	}
	if len(problems) == 0 {
		return nil
	}
	slices.SortStableFunc(problems, func(a, b FieldProblem) int { return strings.Compare(a.Field, b.Field) })
	return &AnswerError{Problems: problems}
}

func requiredFields(schema map[string]any) []string {
	var out []string
	switch req := schema["required"].(type) {
	case []any:
		for _, r := range req {
			if s, ok := r.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = append(out, req...)
	}
	return out
}

func fieldList(props map[string]any) string {
	if len(props) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(props)), ", ")
}

// checkValue checks one value against its property's schema and says what
// is wrong ("" when nothing).
func checkValue(spec map[string]any, v any) string {
	typ, _ := spec["type"].(string)
	switch typ {
	case "string":
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("want a string, got %s", kindOf(v))
		}
		return checkString(spec, s)
	case "number", "integer":
		n, ok := number(v)
		if !ok {
			return fmt.Sprintf("want a %s, got %s", typ, kindOf(v))
		}
		if typ == "integer" && n != math.Trunc(n) {
			return fmt.Sprintf("want an integer, got %v", n)
		}
		if lo, ok := number(spec["minimum"]); ok && n < lo {
			return fmt.Sprintf("%v is less than the minimum %v", n, lo)
		}
		if hi, ok := number(spec["maximum"]); ok && n > hi {
			return fmt.Sprintf("%v is more than the maximum %v", n, hi)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("want true or false, got %s", kindOf(v))
		}
	case "array":
		items, ok := asList(v)
		if !ok {
			return fmt.Sprintf("want a list of choices, got %s", kindOf(v))
		}
		if lo, ok := number(spec["minItems"]); ok && float64(len(items)) < lo {
			return fmt.Sprintf("want at least %v choices, got %d", lo, len(items))
		}
		if hi, ok := number(spec["maxItems"]); ok && float64(len(items)) > hi {
			return fmt.Sprintf("want at most %v choices, got %d", hi, len(items))
		}
		itemSpec, _ := spec["items"].(map[string]any)
		choices := enumChoices(itemSpec)
		for _, item := range items {
			s, ok := item.(string)
			if !ok {
				return fmt.Sprintf("want choices that are strings, got %s", kindOf(item))
			}
			if choices != nil && !slices.Contains(choices, s) {
				return fmt.Sprintf("%q is not one of %s", s, strings.Join(choices, ", "))
			}
		}
	}
	return ""
}

func checkString(spec map[string]any, s string) string {
	if choices := enumChoices(spec); choices != nil && !slices.Contains(choices, s) {
		return fmt.Sprintf("%q is not one of %s", s, strings.Join(choices, ", "))
	}
	n := utf8.RuneCountInString(s)
	if lo, ok := number(spec["minLength"]); ok && float64(n) < lo {
		return fmt.Sprintf("want at least %v characters, got %d", lo, n)
	}
	if hi, ok := number(spec["maxLength"]); ok && float64(n) > hi {
		return fmt.Sprintf("want at most %v characters, got %d", hi, n)
	}
	format, _ := spec["format"].(string)
	ok := true
	switch format {
	case "email":
		a, err := mail.ParseAddress(s)
		ok = err == nil && a.Address == s
	case "uri":
		u, err := url.Parse(s)
		ok = err == nil && u.Scheme != ""
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		ok = err == nil
	case "date-time":
		_, err := time.Parse(time.RFC3339, s)
		ok = err == nil
	}
	if !ok {
		return fmt.Sprintf("%q is not a valid %s", s, format)
	}
	return ""
}

// enumChoices returns the values a single-select (enum, or oneOf/anyOf of
// const) allows, nil when it is not one.
func enumChoices(spec map[string]any) []string {
	if e, ok := asList(spec["enum"]); ok {
		return texts(e)
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		opts, ok := asList(spec[key])
		if !ok {
			continue
		}
		var out []string
		for _, o := range opts {
			if m, ok := o.(map[string]any); ok {
				if c, ok := m["const"].(string); ok {
					out = append(out, c)
				}
			}
		}
		if out != nil {
			return out
		}
	}
	return nil
}

func texts(list []any) []string {
	out := make([]string, 0, len(list))
	for _, v := range list {
		out = append(out, fmt.Sprint(v))
	}
	return out
}

// asList returns v as a list, from JSON ([]any) or Go ([]string).
func asList(v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// number returns a JSON, YAML or Go number as a float64.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// kindOf names a value's JSON kind.
func kindOf(v any) string {
	if _, ok := number(v); ok {
		return fmt.Sprintf("the number %v", v)
	}
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case bool:
		return fmt.Sprintf("%t", v)
	case nil:
		return "null"
	case []any, []string:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
