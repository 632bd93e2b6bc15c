package yamlx

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// Unmarshaler is a type that reads itself from a node: a value with a
// meaning (a positive duration, a regular expression, a name of a server)
// or a choice of shapes (a name or a definition). It reports its own
// problems through n (n.Errorf, n.Locate, n.Decode of a part), or returns
// an error, which becomes a problem at n (a [Problem] without a file is
// placed below n, see [Node.Locate]).
type Unmarshaler interface {
	UnmarshalYAML(n *Node) error
}

// Enum is a string type whose values are a fixed list: another value is a
// problem naming the list, and the schema lists them.
type Enum interface {
	Enum() []string
}

// FieldChecker is a struct type whose fields mean more than their Go types
// say, where a field keeps a plain type for the code that uses it (a
// time.Duration that must be positive, an int that may be -1 for none), so
// that the meaning cannot be a method of the field's type ([Unmarshaler],
// [Schemer]). The reader calls CheckField on the struct it reads a mapping
// into, for each field written (an inline struct's too) once its value has
// decoded without a problem; an error is a problem at the value (n).
// FieldSchema is the schema of a field's values, or nil for its type's. A
// struct that embeds a FieldChecker is one (the methods are promoted), so
// both methods are asked about keys that are not their own, and say
// nothing of them.
type FieldChecker interface {
	CheckField(key string, n *Node) error
	FieldSchema(key string, r *Reflector) *jsonschema.Schema
}

// Decode reads the first document of data into v, a pointer to a struct
// (or any type the reader knows), collecting every problem. file names the
// data in problems. check, when not nil, is called after decoding to check
// what the values mean, reporting through the document's root. The error
// is an [*Error] holding every problem.
func Decode(file string, data []byte, v any, check func(root *Node)) error {
	var ps Problems
	docs, err := Parse(file, data, &ps)
	if err != nil {
		ps.Add(err.(Problem))
	}
	switch {
	case len(docs) > 0:
		root := docs[0].Root()
		if root != nil && root.Decode(v) && check != nil && !docs[0].OverBudget() {
			check(root)
		}
	case err == nil:
		ps.Add(Problem{File: file, Msg: "empty file"})
	}
	return ps.Err()
}

// DecodeFile is [Decode] of the file at path.
func DecodeFile(path string, v any, check func(root *Node)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return Decode(path, data, v, check)
}

func reflectValue(v any) reflect.Value {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		panic(fmt.Sprintf("yamlx: decode into %T, want a non-nil pointer", v))
	}
	return rv.Elem()
}

var durationType = reflect.TypeFor[time.Duration]()

// decodeValue reads n into rv. want, when set, replaces the "want ..."
// phrase of a wrong-kind problem (a field's `want` tag).
func decodeValue(n *Node, rv reflect.Value, want string) {
	if rv.Kind() != reflect.Pointer && rv.CanAddr() {
		if u, ok := rv.Addr().Interface().(Unmarshaler); ok {
			if err := u.UnmarshalYAML(n); err != nil {
				n.Locate(err)
			}
			return
		}
	}
	switch rv.Kind() {
	case reflect.Pointer:
		p := reflect.New(rv.Type().Elem())
		decodeValue(n, p.Elem(), want)
		rv.Set(p)
	case reflect.Interface:
		if rv.NumMethod() > 0 {
			n.Errorf("yamlx cannot read into %s", rv.Type())
			return
		}
		var v Value
		if err := v.UnmarshalYAML(n); err != nil {
			n.Locate(err)
			return
		}
		plain, err := v.Plain()
		if err != nil {
			n.Locate(err)
			return
		}
		if plain != nil {
			rv.Set(reflect.ValueOf(plain))
		}
	case reflect.Struct:
		decodeStruct(n, rv, want)
	case reflect.Slice:
		if n.Kind() != Sequence {
			wrongKind(n, "a list", want)
			return
		}
		items := n.Items()
		s := reflect.MakeSlice(rv.Type(), len(items), len(items))
		for i, it := range items {
			decodeValue(it, s.Index(i), "")
		}
		rv.Set(s)
	case reflect.Map:
		if n.Kind() != Mapping || rv.Type().Key().Kind() != reflect.String {
			wrongKind(n, "a mapping", want)
			return
		}
		m := reflect.MakeMap(rv.Type())
		for _, f := range n.Fields() {
			v := reflect.New(rv.Type().Elem()).Elem()
			decodeValue(f.Value, v, "")
			m.SetMapIndex(reflect.ValueOf(f.Key).Convert(rv.Type().Key()), v)
		}
		rv.Set(m)
	default:
		decodeScalar(n, rv, want)
	}
}

