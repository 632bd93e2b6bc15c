package yamlx

import (
	"errors"
	"math"

	"github.com/google/jsonschema-go/jsonschema"

	"gopkg.in/yaml.v3"
)

// maxValueDepth bounds the nesting of a free-form value.
const maxValueDepth = 64

// Value is a free-form YAML value, such as a call's arguments or a form's
// content: read once, its aliases resolved within the document's budget,
// its mapping keys in the order written (merge keys applied), each part
// with its line. The zero Value is a value not written.
type Value struct {
	Kind Kind
	// Tag and Text are a scalar's resolved tag ("!!str", "!!int",
	// "!!float", "!!bool", "!!null", "!!timestamp", ...) and its text.
	Tag  string
	Text string
	// Keys are a mapping's keys; Items are its values (Items[i] is the
	// value of Keys[i]) or a list's items.
	Keys  []string
	Items []Value
	Line  int
	// Column is where the value starts on its line.
	Column int
}

// IsZero reports a value not written.
func (v Value) IsZero() bool { return v.Kind == Invalid }

// UnmarshalYAML reads any value; values nested deeper than 64 levels are
// a problem.
func (v *Value) UnmarshalYAML(n *Node) error {
	n.st.unseen++
	defer func() { n.st.unseen-- }()
	*v = valueOf(n, 0)
	return nil
}

func valueOf(n *Node, depth int) Value {
	v := Value{Kind: n.Kind(), Line: n.Line(), Column: n.Column()}
	if depth > maxValueDepth {
		n.Errorf("value nested deeper than %d levels", maxValueDepth)
		return v
	}
	switch v.Kind {
	case Mapping:
		for _, f := range n.Fields() {
			v.Keys = append(v.Keys, f.Key)
			v.Items = append(v.Items, valueOf(f.Value, depth+1))
		}
	case Sequence:
		for _, it := range n.Items() {
			v.Items = append(v.Items, valueOf(it, depth+1))
		}
	default:
		v.Tag, v.Text = n.Tag(), n.Text()
	}
	return v
}

// JSONSchema is any value.
func (*Value) JSONSchema(*Reflector) *jsonschema.Schema { return &jsonschema.Schema{} }

// Describe names the value for "want ..., got ..." messages, as
// [Node.Describe] does.
func (v Value) Describe() string {
	y := &yaml.Node{Kind: yaml.ScalarNode, Tag: v.Tag, Value: v.Text}
	switch v.Kind {
	case Mapping:
		y.Kind = yaml.MappingNode
	case Sequence:
		y.Kind = yaml.SequenceNode
	case Invalid:
		return "nothing"
	}
	return (&Node{y: y}).Describe()
}

// Scalar is a scalar's Go value by its tag: nil, bool, int (int64 or
// uint64 when it does not fit, float64 when neither does), float64, and
// the text itself for every other tag (a date stays the text written).
func (v Value) Scalar() (any, error) {
	var x any = v.Text
	switch v.Tag {
	case "!!int", "!!float", "!!bool", "!!null":
		y := &yaml.Node{Kind: yaml.ScalarNode, Tag: v.Tag, Value: v.Text}
		if err := y.Decode(&x); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// Plain returns the value as JSON would hold it: map[string]any, []any,
// string, int64, float64, bool and nil. A number JSON cannot hold (.inf,
// .nan) is a [Problem] at its path below the value.
func (v Value) Plain() (any, error) { return v.plain("") }

func (v Value) plain(path string) (any, error) {
	switch v.Kind {
	case Mapping:
		m := make(map[string]any, len(v.Keys))
		for i, k := range v.Keys {
			x, err := v.Items[i].plain(Join(path, k))
			if err != nil {
				return nil, err
			}
			m[k] = x
		}
		return m, nil
	case Sequence:
		l := make([]any, 0, len(v.Items))
		for i, it := range v.Items {
			x, err := it.plain(Index(path, i))
			if err != nil {
				return nil, err
			}
			l = append(l, x)
		}
		return l, nil
	case Invalid, Null:
		return nil, nil
	}
	x, err := v.Scalar()
	if err != nil {
		return nil, Problem{Path: path, Line: v.Line, Column: v.Column, Msg: err.Error(), Err: err}
	}
	switch x := x.(type) {
	case int:
		return int64(x), nil
	case uint64:
		return float64(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, Problem{Path: path, Line: v.Line, Column: v.Column, Msg: v.Text + " is not a JSON number"}
		}
	}
	return x, nil
}

// ParseValue reads text as one YAML value (a call's arguments written
// inline), within the same alias budget as a file. A syntax error is
// yaml.v3's own ("yaml: line 1: ..."); other problems are [Problem]s
// without a file, with their line in text.
func ParseValue(text string) (Value, error) {
	var ps Problems
	docs, err := Parse("", []byte(text), &ps)
	if err != nil {
		var se *SyntaxError
		errors.As(err, &se)
		return Value{}, se.Err
	}
	if len(docs) == 0 {
		return Value{Kind: Null, Tag: "!!null", Line: 1, Column: 1}, nil
	}
	var v Value
	if root := docs[0].Root(); root != nil {
		v.UnmarshalYAML(root)
	}
	if ps.Len() > 0 {
		return Value{}, ps.list[0]
	}
	return v, nil
}
