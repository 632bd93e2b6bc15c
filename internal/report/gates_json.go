package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/hosteval/hosteval/internal/gate"
)

// GatesFile is where WriteReports keeps the gate results of a run, so
// that a page over the run folder (hosteval view) shows the gates the run
// was checked against without the files that defined them.
const GatesFile = "gates.json"

// GateResultsSchema is the version of gates.json.
const GateResultsSchema = 1

// gatesDoc is gates.json: schema, results (gate as written with its
// scopes, scenario group, value, limit, passed, detail) and the verdict.
type gatesDoc struct {
	Schema  int          `json:"schema"`
	Results []gateRecord `json:"results"`
	Verdict Verdict      `json:"verdict"`
}

type gateRecord struct {
	Gate  string   `json:"gate"`
	Group GroupKey `json:"group"`
	// Routing marks a routing group, of catalog size Distractors.
	Routing     bool    `json:"routing,omitempty"`
	Distractors int     `json:"distractors,omitempty"`
	Value       float64 `json:"value"`
	Limit       float64 `json:"limit"`
	Passed      bool    `json:"passed"`
	Detail      string  `json:"detail"`
}

// WriteGatesJSON writes gate results as gates.json.
func WriteGatesJSON(w io.Writer, results []GateResult) error {
	doc := gatesDoc{Schema: GateResultsSchema, Results: []gateRecord{}, Verdict: GateVerdict(results)}
	for _, r := range results {
		doc.Results = append(doc.Results, gateRecord{
			Gate: r.Gate.String(), Group: r.Group, Routing: r.Routing, Distractors: r.Distractors, Value: r.Value, Limit: r.Limit, Passed: r.Passed, Detail: r.Detail,
		})
	}
	return writeJSON(w, doc, "gates")
}

// ReadGatesJSON reads gates.json back as gate results, each gate as its
// text (its scopes included): enough to show them, not to check them again.
func ReadGatesJSON(r io.Reader) ([]GateResult, error) {
	var doc gatesDoc
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("read gates: %w", err)
	}
	if doc.Schema < 1 || doc.Schema > GateResultsSchema {
		return nil, fmt.Errorf("read gates: schema %d, want 1 to %d", doc.Schema, GateResultsSchema)
	}
	results := make([]GateResult, len(doc.Results))
	for i, g := range doc.Results {
		results[i] = GateResult{Gate: gate.Gate{Text: g.Gate}, Group: g.Group, Routing: g.Routing, Distractors: g.Distractors, Value: g.Value, Limit: g.Limit, Passed: g.Passed, Detail: g.Detail}
	}
	return results, nil
}
