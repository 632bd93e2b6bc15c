package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/record"
)

func TestReadRunFixture(t *testing.T) {
	run, err := record.ReadRun(filepath.Join("testdata", "runs", "base"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(run.Records), 15; got != want {
		t.Errorf("records = %d, want %d", got, want)
	}
	if len(run.Warnings) != 1 || !strings.Contains(run.Warnings[0], "records.jsonl:16: skipped a truncated last line") {
		t.Errorf("warnings = %q, want one about the truncated line 16", run.Warnings)
	}
	want := &record.RunInfo{
		RunID:       "20260501T100000Z-base",
		Started:     time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC),
		Args:        []string{"run", "-concurrency", "2", "scenarios/"},
		Version:     "v0.4.0",
		Interrupted: true,
	}
	if diff := cmp.Diff(want, run.Info); diff != "" {
		t.Errorf("run info (-want +got):\n%s", diff)
	}
	if got := run.ID(); got != "20260501T100000Z-base" {
		t.Errorf("ID() = %q", got)
	}
}

// TestReadMatchesAggregate: reading a run folder in one pass gives the
// same reports as reading it whole and aggregating it.
func TestReadMatchesAggregate(t *testing.T) {
	dir := filepath.Join("testdata", "runs", "base")
	run, err := record.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	read, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	render := func(s *Summary) string {
		var b strings.Builder
		WriteSummaryJSON(&b, s)
		WriteJUnit(&b, s)
		WriteText(&b, s, Options{AllCases: true})
		return b.String()
	}
	if diff := cmp.Diff(render(Aggregate(run)), render(read)); diff != "" {
		t.Errorf("Read differs from Aggregate(ReadRun) (-aggregate +read):\n%s", diff)
	}
}

// TestReadCaseRecordedTwice: a case recorded again (a run folder used
// again with -run-id) counts once, with its later record: its verdict, its
// calls' latencies, and a warning naming the later line, as ReadRun does.
func TestReadCaseRecordedTwice(t *testing.T) {
	rec := func(status string, ms float64) string {
		r := record.Record{Schema: 1, RunID: "r", CaseID: "s#0", Scenario: "s", Model: "scripted", Status: status,
			Calls: []record.Call{{Outcome: record.OutcomeOK, MS: ms}}}
		if status == record.StatusFail {
			r.Expectations = []record.Expectation{{Name: "answer_matches x", Detail: "no"}}
		}
		data, _ := json.Marshal(r)
		return string(data) + "\n"
	}
	other := strings.Replace(strings.Replace(rec(record.StatusPass, 7), `"s#0"`, `"s#1"`, 1), `"repeat":0`, `"repeat":1`, 1)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, record.RecordsFile), []byte(rec(record.StatusFail, 900)+other+rec(record.StatusPass, 5)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Totals.Cases != 2 || s.Totals.Passed != 2 || len(s.Failures) != 0 {
		t.Errorf("totals %+v, failures %v; want 2 cases, both passed", s.Totals, s.Failures)
	}
	if l := s.Groups[0].Latency; l.N != 2 || l.Max != 7 {
		t.Errorf("latency %+v, want the 2 calls of the records used (5 and 7 ms)", l)
	}
	want := []string{record.DuplicateWarning(filepath.Join(dir, record.RecordsFile), 3, "s#0")}
	if diff := cmp.Diff(want, s.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	run, err := record.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(run.Warnings, s.Warnings); diff != "" {
		t.Errorf("warnings differ from ReadRun's (-ReadRun +Read):\n%s", diff)
	}
}
