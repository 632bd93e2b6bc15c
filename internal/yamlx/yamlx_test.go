package yamlx

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

type color string

func (color) Enum() []string { return []string{"red", "green", "blue"} }

type inner struct {
	Min *int `yaml:"min" min:"0"`
	Max *int `yaml:"max" min:"0"`
}

type shared struct {
	Shared string `yaml:"shared"`
}

type doc struct {
	Name    string            `yaml:"name" required:"true" doc:"The name." example:"alpha"`
	Count   *int              `yaml:"count" min:"1"`
	Ratio   float64           `yaml:"ratio"`
	On      bool              `yaml:"on"`
	Wait    time.Duration     `yaml:"wait"`
	Color   *color            `yaml:"color"`
	Tags    []string          `yaml:"tags" want:"a list of tags"`
	Env     map[string]string `yaml:"env"`
	Ordered Map[int]          `yaml:"ordered"`
	Range   inner             `yaml:"range"`
	Match   *Regexp           `yaml:"match"`
	Args    Value             `yaml:"args"`
	Content map[string]any    `yaml:"content"`
	shared  `yaml:",inline"`
}

func decode(t *testing.T, text string) (doc, []string) {
	t.Helper()
	var d doc
	err := Decode("f.yaml", []byte(text), &d, nil)
	var got []string
	var e *Error
	if errors.As(err, &e) {
		for _, p := range e.Problems {
			got = append(got, p.String())
		}
	} else if err != nil {
		t.Fatalf("Decode error %T, want *Error: %v", err, err)
	}
	return d, got
}

