package budget

import (
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hosteval/hosteval/internal/yamlx"
)

// The budgets keep plain types (time.Duration, int, bool) for the host that
// uses them, so what a value in a file must be is said here, to yamlx, as
// a [yamlx.FieldChecker]: a duration or a number is positive, but for the
// number meaning none.

// CheckField checks the budget read under key (see [yamlx.FieldChecker]).
func (b *Budgets) CheckField(key string, n *yamlx.Node) error { return checkField(b, key, n) }

// FieldSchema is the schema of the budget under key.
func (*Budgets) FieldSchema(key string, _ *yamlx.Reflector) *jsonschema.Schema {
	return fieldSchema[Budgets](key)
}

// CheckField checks the budget read under key (see [yamlx.FieldChecker]).
func (c *Connect) CheckField(key string, n *yamlx.Node) error { return checkField(c, key, n) }

// FieldSchema is the schema of the budget under key.
func (*Connect) FieldSchema(key string, _ *yamlx.Reflector) *jsonschema.Schema {
	return fieldSchema[Connect](key)
}

// field finds the budget of T written under key.
func field[T any](key string) (Field, bool) {
	for _, f := range fieldsOf(reflect.TypeFor[T]()) {
		if f.Key == key {
			return f, true
		}
	}
	return Field{}, false
}

// checkField checks the value of the budget of *b read under key, at n.
func checkField[T any](b *T, key string, n *yamlx.Node) error {
	f, ok := field[T](key)
	if !ok {
		return nil
	}
	v := reflect.ValueOf(b).Elem().FieldByIndex(f.Index)
	switch {
	case v.Kind() == reflect.Bool:
	case f.Type == durationType && v.Int() <= 0:
		return fmt.Errorf("want a positive duration, got %s", n.Text())
	case f.Type == durationType:
	case f.None != nil && v.Int() != *f.None && v.Int() <= 0:
		return fmt.Errorf("want a positive number%s, or %d for no budget, got %d", f.of(), *f.None, v.Int())
	case f.None == nil && v.Int() <= 0:
		return fmt.Errorf("want a positive number%s, got %d", f.of(), v.Int())
	}
	return nil
}

// of names what a number counts: " of bytes".
func (f Field) of() string {
	if f.Unit == "" {
		return ""
	}
	return " of " + f.Unit
}

// fieldSchema is the schema of the values the budget under key may have:
// nil where its type's says it (a duration, a bool).
func fieldSchema[T any](key string) *jsonschema.Schema {
	f, ok := field[T](key)
	if !ok || f.Type.Kind() != reflect.Int || f.Type == durationType {
		return nil
	}
	one := 1.0
	positive := &jsonschema.Schema{Type: "integer", Minimum: &one}
	if f.None == nil {
		return positive
	}
	var none any = float64(*f.None)
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{positive, {Const: &none}}}
}