func wrongKind(n *Node, kind, want string) {
	n.Errorf("want %s, got %s", cmpOr(want, kind), n.Describe())
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func decodeScalar(n *Node, rv reflect.Value, want string) {
	kind := n.Kind()
	switch {
	case rv.Type() == durationType:
		if kind != Scalar {
			wrongKind(n, "a duration like 10s", want)
			return
		}
		d, err := time.ParseDuration(n.Text())
		if err != nil {
			n.Errorf("%v (want e.g. 500ms, 10s, 2m)", err)
			return
		}
		rv.SetInt(int64(d))
	case rv.Kind() == reflect.String:
		if kind != Scalar && kind != Null {
			wrongKind(n, "a string", want)
			return
		}
		text := n.Text()
		if kind == Null {
			text = ""
		}
		if e, ok := rv.Interface().(Enum); ok && !slices.Contains(e.Enum(), text) {
			n.Errorf("unknown value %q (want %s)%s", text, strings.Join(e.Enum(), ", "), Suggest(text, e.Enum()))
			return
		}
		rv.SetString(text)
	case rv.Kind() == reflect.Bool:
		var b bool
		if kind != Scalar || n.Tag() != "!!bool" || n.y.Decode(&b) != nil {
			wrongKind(n, "true or false", want)
			return
		}
		rv.SetBool(b)
	case rv.CanInt():
		var i int64
		if kind != Scalar || n.Tag() != "!!int" || n.y.Decode(&i) != nil || rv.OverflowInt(i) {
			wrongKind(n, "a whole number", want)
			return
		}
		rv.SetInt(i)
	case rv.CanUint():
		var u uint64
		if kind != Scalar || n.Tag() != "!!int" || n.y.Decode(&u) != nil || rv.OverflowUint(u) {
			wrongKind(n, "a whole number, 0 or more", want)
			return
		}
		rv.SetUint(u)
	case rv.CanFloat():
		var x float64
		if kind != Scalar || (n.Tag() != "!!int" && n.Tag() != "!!float") || n.y.Decode(&x) != nil {
			wrongKind(n, "a number", want)
			return
		}
		rv.SetFloat(x)
	default:
		n.Errorf("yamlx cannot read into %s", rv.Type())
	}
}

func decodeStruct(n *Node, rv reflect.Value, want string) {
	if n.Kind() != Mapping {
		wrongKind(n, "a mapping", want)
		return
	}
	sf := n.st.structFields(rv.Type())
	fields, names := sf.fields, sf.names
	var checker FieldChecker
	if rv.CanAddr() {
		checker, _ = rv.Addr().Interface().(FieldChecker)
	}
	written := map[string]bool{}
	for _, kv := range n.Fields() {
		i := slices.Index(names, kv.Key)
		if i < 0 {
			n.Report(Problem{Line: kv.KeyLine, Path: n.path, Msg: fmt.Sprintf("unknown field %q%s", kv.Key, Suggest(kv.Key, names))})
			continue
		}
		if kv.Value.Kind() == Null {
			continue // written empty: not written
		}
		written[kv.Key] = true
		f := fields[i]
		before := n.st.ps.Len()
		fv := rv.FieldByIndex(f.Index)
		decodeValue(kv.Value, fv, f.Want)
		if n.st.ps.Len() == before {
			checkBounds(kv.Value, fv, f.Min, f.Max)
		}
		if checker != nil && n.st.ps.Len() == before {
			if err := checker.CheckField(f.Name, kv.Value); err != nil {
				kv.Value.Locate(err)
			}
		}
	}
	for _, f := range fields {
		if f.Required && !written[f.Name] {
			n.Report(Problem{Line: n.Line(), Column: n.Column(), Path: Join(n.path, f.Name), Msg: "required"})
		}
	}
}

func checkBounds(n *Node, v reflect.Value, least, most *int64) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch {
	case !v.CanInt():
	case least != nil && v.Int() < *least:
		n.Errorf("want %d or more, got %d", *least, v.Int())
	case most != nil && v.Int() > *most:
		n.Errorf("want %d at most, got %d", *most, v.Int())
	}
}

