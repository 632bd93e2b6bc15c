package yamlx

import (
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// Map is a mapping whose keys are names the user chooses (servers,
// environment variables, file paths), kept in the order written with
// where each was written. A mapping written empty is a non-nil, empty Map.
type Map[V any] []Entry[V]

// Entry is one key of a [Map].
type Entry[V any] struct {
	Key   string
	Value V
	// Line is the key's line.
	Line int
	// OK reports that the value was read without a problem.
	OK bool
}

// UnmarshalYAML reads a mapping of any keys.
func (m *Map[V]) UnmarshalYAML(n *Node) error {
	if n.Kind() != Mapping {
		n.Errorf("want a mapping, got %s", n.Describe())
		return nil
	}
	*m = Map[V]{}
	for _, f := range n.Fields() {
		var v V
		ok := f.Value.Decode(&v)
		*m = append(*m, Entry[V]{Key: f.Key, Value: v, Line: f.KeyLine, OK: ok})
	}
	return nil
}

// JSONSchema is an object of any keys whose values are V's.
func (m *Map[V]) JSONSchema(r *Reflector) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", AdditionalProperties: r.For(reflect.TypeFor[V]())}
}

// Keys are the keys in the order written.
func (m Map[V]) Keys() []string {
	keys := make([]string, len(m))
	for i, e := range m {
		keys[i] = e.Key
	}
	return keys
}