func TestDecodeValid(t *testing.T) {
	d, problems := decode(t, `
name: a
count: 3
ratio: 2
on: true
wait: 1m30s
color: green
tags: [x, y]
env: {A: "1", B: ~}
ordered: {z: 1, a: 2}
range: {min: 1}
match: "^a+$"
args: {b: 1, a: [1, "two", null, true, 2.5]}
content: {n: 1, f: 1.5, s: x, l: [a], m: {k: v}, nil: ~}
shared: yes
`)
	if problems != nil {
		t.Fatalf("problems: %v", problems)
	}
	if d.Name != "a" || *d.Count != 3 || d.Ratio != 2 || !d.On || d.Wait != 90*time.Second || *d.Color != "green" || d.Shared != "yes" {
		t.Errorf("decoded %+v", d)
	}
	if diff := cmp.Diff([]string{"x", "y"}, d.Tags); diff != "" {
		t.Errorf("tags (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"A": "1", "B": ""}, d.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if got := d.Ordered.Keys(); !reflect.DeepEqual(got, []string{"z", "a"}) || d.Ordered[1].Value != 2 || d.Ordered[1].Line != 10 || !d.Ordered[1].OK {
		t.Errorf("ordered = %+v, want z then a (line 10), read", d.Ordered)
	}
	if *d.Range.Min != 1 || d.Range.Max != nil {
		t.Errorf("range = %+v", d.Range)
	}
	if !d.Match.MatchString("aaa") {
		t.Errorf("match = %v", d.Match.Regexp)
	}
	if got := d.Args.Keys; !reflect.DeepEqual(got, []string{"b", "a"}) || d.Args.Line != 13 || d.Args.Items[1].Items[1].Text != "two" {
		t.Errorf("args = %+v", d.Args)
	}
	want := map[string]any{"n": int64(1), "f": 1.5, "s": "x", "l": []any{"a"}, "m": map[string]any{"k": "v"}, "nil": nil}
	if diff := cmp.Diff(want, d.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
}

// TestDecodeProblems: every problem of a document at once, each with its
// line and path, in the order of the lines.
func TestDecodeProblems(t *testing.T) {
	_, got := decode(t, `
count: 0
ratio: fast
on: "yes"
wait: 10
color: purpel
tags: x
env: [a]
ordered: {a: one}
range: {min: -1, least: 2}
match: "(x"
content: {x: .nan}
nmae: x
`)
	want := []string{
		`f.yaml:2: count: want 1 or more, got 0`,
		`f.yaml:2: name: required`,
		`f.yaml:3: ratio: want a number, got "fast"`,
		`f.yaml:4: on: want true or false, got "yes"`,
		`f.yaml:5: wait: time: missing unit in duration "10" (want e.g. 500ms, 10s, 2m)`,
		`f.yaml:6: color: unknown value "purpel" (want red, green, blue)`,
		`f.yaml:7: tags: want a list of tags, got "x"`,
		`f.yaml:8: env: want a mapping, got a list`,
		`f.yaml:9: ordered.a: want a whole number, got "one"`,
		`f.yaml:10: range.min: want 0 or more, got -1`,
		`f.yaml:10: range: unknown field "least"`,
		"f.yaml:11: match: error parsing regexp: missing closing ): `(x`",
		`f.yaml:12: content.x: .nan is not a JSON number`,
		`f.yaml:13: unknown field "nmae" (did you mean "name"?)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestMergeKeys(t *testing.T) {
	var got struct {
		Base doc `yaml:"base"`
		Use  doc `yaml:"use"`
	}
	err := Decode("f.yaml", []byte(`
base: &b {name: from-base, tags: [a]}
use: {<<: *b, name: mine, name: twice}
`), &got, nil)
	if err == nil || err.Error() != `f.yaml:3: use: duplicate field "name" (first at line 3)` {
		t.Errorf("error = %v, want the duplicate name", err)
	}
	if got.Use.Name != "mine" || !reflect.DeepEqual(got.Use.Tags, []string{"a"}) {
		t.Errorf("use = %+v, want its own name and the merged tags", got.Use)
	}
}

// bomb returns nine levels of nine aliases under key, indented: it
// stands for 9^9 (387 million) strings.
func bomb(key, indent string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s:\n", indent, key)
	fmt.Fprintf(&b, "%s  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n", indent)
	for i, c := range "bcdefghi" {
		prev := string(rune('a' + i))
		fmt.Fprintf(&b, "%s  %c: &%c [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", indent, c, c, prev, prev, prev, prev, prev, prev, prev, prev, prev)
	}
	return b.String()
}

// TestAliasBudget: a billion laughs anywhere in a document (a free-form
// value, a plain Go value, a field nobody reads) or an alias inside its
// own value ends with one problem, at the alias that passes the budget,
// and nothing else is reported about that document.
func TestAliasBudget(t *testing.T) {
	const over = "too many alias expansions: *%s would pass 10000 nodes, the limit for one document"
	tests := []struct {
		name, text string
		want       []string
	}{
		{"value", "name: x\n" + bomb("args", ""), []string{"f.yaml:7: " + fmt.Sprintf(over, "d")}},
		{"any", "name: x\n" + bomb("content", ""), []string{"f.yaml:7: " + fmt.Sprintf(over, "d")}},
		{"unread", bomb("anchors", "") + "nope: 1\n", []string{"f.yaml:6: " + fmt.Sprintf(over, "d")}},
		{"self", "name: x\nargs: &s [*s]\n", []string{"f.yaml:2: " + fmt.Sprintf(over, "s")}},
		{"within", "name: x\ntags: &t [a, b]\nenv: {<<: {}}\nargs: [*t, *t]\nzzz: 1\n", []string{`f.yaml:5: unknown field "zzz"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := decode(t, tt.text)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func BenchmarkAliasBomb(b *testing.B) {
	data := []byte("name: x\n" + bomb("args", ""))
	for b.Loop() {
		var d doc
		if err := Decode("f.yaml", data, &d, nil); !errors.Is(err, ErrAliasBudget) {
			b.Fatalf("error %v, want ErrAliasBudget", err)
		}
	}
}

func TestParseValue(t *testing.T) {
	v, err := ParseValue("{b: 1, a: &x {c: [1, 2]}, d: *x}")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := v.Plain()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(plain)
	if got, want := string(data), `{"a":{"c":[1,2]},"b":1,"d":{"c":[1,2]}}`; got != want {
		t.Errorf("plain = %s, want %s", got, want)
	}
	if _, err := ParseValue("{a: [1"); err == nil || !strings.HasPrefix(err.Error(), "yaml: line 1:") {
		t.Errorf("syntax error = %v, want yaml's own", err)
	}
	_, err = ParseValue(bomb("x", ""))
	var p Problem
	if !errors.As(err, &p) || !errors.Is(err, ErrAliasBudget) || p.Line != 6 {
		t.Errorf("bomb: %v, want a Problem on line 6 with ErrAliasBudget", err)
	}
}

// TestLocate: a problem found after decoding, naming a path, lands on the
// line that path was read from; a problem that knows its line keeps it.
func TestLocate(t *testing.T) {
	var ps Problems
	docs, err := Parse("f.yaml", []byte("name: x\ntags:\n  - a\n  - b\n"), &ps)
	if err != nil {
		t.Fatal(err)
	}
	root := docs[0].Root()
	var d doc
	root.Decode(&d)
	root.Locate(Errorf("tags[1]", "not %s", "b"))
	root.Locate(At("tags", 0, Errorf("[9]", "beyond")))
	root.Locate(At("range", 7, errors.New("plain")))
	root.Locate(errors.New("anywhere"))
	var got []string
	for _, p := range ps.Sorted() {
		got = append(got, p.String())
	}
	want := []string{"f.yaml:1: anywhere", "f.yaml:3: tags[9]: beyond", "f.yaml:4: tags[1]: not b", "f.yaml:7: range: plain"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestSyntaxError(t *testing.T) {
	var ps Problems
	docs, err := Parse("f.yaml", []byte("a: 1\n---\nb: [\n"), &ps)
	var p Problem
	var se *SyntaxError
	if len(docs) != 1 || !errors.As(err, &p) || !errors.As(err, &se) || p.String() != "f.yaml:3: did not find expected node content" {
		t.Errorf("Parse = %d docs, %v; want the first document and the error on line 3", len(docs), err)
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{File: "f.yaml", Line: 3, Path: "a.b", Msg: "bad"}, "f.yaml:3: a.b: bad"},
		{Problem{File: "f.yaml", Msg: "empty file"}, "f.yaml: empty file"},
		{Problem{Path: "steps[2].args", Line: 3, Msg: "want a mapping"}, "steps[2].args: line 3: want a mapping"},
		{Problem{Path: "scripted[1].call", Msg: "no name"}, "scripted[1].call: no name"},
		{Problem{Msg: "no model"}, "no model"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"expect", "servers", "servers_file", "name", "turns", "timeout"}
	tests := []struct{ in, want string }{
		{"expct", ` (did you mean "expect"?)`},
		{"sever", ` (did you mean "servers"?)`},
		{"servers_fil", ` (did you mean "servers_file"?)`},
		{"nam", ` (did you mean "name"?)`},
		{"turn", ` (did you mean "turns"?)`},
		{"xyz", ""},
		{"questions", ""},
	}
	for _, tt := range tests {
		if got := Suggest(tt.in, known); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSchema: the schema says what the reader reads.
func TestSchema(t *testing.T) {
	s := Schema(reflect.TypeFor[doc](), "urn:test", "Test", "A test file.")
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Schema               string         `json:"$schema"`
		Required             []string       `json:"required"`
		AdditionalProperties bool           `json:"additionalProperties"`
		Properties           map[string]any `json:"properties"`
		Defs                 map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Schema != "https://json-schema.org/draft/2020-12/schema" || !reflect.DeepEqual(got.Required, []string{"name"}) || got.AdditionalProperties {
		t.Errorf("schema = %s", data)
	}
	checks := map[string]string{
		"name":    `{"type":"string","description":"The name.","examples":["alpha"]}`,
		"count":   `{"type":"integer","minimum":1}`,
		"color":   `{"enum":["red","green","blue"],"type":"string"}`,
		"wait":    `{"type":"string","pattern":"` + strings.ReplaceAll(durationPattern, `\`, `\\`) + `"}`,
		"ordered": `{"type":"object","additionalProperties":{"type":"integer"}}`,
		"range":   `{"$ref":"#/$defs/inner"}`,
		"match":   `{"type":"string","format":"regex"}`,
		"args":    `true`,
		"shared":  `{"type":"string"}`,
	}
	for name, want := range checks {
		b, _ := json.Marshal(got.Properties[name])
		var w, g any
		json.Unmarshal([]byte(want), &w)
		json.Unmarshal(b, &g)
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("property %s (-want +got):\n%s", name, diff)
		}
	}
	if _, ok := got.Defs["inner"]; !ok {
		t.Errorf("no $defs.inner in %s", data)
	}
}

// Limits keeps plain types and says what they mean as a FieldChecker: a
// wait must be positive; a cap may be -1.
type Limits struct {
	Wait time.Duration `yaml:"wait"`
	Cap  int           `yaml:"cap"`
	// checked are the keys CheckField was asked about, in order.
	checked []string
}

func (l *Limits) CheckField(key string, n *Node) error {
	if key != "wait" && key != "cap" {
		return nil // a field of a struct that embeds it
	}
	l.checked = append(l.checked, key)
	switch {
	case key == "wait" && l.Wait <= 0:
		return fmt.Errorf("want a positive duration, got %s", n.Text())
	case key == "cap" && l.Cap != -1 && l.Cap <= 0:
		return fmt.Errorf("want a positive number, or -1, got %d", l.Cap)
	}
	return nil
}

func (*Limits) FieldSchema(key string, _ *Reflector) *jsonschema.Schema {
	if key == "cap" {
		return &jsonschema.Schema{Type: "integer", Description: "a cap"}
	}
	return nil
}

// TestFieldChecker: a struct that is a FieldChecker is asked about each of
// its fields written (inline in another struct too) once the value decoded
// without a problem, and says the schema of the fields it wants to.
func TestFieldChecker(t *testing.T) {
	type outer struct {
		Name   string `yaml:"name"`
		Limits `yaml:",inline"`
	}
	tests := []struct {
		text    string
		checked []string
		want    []string
	}{
		{"name: a\nwait: 2s\ncap: -1\n", []string{"wait", "cap"}, nil},
		{"wait: 0s\ncap: 0\n", []string{"wait", "cap"}, []string{"f.yaml:1: wait: want a positive duration, got 0s", "f.yaml:2: cap: want a positive number, or -1, got 0"}},
		// A value that does not decode is not asked about; one not written neither.
		{"wait: soon\n", nil, []string{`f.yaml:1: wait: time: invalid duration "soon" (want e.g. 500ms, 10s, 2m)`}},
		{"wait: ~\nname: b\n", nil, nil},
	}
	for _, tt := range tests {
		var got outer
		err := Decode("f.yaml", []byte(tt.text), &got, nil)
		var problems []string
		if err != nil {
			problems = strings.Split(err.Error(), "\n")
		}
		if diff := cmp.Diff(tt.want, problems); diff != "" {
			t.Errorf("%q: problems (-want +got):\n%s", tt.text, diff)
		}
		if diff := cmp.Diff(tt.checked, got.checked); diff != "" {
			t.Errorf("%q: checked (-want +got):\n%s", tt.text, diff)
		}
	}
	s := Schema(reflect.TypeFor[outer](), "urn:test", "Test", "")
	if got := s.Properties["cap"]; got.Type != "integer" || got.Description != "" {
		t.Errorf("cap's schema = %+v, want the checker's type with the field's (empty) doc", got)
	}
	if got := s.Properties["wait"]; got.Pattern != durationPattern {
		t.Errorf("wait's schema = %+v, want a duration's", got)
	}
}
