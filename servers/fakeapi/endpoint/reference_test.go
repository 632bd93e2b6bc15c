package endpoint

import (
	"path/filepath"
	"testing"

	"github.com/hosteval/hosteval/internal/goldenfile"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// TestReferenceCurrent: docs/fakeapi.md and docs/fakeapi.schema.json are
// what the structs say (rewrite them with -update), and the suite's rules
// file meets the schema and loads.
func TestReferenceCurrent(t *testing.T) {
	ref, err := Reference()
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, filepath.Join("..", "..", "..", "docs", "fakeapi.md"), ref)
	sch, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, filepath.Join("..", "..", "..", "docs", "fakeapi.schema.json"), sch)

	resolved, err := schema().Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "..", "scenarios", "cassettes", "fakeapi.yaml")
	var v yamlx.Value
	if err := yamlx.DecodeFile(path, &v, nil); err != nil {
		t.Fatal(err)
	}
	plain, _ := v.Plain()
	if err := resolved.Validate(plain); err != nil {
		t.Errorf("%s does not meet the schema: %v", path, err)
	}
	var cfg Config
	if err := yamlx.DecodeFile(path, &cfg, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := New(cfg); err != nil {
		t.Errorf("%s: %v", path, err)
	}
	if err := resolved.Validate(map[string]any{"rules": []any{map[string]any{"match": "x", "cals": []any{}}}}); err == nil {
		t.Error("the schema accepts a rule with the unknown key cals")
	}
}
