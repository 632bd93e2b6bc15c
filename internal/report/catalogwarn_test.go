package report

import (
	"slices"
	"testing"

	"github.com/hosteval/hosteval/internal/record"
)

// TestCatalogWarning: a host's warning on a catalog too large for any
// model is a warning of the run, once, with the first case that had it.
func TestCatalogWarning(t *testing.T) {
	big := record.ToolDefs{Tools: 20001, Bytes: 9 << 20, Tokens: 2_400_000, Estimated: true, Warning: "the model is offered 20001 tools"}
	s := Aggregate(&record.Run{Dir: "r", Warnings: []string{"records.jsonl:3: skipped"}, Records: []record.Record{
		{CaseID: "a#0", Scenario: "a", Model: "m", Status: record.StatusPass, ToolDefs: big},
		{CaseID: "a#1", Scenario: "a", Model: "m", Status: record.StatusPass, ToolDefs: big},
		{CaseID: "b#0", Scenario: "b", Model: "m", Status: record.StatusPass},
	}})
	want := []string{"records.jsonl:3: skipped", "a#0: the model is offered 20001 tools"}
	if !slices.Equal(s.Warnings, want) {
		t.Errorf("warnings %q, want %q", s.Warnings, want)
	}
}
