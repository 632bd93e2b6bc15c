package report

import (
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
