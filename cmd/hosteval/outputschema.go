package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/report"
)

// outputKinds are the files a run folder holds that other programs read:
// their schemas are published in docs/ beside the input files', so that a
// dashboard or a CI step can check what it parses, and a test validates a
// real run's files against them. They are made here, in cmd, because the
// scenario package that publishes the input schemas must not import the
// reports.
var outputKinds = []struct {
	kind, file, title, description string
	typ                            reflect.Type
}{
	{"record", "records.jsonl", "hosteval record", "One line of a run folder's records.jsonl: one case, with its servers, turns, tool calls and their events, model requests, routing verdict and expectations.", reflect.TypeFor[record.Record]()},
	{"run", "run.json", "hosteval run.json", "A run folder's run.json: what was run, by which build, where and with which settings; whether it finished.", reflect.TypeFor[record.RunInfo]()},
	{"summary", "summary.json", "hosteval summary.json", "A run folder's summary.json, written by hosteval run and hosteval report: totals, per-group and per-tool figures, routing figures, failures.", reflect.TypeFor[report.Summary]()},
}

// outputSchema returns the JSON Schema (draft 2020-12) of an output file,
// generated from the struct it is written from: a field added to the
// struct is in the schema once docs/ is regenerated (go test ./cmd/hosteval
// -run TestOutputSchemas -update), and a test fails until it is.
func outputSchema(kind string) ([]byte, bool, error) {
	for _, k := range outputKinds {
		if k.kind != kind {
			continue
		}
		s, err := jsonschema.ForType(k.typ, &jsonschema.ForOptions{})
		if err != nil {
			return nil, true, fmt.Errorf("schema of %s: %w", k.file, err)
		}
		s.Schema = "https://json-schema.org/draft/2020-12/schema"
		s.ID = "https://github.com/hosteval/hosteval/docs/" + kind + ".schema.json"
		s.Title = k.title
		s.Description = k.description
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return nil, true, err
		}
		return buf.Bytes(), true, nil
	}
	return nil, false, nil
}
