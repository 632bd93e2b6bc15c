package yamlx

import (
	"reflect"
	"testing"
)

// parseTag must read a tag as reflect.StructTag.Lookup does, key by key.
func checkParseTag(t *testing.T, tag reflect.StructTag) {
	t.Helper()
	got := parseTag(tag)
	for k, v := range got {
		if want, ok := tag.Lookup(k); !ok || want != v {
			t.Errorf("tag %q: parseTag has %s=%q; Lookup gives %q, %v", tag, k, v, want, ok)
		}
	}
	for _, k := range []string{"yaml", "doc", "example", "required", "min", "max", "want", "a", "b"} {
		if want, ok := tag.Lookup(k); ok && got[k] != want {
			t.Errorf("tag %q: Lookup(%s) = %q; parseTag has %q", tag, k, want, got[k])
		}
	}
}

func TestParseTag(t *testing.T) {
	tests := []struct {
		tag  reflect.StructTag
		want map[string]string
	}{
		{``, map[string]string{}},
		{`yaml:"name"`, map[string]string{"yaml": "name"}},
		{`yaml:"steps,omitempty" doc:"Say \"why\": a \\ and a tab\t." min:"1"`, map[string]string{"yaml": "steps,omitempty", "doc": "Say \"why\": a \\ and a tab\t.", "min": "1"}},
		{`yaml:"a"  yaml:"b" want:"a list"`, map[string]string{"yaml": "a", "want": "a list"}},
		{`yaml:"a" broken doc:"lost"`, map[string]string{"yaml": "a"}},
		{`yaml:"unterminated`, map[string]string{}},
	}
	for _, tt := range tests {
		got := parseTag(tt.tag)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseTag(%q) = %q, want %q", tt.tag, got, tt.want)
		}
		checkParseTag(t, tt.tag)
	}
}

func FuzzParseTag(f *testing.F) {
	for _, s := range []string{`yaml:"x" doc:"a \"b\" c" min:"0"`, `a:"1" a:"2"`, `a:"\u00e9" b:"\x41"`, `:"x"`, "a:\"\x7f\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkParseTag(t, reflect.StructTag(s))
	})
}