// Keys lists the keys of struct type t, in declaration order: the fields
// a mapping read into it may have.
func Keys(t reflect.Type) []string {
	var keys []string
	for _, f := range fieldsOf(t) {
		keys = append(keys, f.Name)
	}
	return keys
}

// field is a struct field the reader decodes, and what its tags say:
//
//	yaml:"key"        the key (yaml:",inline" merges an embedded struct's fields; yaml:"-" skips)
//	doc:"..."         what the field means, for the schema and the reference
//	example:"..."     an example value, in YAML
//	required:"true"   the field must be written (an empty value counts as not written)
//	min:"N", max:"N"  a whole number must be N or more, N at most
//	want:"..."        the "want ..." phrase of a wrong-kind problem, e.g. "a list of variants"
type field struct {
	Name     string
	Index    []int
	Type     reflect.Type
	Doc      string
	Example  string
	Required bool
	Min, Max *int64
	Want     string
}

// structFields are the fields of a struct type and their keys.
type structFields struct {
	fields []field
	names  []string
}

// structFields are t's fields, from the document's memory of them.
func (st *state) structFields(t reflect.Type) structFields {
	if sf, ok := st.structs[t]; ok {
		return sf
	}
	sf := structFields{fields: fieldsOf(t)}
	sf.names = make([]string, len(sf.fields))
	for i, f := range sf.fields {
		sf.names[i] = f.Name
	}
	if st.structs != nil {
		st.structs[t] = sf
	}
	return sf
}

// fieldsOf lists the fields of struct type t the reader decodes, in
// declaration order, inline structs' fields in place.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tags := parseTag(sf.Tag)
		tag := tags["yaml"]
		if (!sf.IsExported() && !sf.Anonymous) || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && slices.Contains(strings.Split(opts, ","), "inline") && sf.Type.Kind() == reflect.Struct {
			for _, f := range fieldsOf(sf.Type) {
				f.Index = append([]int{i}, f.Index...)
				out = append(out, f)
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		f := field{Name: name, Index: []int{i}, Type: sf.Type, Doc: tags["doc"], Example: tags["example"],
			Required: tags["required"] == "true", Want: tags["want"]}
		f.Min, f.Max = intTag(t, sf, tags, "min"), intTag(t, sf, tags, "max")
		out = append(out, f)
	}
	return out
}

// parseTag reads every key:"value" pair of a struct tag in one pass, as
// StructTag.Lookup reads each: Lookup scans the tag from its start for
// every key, and a doc tag is long, so that looking up a field's seven
// keys was a quarter of loading a scenario of 100 scripted steps.
func parseTag(tag reflect.StructTag) map[string]string {
	out := make(map[string]string, 8)
	seen := make(map[string]bool, 8)
	for tag != "" {
		i := 0
		for i < len(tag) && tag[i] == ' ' {
			i++
		}
		tag = tag[i:]
		// A key is non-control characters other than space, quote and
		// colon; then a colon and a quoted Go string.
		i = 0
		for i < len(tag) && tag[i] > ' ' && tag[i] != ':' && tag[i] != '"' && tag[i] != 0x7f {
			i++
		}
		if i == 0 || i+1 >= len(tag) || tag[i] != ':' || tag[i+1] != '"' {
			break
		}
		key := string(tag[:i])
		tag = tag[i+1:]
		i = 1
		for i < len(tag) && tag[i] != '"' {
			if tag[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(tag) {
			break
		}
		quoted := string(tag[:i+1])
		tag = tag[i+1:]
		if seen[key] {
			continue // Lookup finds the first
		}
		seen[key] = true
		if value, err := strconv.Unquote(quoted); err == nil {
			out[key] = value
		}
	}
	return out
}

func intTag(t reflect.Type, sf reflect.StructField, tags map[string]string, key string) *int64 {
	text, ok := tags[key]
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		panic(fmt.Sprintf("yamlx: %s.%s: %s tag %q is not a whole number", t, sf.Name, key, text))
	}
	return &n
}
