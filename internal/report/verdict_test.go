package report

import (
	"fmt"
	"testing"

	"github.com/hosteval/hosteval/internal/gate"
	"github.com/hosteval/hosteval/internal/record"
)

func TestJudge(t *testing.T) {
	// Five repeats each way: enough for a drop from 100% to 0% to be
	// significant.
	run := func(dir, status string) *Summary {
		var recs []record.Record
		for i := range 5 {
			recs = append(recs, record.Record{CaseID: fmt.Sprint(i), Scenario: "s", Model: "m", Repeat: i, Status: status})
		}
		return Aggregate(&record.Run{Dir: dir, Records: recs})
	}
	pass, fail := run("pass", record.StatusPass), run("fail", record.StatusFail)
	gates := []gate.Gate{mustGate(t, "pass_rate >= 1")}

	tests := []struct {
		name        string
		run, base   *Summary
		gates       []gate.Gate
		wantGates   int
		wantCompare bool
		wantReasons int
		regressed   bool
	}{
		{name: "nothing to check", run: fail},
		{name: "gates hold", run: pass, gates: gates, wantGates: 1},
		{name: "a gate fails", run: fail, gates: gates, wantGates: 1, wantReasons: 1, regressed: true},
		{name: "no regression", run: pass, base: pass, wantCompare: true},
		{name: "regressed from the baseline", run: fail, base: pass, wantCompare: true, wantReasons: 1, regressed: true},
		{name: "both fail", run: fail, base: pass, gates: gates, wantGates: 1, wantCompare: true, wantReasons: 2, regressed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Judge(tt.run, tt.gates, tt.base, Options{Width: 80})
			if len(c.Gates) != tt.wantGates || (c.Comparison != nil) != tt.wantCompare {
				t.Fatalf("checks = %d gates, comparison %v; want %d, %v", len(c.Gates), c.Comparison != nil, tt.wantGates, tt.wantCompare)
			}
			v := c.Verdict()
			if v.Regressed != tt.regressed || len(v.Reasons) != tt.wantReasons {
				t.Errorf("verdict = %+v, want regressed %v with %d reasons", v, tt.regressed, tt.wantReasons)
			}
			if c.Width != 80 {
				t.Errorf("Judge dropped the layout: width %d, want 80", c.Width)
			}
		})
	}
}
