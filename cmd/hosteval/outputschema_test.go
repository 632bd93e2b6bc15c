package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestOutputSchemas holds docs/<kind>.schema.json to what hosteval schema
// prints: the published schema of an output file is the struct's.
func TestOutputSchemas(t *testing.T) {
	for _, k := range outputKinds {
		t.Run(k.kind, func(t *testing.T) {
			got, ok, err := outputSchema(k.kind)
			if err != nil || !ok {
				t.Fatalf("outputSchema(%q) = %v, %v", k.kind, ok, err)
			}
			path := filepath.Join("..", "..", "docs", k.kind+".schema.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is stale: go test ./cmd/hosteval -run TestOutputSchemas -update rewrites it", path)
			}
		})
	}
}

// TestRunFolderMatchesSchemas runs part of the default suite (a dialogue
// with the person, a routing dataset with distractors, an A/B, failures
// of every kind the fixtures make) and validates every file other programs
// read against the schemas published in docs/, with a validator that is
// not the generator (santhosh-tekuri/jsonschema), so a struct whose JSON
// differs from its declared shape (a custom MarshalJSON, a field written
// by hand) fails here.
func TestRunFolderMatchesSchemas(t *testing.T) {
	self, err := exec.LookPath("hosteval") // this test binary, as testscript.Main put it on PATH
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	work := layOutClone(t, root, self)
	out := filepath.Join(t.TempDir(), "results")
	cmd := exec.Command(filepath.Join(work, "bin", "hosteval"), "run", "-out", out,
		"scenarios/tickets.yaml", "scenarios/routing.yaml", "scenarios/ab.yaml", "scenarios/failures.yaml")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "CI=true")
	output, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hosteval run: %v\n%s", err, output)
	}
	runs, err := filepath.Glob(filepath.Join(out, "*", "run.json"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("run folders: %v %v", runs, err)
	}
	dir := filepath.Dir(runs[0])

	compiler := jsonschema.NewCompiler()
	schemas := make(map[string]*jsonschema.Schema)
	for _, k := range outputKinds {
		path := filepath.Join(root, "docs", k.kind+".schema.json")
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		url := "https://github.com/hosteval/hosteval/docs/" + k.kind + ".schema.json"
		if err := compiler.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		if schemas[k.file], err = compiler.Compile(url); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}

	validate := func(where string, data []byte, s *jsonschema.Schema) {
		t.Helper()
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s does not match its schema: %v", where, err)
		}
	}
	for _, file := range []string{"run.json", "summary.json"} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		validate(file, data, schemas[file])
	}

	f, err := os.Open(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	lines, routed, errors, asked := 0, 0, 0, 0
	for sc.Scan() {
		lines++
		line := sc.Bytes()
		validate("records.jsonl:"+strconv.Itoa(lines), line, schemas["records.jsonl"])
		if bytes.Contains(line, []byte(`"route":`)) {
			routed++
		}
		if bytes.Contains(line, []byte(`"error":`)) {
			errors++
		}
		if bytes.Contains(line, []byte(`"elicitations":`)) {
			asked++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// The run must have exercised what the schema describes, or the
	// validation above proves little.
	if lines < 100 || routed == 0 || errors == 0 || asked == 0 {
		t.Errorf("records: %d lines, %d with a routing verdict, %d with an error, %d with a question to the person; want >= 100 and > 0 of each", lines, routed, errors, asked)
	}
	if !strings.Contains(string(output), "results in") {
		t.Errorf("run output has no summary line:\n%s", output)
	}
}
