package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// TestRunReportsCasesOnceDurable: a case is reported finished (OnCase) only
// once its record is in records.jsonl, while slots are freed before that:
// every case OnCase is told of is found in the file at that moment, and the
// tallies it gets count up one by one.
func TestRunReportsCasesOnceDurable(t *testing.T) {
	cases := suite(t, fixturetest.LookupScenario(40))
	dir := filepath.Join(t.TempDir(), "r1")
	var seen []string
	var missing []string
	ran := 0
	res, err := Run(context.Background(), cases, Options{
		Dir: dir, RunID: "r1", Concurrency: 4, Share: true, Logs: LogsFailed,
		OnCase: func(rec *record.Record, tally Result) {
			ran++
			if tally.Ran != ran {
				t.Errorf("tally.Ran = %d at the %dth report", tally.Ran, ran)
			}
			data, err := os.ReadFile(filepath.Join(dir, record.RecordsFile))
			if err != nil {
				t.Error(err)
				return
			}
			if !strings.Contains(string(data), `"case_id":"`+rec.CaseID+`"`) {
				missing = append(missing, rec.CaseID)
			}
			seen = append(seen, rec.CaseID)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 40 || res.Passed != 40 || len(seen) != 40 {
		t.Fatalf("result %+v, %d reported; want 40 ran, passed and reported", res, len(seen))
	}
	if len(missing) > 0 {
		t.Errorf("reported before their record was in records.jsonl: %v", missing)
	}
	if got := len(readRecords(t, dir)); got != 40 {
		t.Errorf("%d records, want 40", got)
	}
}
