package host

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckAnswer(t *testing.T) {
	t.Parallel()
	form := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"priority": map[string]any{"type": "string", "enum": []any{"P1", "P2", "P3"}},
			"team":     map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "sec", "title": "Security"}, map[string]any{"const": "ops", "title": "Operations"}}},
			"name":     map[string]any{"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
			"email":    map[string]any{"type": "string", "format": "email"},
			"site":     map[string]any{"type": "string", "format": "uri"},
			"day":      map[string]any{"type": "string", "format": "date"},
			"at":       map[string]any{"type": "string", "format": "date-time"},
			"hours":    map[string]any{"type": "integer", "minimum": 1, "maximum": 24},
			"ratio":    map[string]any{"type": "number", "minimum": 0, "maximum": 1},
			"notify":   map[string]any{"type": "boolean", "default": true},
			"tags": map[string]any{"type": "array", "minItems": 1, "maxItems": 2,
				"items": map[string]any{"type": "string", "enum": []any{"a", "b", "c"}}},
			"labels": map[string]any{"type": "array",
				"items": map[string]any{"anyOf": []any{map[string]any{"const": "x", "title": "Ex"}, map[string]any{"const": "y", "title": "Why"}}}},
		},
		"required": []any{"priority", "notify"},
	}
	tests := []struct {
		name    string
		content string
		want    []AnswerProblem
	}{
		{name: "the least that fits: a required field with a default may be left out", content: `{"priority": "P1"}`},
		{name: "every field fits", content: `{"priority": "P3", "team": "ops", "name": "abc", "email": "a@example.com", "site": "https://example.com/x",
			"day": "2026-07-28", "at": "2026-07-28T09:30:00Z", "hours": 24, "ratio": 0.5, "notify": false, "tags": ["a", "c"], "labels": ["y"]}`},
		{name: "a whole number written as 4.0 is whole", content: `{"priority": "P1", "hours": 4.0}`},
		{name: "required and missing", content: `{}`, want: []AnswerProblem{{"priority", "required"}}},
		{name: "null is missing", content: `{"priority": null}`, want: []AnswerProblem{{"priority", "required"}}},
		{name: "not a choice", content: `{"priority": "P7", "team": "Security"}`, want: []AnswerProblem{
			{"priority", "must be one of P1, P2, P3"}, {"team", "must be one of sec, ops"}}},
		{name: "string bounds and pattern", content: `{"priority": "P1", "name": "a"}`, want: []AnswerProblem{{"name", "must be at least 2 characters long"}}},
		{name: "too long, in characters", content: `{"priority": "P1", "name": "ééééééé"}`, want: []AnswerProblem{{"name", "must be at most 5 characters long"}}},
		{name: "pattern", content: `{"priority": "P1", "name": "AB"}`, want: []AnswerProblem{{"name", "does not match the pattern ^[a-z]+$"}}},
		{name: "formats", content: `{"priority": "P1", "email": "nobody", "site": "example.com", "day": "28/07/2026", "at": "2026-07-28 09:30"}`, want: []AnswerProblem{
			{"at", "must be a date and time, e.g. 2026-07-28T09:30:00Z"}, {"day", "must be a date, YYYY-MM-DD"},
			{"email", "must be an email address"}, {"site", "must be a URI, e.g. https://example.com/"}}},
		{name: "numbers", content: `{"priority": "P1", "hours": 2.5, "ratio": 1.5}`, want: []AnswerProblem{
			{"hours", "must be a whole number"}, {"ratio", "must be at most 1"}}},
		{name: "below the minimum", content: `{"priority": "P1", "hours": 0}`, want: []AnswerProblem{{"hours", "must be at least 1"}}},
		{name: "wrong types", content: `{"priority": "P1", "name": 7, "hours": "4", "notify": "yes", "tags": "a"}`, want: []AnswerProblem{
			{"notify", "must be true or false"}, {"hours", "must be a number"}, {"name", "must be text"}, {"tags", "must be a list of choices"}}},
		{name: "multi-select", content: `{"priority": "P1", "tags": ["a", "d"], "labels": ["x", "x"]}`, want: []AnswerProblem{
			{"labels", "x is chosen twice"}, {"tags", "d is not one of a, b, c"}}},
		{name: "multi-select bounds", content: `{"priority": "P1", "tags": []}`, want: []AnswerProblem{{"tags", "choose at least 1"}}},
		{name: "too many", content: `{"priority": "P1", "tags": ["a", "b", "c"]}`, want: []AnswerProblem{{"tags", "choose at most 2"}}},
		{name: "a field the form does not have", content: `{"priority": "P1", "owner": "me"}`, want: []AnswerProblem{{"owner", "not a field of this form"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var content map[string]any
			if err := json.Unmarshal([]byte(tt.content), &content); err != nil {
				t.Fatal(err)
			}
			err := CheckAnswer(form, content)
			var got []AnswerProblem
			var ae *AnswerError
			if errors.As(err, &ae) {
				got = ae.Problems
			} else if err != nil {
				t.Fatalf("error %v is not an *AnswerError", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckAnswerNumbersOfEveryKind(t *testing.T) {
	t.Parallel()
	form := map[string]any{"properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": 10}}}
	for _, v := range []any{int64(3), 3, json.Number("3"), 3.0} {
		if err := CheckAnswer(form, map[string]any{"n": v}); err != nil {
			t.Errorf("%T %v: %v", v, v, err)
		}
	}
	if err := CheckAnswer(form, map[string]any{"n": json.Number("11")}); err == nil || err.Error() != "the answer does not fit the form: n: must be at most 10" {
		t.Errorf("11: %v", err)
	}
}

func TestChoices(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec map[string]any
		want []Choice
	}{
		{map[string]any{"type": "string", "enum": []any{"P1", "P2"}}, []Choice{{"P1", "P1"}, {"P2", "P2"}}},
		{map[string]any{"type": "string", "enum": []any{"P1", "P2"}, "enumNames": []any{"Urgent", "Today"}}, []Choice{{"P1", "Urgent"}, {"P2", "Today"}}},
		{map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "sec", "title": "Security"}}}, []Choice{{"sec", "Security"}}},
		{map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{map[string]any{"const": "x"}}}}, []Choice{{"x", "x"}}},
		{map[string]any{"type": "string"}, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Choices(tt.spec)); diff != "" {
			t.Errorf("Choices(%v) (-want +got):\n%s", tt.spec, diff)
		}
	}
}
