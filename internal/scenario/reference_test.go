package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hosteval/hosteval/internal/gate"
	"github.com/hosteval/hosteval/internal/goldenfile"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// TestPublishedFilesCurrent: docs/*.schema.json and docs/scenarios.md are
// what the structs say (rewrite them with go test ./... -update).
func TestPublishedFilesCurrent(t *testing.T) {
	for _, kind := range SchemaKinds {
		got, err := Schema(kind)
		if err != nil {
			t.Fatal(err)
		}
		goldenfile.Check(t, filepath.Join("..", "..", "docs", kind+".schema.json"), got)
	}
	ref, err := Reference()
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, filepath.Join("..", "..", "docs", "scenarios.md"), ref)
	if _, err := Schema("nope"); err == nil || !strings.Contains(err.Error(), "want one of scenario, servers, gates") {
		t.Errorf(`Schema("nope") error = %v, want the kinds`, err)
	}
}

// TestSchemasAcceptTheSuite: every file of the suite, and of the valid
// test suite, meets its published schema, and broken files do not: the
// schema describes what the loader reads.
func TestSchemasAcceptTheSuite(t *testing.T) {
	resolved := map[string]*jsonschema.Resolved{}
	for _, kind := range SchemaKinds {
		s, err := schemaOf(kind)
		if err != nil {
			t.Fatal(err)
		}
		if resolved[kind], err = s.Resolve(nil); err != nil {
			t.Fatalf("%s schema: %v", kind, err)
		}
	}
	kindOf := func(path string) string {
		switch filepath.Base(path) {
		case "servers.yaml", "other-servers.yaml":
			return "servers"
		case "gates.yaml", "ci.yaml", "ci-gates.yaml":
			return "gates"
		case "script.yaml":
			return "script"
		case "seed-rules.yaml":
			return "rules"
		}
		return "scenario"
	}
	var files []string
	for _, glob := range []string{"../../scenarios/*.yaml", "../../scenarios/*/*.yaml", "testdata/valid/*.yaml", "testdata/valid/scenarios/*.yaml",
		"testdata/valid/scenarios/sub/*.yaml", "../gate/testdata/gates/*.yaml",
		"../../docs/examples/*.yaml", "../../docs/seed-rules.yaml"} {
		found, _ := filepath.Glob(glob)
		files = append(files, found...)
	}
	if len(files) < 15 {
		t.Fatalf("found %d files: %v", len(files), files)
	}
	testEnv(t)
	t.Setenv("CASE_DIR", t.TempDir()) // outside a run, servers files read it like any variable
	for _, path := range files {
		if path == "testdata/valid/scenarios/gates.yaml" || filepath.Base(filepath.Dir(path)) == "cassettes" {
			continue // not a scenario: files the loader skips by name
		}
		for i, v := range documents(t, path) {
			if err := resolved[kindOf(path)].Validate(v); err != nil {
				t.Errorf("%s document %d does not meet the %s schema: %v", path, i+1, kindOf(path), err)
			}
		}
		// And the loader reads it.
		var err error
		switch kindOf(path) {
		case "servers":
			_, err = LoadServers(path)
		case "gates":
			_, err = gate.Load(path)
		}
		if err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	for _, bad := range []struct{ kind, text string }{
		{"scenario", "name: x\nquestion: q\nmodel: {scripted: []}\nexpct: []\n"},
		{"scenario", "name: x\nquestion: q\nmodel: {scripted: []}\nexpect: [{tool: t, order: [a, b]}]\n"},
		{"scenario", "question: q\nmodel: {scripted: []}\n"},
		{"servers", "servers: {x: {comand: y}}\n"},
		{"gates", "gates: [{gate: pass_rate >= 1, scenarios: x}]\n"},
		{"script", "call: a__b\n"},
		{"rules", "rules: [{match: x, cal: a__b}]\n"},
	} {
		var v yamlx.Value
		if err := yamlx.Decode("bad.yaml", []byte(bad.text), &v, nil); err != nil {
			t.Fatal(err)
		}
		plain, _ := v.Plain()
		if err := resolved[bad.kind].Validate(plain); err == nil {
			t.Errorf("the %s schema accepts %q", bad.kind, bad.text)
		}
	}
}

// documents reads a file's documents as JSON values.
func documents(t *testing.T, path string) []any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ps yamlx.Problems
	docs, err := yamlx.Parse(path, data, &ps)
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	for _, d := range docs {
		var v yamlx.Value
		d.Root().Decode(&v)
		plain, err := v.Plain()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, plain)
	}
	return out
}
