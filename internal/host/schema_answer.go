package host

import (
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// A person's answer to a server's form is checked against the form the
// server asked with (its requestedSchema) before anything is sent: a page
// or a terminal checks it as the person types, and the host checks it again
// in askPerson, so that an answer the form does not allow never reaches
// the server, whoever the Elicitor is. The forms are MCP's: flat, primitive
// properties (string with format, pattern and length bounds; number and
// integer with bounds; boolean; single-select enums, plain, with enumNames,
// or oneOf titled consts; multi-select arrays of enums). This is the one
// place that knows what an answer may hold.

// AnswerProblem is one way an answer does not fit its form.
type AnswerProblem struct {
	// Field is the property the problem is about ("" for the whole answer).
	Field   string `json:"field"`
	Message string `json:"message"`
}

// AnswerError lists every way an answer does not fit its form, in the
// order of the form's fields (required ones first, then by name).
type AnswerError struct {
	Problems []AnswerProblem
}

func (e *AnswerError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Message
		if p.Field != "" {
			parts[i] = p.Field + ": " + p.Message
		}
	}
	return "the answer does not fit the form: " + strings.Join(parts, "; ")
}

// CheckAnswer checks the content of an accepted answer against the form's
// schema. It returns nil when the answer fits, and an *AnswerError naming
// every field that does not otherwise. A required field that is left out
// fits when the schema gives it a default: the host fills defaults in
// before it answers (see withDefaults). Numbers may be float64, json.Number
// or Go integers, as a decoder or a terminal makes them.
func CheckAnswer(schema, content map[string]any) error {
	props, _ := schema["properties"].(map[string]any)
	var problems []AnswerProblem
	for _, f := range formFields(schema) {
		v, set := content[f.name]
		if !set || v == nil {
			if f.required && f.def == nil {
				problems = append(problems, AnswerProblem{Field: f.name, Message: "required"})
			}
			continue
		}
		spec, _ := props[f.name].(map[string]any)
		if msg := checkValue(spec, v); msg != "" {
			problems = append(problems, AnswerProblem{Field: f.name, Message: msg})
		}
	}
	var extra []string
	for name := range content {
		if _, ok := props[name]; !ok {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	for _, name := range extra {
		problems = append(problems, AnswerProblem{Field: name, Message: "not a field of this form"})
	}
	if len(problems) > 0 {
		return &AnswerError{Problems: problems}
	}
	return nil
}

// Choice is one choice of an enumerated field: the value sent and the
// title a person reads.
type Choice struct {
	Value any    `json:"value"`
	Title string `json:"title"`
}

// Choices returns the choices of a form field: a single-select enum (plain,
// with enumNames, or oneOf/anyOf titled consts), or the items of a
// multi-select array. Nil for a field that is not enumerated.
func Choices(spec map[string]any) []Choice {
	if spec["type"] == "array" {
		items, _ := spec["items"].(map[string]any)
		return Choices(items)
	}
	if enum, ok := spec["enum"].([]any); ok {
		names, _ := spec["enumNames"].([]any)
		out := make([]Choice, len(enum))
		for i, v := range enum {
			out[i] = Choice{Value: v, Title: fmt.Sprint(v)}
			if i < len(names) {
				if s, ok := names[i].(string); ok && s != "" {
					out[i].Title = s
				}
			}
		}
		return out
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		alts, ok := spec[key].([]any)
		if !ok {
			continue
		}
		var out []Choice
		for _, a := range alts {
			alt, _ := a.(map[string]any)
			v, ok := alt["const"]
			if !ok {
				continue
			}
			c := Choice{Value: v, Title: fmt.Sprint(v)}
			if s, ok := alt["title"].(string); ok && s != "" {
				c.Title = s
			}
			out = append(out, c)
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// checkValue checks one value against its field's schema and says what is
// wrong in a few words ("" when it fits).
func checkValue(spec map[string]any, v any) string {
	typ, _ := spec["type"].(string)
	if typ == "array" {
		return checkMulti(spec, v)
	}
	if choices := Choices(spec); len(choices) > 0 {
		if !slices.ContainsFunc(choices, func(c Choice) bool { return sameJSON(c.Value, v) }) {
			return "must be one of " + choiceList(choices)
		}
		return ""
	}
	switch typ {
	case "string":
		s, ok := v.(string)
		if !ok {
			return "must be text"
		}
		return checkString(spec, s)
	case "number", "integer":
		n, ok := toFloat(v)
		if !ok {
			return "must be a number"
		}
		if typ == "integer" && n != math.Trunc(n) {
			return "must be a whole number"
		}
		if lo, ok := toFloat(spec["minimum"]); ok && n < lo {
			return "must be at least " + formatNumber(lo)
		}
		if hi, ok := toFloat(spec["maximum"]); ok && n > hi {
			return "must be at most " + formatNumber(hi)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return "must be true or false"
		}
	}
	return ""
}

func checkString(spec map[string]any, s string) string {
	n := utf8.RuneCountInString(s)
	if lo, ok := toFloat(spec["minLength"]); ok && float64(n) < lo {
		return fmt.Sprintf("must be at least %s characters long", formatNumber(lo))
	}
	if hi, ok := toFloat(spec["maxLength"]); ok && float64(n) > hi {
		return fmt.Sprintf("must be at most %s characters long", formatNumber(hi))
	}
	if p, ok := spec["pattern"].(string); ok && p != "" {
		// A pattern RE2 cannot read (a lookahead) is left to the page,
		// whose JavaScript reads it; the server checks it anyway.
		if re, err := regexp.Compile(p); err == nil && !re.MatchString(s) {
			return "does not match the pattern " + p
		}
	}
	format, _ := spec["format"].(string)
	switch format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return "must be an email address"
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "") {
			return "must be a URI, e.g. https://example.com/"
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return "must be a date, YYYY-MM-DD"
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return "must be a date and time, e.g. 2026-07-28T09:30:00Z"
		}
	}
	return ""
}

// checkMulti checks a multi-select answer: a list of distinct choices,
// within minItems and maxItems.
func checkMulti(spec map[string]any, v any) string {
	list, ok := v.([]any)
	if !ok {
		if ss, isStrings := v.([]string); isStrings {
			for _, s := range ss {
				list = append(list, s)
			}
			ok = true
		}
	}
	if !ok {
		return "must be a list of choices"
	}
	choices := Choices(spec)
	for i, item := range list {
		if len(choices) > 0 && !slices.ContainsFunc(choices, func(c Choice) bool { return sameJSON(c.Value, item) }) {
			return fmt.Sprintf("%v is not one of %s", item, choiceList(choices))
		}
		if slices.ContainsFunc(list[:i], func(o any) bool { return sameJSON(o, item) }) {
			return fmt.Sprintf("%v is chosen twice", item)
		}
	}
	if lo, ok := toFloat(spec["minItems"]); ok && float64(len(list)) < lo {
		return "choose at least " + formatNumber(lo)
	}
	if hi, ok := toFloat(spec["maxItems"]); ok && float64(len(list)) > hi {
		return "choose at most " + formatNumber(hi)
	}
	return ""
}

func choiceList(choices []Choice) string {
	names := make([]string, len(choices))
	for i, c := range choices {
		names[i] = fmt.Sprint(c.Value)
	}
	return strings.Join(names, ", ")
}

// sameJSON compares two values as JSON: 1, 1.0 and json.Number("1") are
// one number.
func sameJSON(a, b any) bool {
	if x, ok := toFloat(a); ok {
		y, ok := toFloat(b)
		return ok && x == y
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

func toFloat(v any) (float64, bool) {
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
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
