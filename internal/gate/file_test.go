package gate

import (
	"errors"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/internal/yamlx"
)

// TestLoadAliasBomb: a "billion laughs" in a gates file ends with one
// problem naming the file and the line of the alias that passes the
// budget, before anything is expanded.
func TestLoadAliasBomb(t *testing.T) {
	_, err := Load("testdata/hostile/gates.yaml")
	want := "testdata/hostile/gates.yaml:10: invalid gate: too many alias expansions: *d would pass 10000 nodes, the limit for one document"
	if err == nil || err.Error() != want {
		t.Fatalf("Load error = %v, want %s", err, want)
	}
	var p yamlx.Problem
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, yamlx.ErrAliasBudget) || !errors.As(err, &p) || p.Line != 10 {
		t.Errorf("error %v: want ErrInvalid, ErrAliasBudget and a Problem on line 10", err)
	}
}

// TestLoadEveryProblem: every problem of a gates file at once, in the
// words of the gate errors.
func TestLoadEveryProblem(t *testing.T) {
	_, err := parse("gates.yaml", []byte("gates:\n  - pass_rat >= 1\n  - {gate: cases >= 1, scenario: \"(\"}\n  - {gate: cases >= 1, modle: x}\nbaseline: b\n"))
	want := []string{
		`gates.yaml:2: invalid gate "pass_rat >= 1": unknown metric "pass_rat" (known: ` + strings.Join(MetricNames(), ", ") + ")",
		"gates.yaml:3: invalid gate: scenario: error parsing regexp: missing closing ): `(`",
		`gates.yaml:4: invalid gate: unknown field "modle" (known: gate, scenario, variant, model) (did you mean "model"?)`,
		`gates.yaml:5: invalid gate: unknown field "baseline" (known: gates)`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("error:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}
