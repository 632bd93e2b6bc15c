package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeRun writes a run folder with the given records.jsonl content and,
// when info is not empty, run.json.
func writeRun(t *testing.T, records, info string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, RecordsFile), []byte(records), 0o644); err != nil {
		t.Fatal(err)
	}
	if info != "" {
		if err := os.WriteFile(filepath.Join(dir, RunInfoFile), []byte(info), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// readCaseIDs reads the run folder dir and returns it with its records'
// case IDs, in the order of the file.
func readCaseIDs(t *testing.T, dir string) (*Run, []string) {
	t.Helper()
	run, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range run.Records {
		ids = append(ids, r.CaseID)
	}
	return run, ids
}

func line(rec Record) string {
	data, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	return string(data) + "\n"
}

func TestReadRun(t *testing.T) {
	a := Record{Schema: 1, RunID: "r1", CaseID: "a/scripted#0", Scenario: "a", Model: "scripted", Status: StatusPass}
	b := Record{Schema: 1, RunID: "r1", CaseID: "b/scripted#0", Scenario: "b", Model: "scripted", Status: StatusFail}
	b2 := b
	b2.Status = StatusPass
	newer := a
	newer.Schema = SchemaVersion + 1

	tests := []struct {
		name         string
		records      string
		info         string
		wantCases    []string // case ID:status
		wantWarnings []string // substrings, in order
		wantID       string
		wantErr      string
	}{
		{
			name:      "no run.json",
			records:   line(a) + line(b),
			wantCases: []string{"a/scripted#0:pass", "b/scripted#0:fail"},
			wantID:    "r1",
		},
		{
			name:      "run.json names the run",
			records:   line(a),
			info:      `{"run_id": "named", "started": "2026-05-01T10:00:00Z", "interrupted": false}`,
			wantCases: []string{"a/scripted#0:pass"},
			wantID:    "named",
		},
		{
			name:         "malformed run.json is a warning",
			records:      line(a),
			info:         `{"run_id": `,
			wantCases:    []string{"a/scripted#0:pass"},
			wantWarnings: []string{"run.json: ignored"},
			wantID:       "r1",
		},
		{
			name:         "truncated last line",
			records:      line(a) + line(b)[:40],
			wantCases:    []string{"a/scripted#0:pass"},
			wantWarnings: []string{"records.jsonl:2: skipped a truncated last line (40 bytes)"},
			wantID:       "r1",
		},
		{
			name:         "malformed middle line",
			records:      line(a) + "{not json\n" + line(b),
			wantCases:    []string{"a/scripted#0:pass", "b/scripted#0:fail"},
			wantWarnings: []string{"records.jsonl:2: skipped a malformed line"},
			wantID:       "r1",
		},
		{
			name:      "blank lines",
			records:   "\n" + line(a) + "\n\n" + line(b),
			wantCases: []string{"a/scripted#0:pass", "b/scripted#0:fail"},
			wantID:    "r1",
		},
		{
			name:         "a case recorded twice keeps the later record",
			records:      line(b) + line(a) + line(b2),
			wantCases:    []string{"b/scripted#0:pass", "a/scripted#0:pass"},
			wantWarnings: []string{`records.jsonl:3: case "b/scripted#0" recorded again`},
			wantID:       "r1",
		},
		{
			name:      "empty file",
			records:   "",
			wantCases: nil,
		},
		{
			name:    "nothing valid",
			records: "garbage\nmore garbage",
			wantErr: "no valid record in records.jsonl (2 lines skipped)",
		},
		{
			name:    "newer schema",
			records: line(a) + line(newer),
			wantErr: fmt.Sprintf("records.jsonl:2: record schema %d is newer than this program reads (%d)", SchemaVersion+1, SchemaVersion),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeRun(t, tt.records, tt.info)
			run, err := ReadRun(dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range run.Records {
				got = append(got, r.CaseID+":"+r.Status)
			}
			if diff := cmp.Diff(tt.wantCases, got); diff != "" {
				t.Errorf("cases (-want +got):\n%s", diff)
			}
			if len(run.Warnings) != len(tt.wantWarnings) {
				t.Fatalf("warnings = %q, want %d", run.Warnings, len(tt.wantWarnings))
			}
			for i, w := range tt.wantWarnings {
				if !strings.Contains(run.Warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, run.Warnings[i], w)
				}
			}
			if tt.wantID != "" && run.ID() != tt.wantID {
				t.Errorf("ID() = %q, want %q", run.ID(), tt.wantID)
			}
		})
	}
}

func TestReadRunMissing(t *testing.T) {
	_, err := ReadRun(t.TempDir())
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
	}
}

func TestRunIDFallsBackToFolder(t *testing.T) {
	dir := writeRun(t, "", "")
	run, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := run.ID(), filepath.Base(dir); got != want {
		t.Errorf("ID() = %q, want %q", got, want)
	}
}

func TestReaderLongLine(t *testing.T) {
	// A record with large arguments is longer than any Scanner buffer.
	rec := Record{Schema: 1, CaseID: "big#0", Calls: []Call{{Arguments: map[string]any{"text": strings.Repeat("x", 3<<20)}}}}
	r := NewReader(strings.NewReader(line(rec)+line(rec)), "big.jsonl")
	for i := range 2 {
		got, err := r.Next()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if n := len(got.Calls[0].Arguments["text"].(string)); n != 3<<20 {
			t.Fatalf("record %d: argument of %d bytes, want %d", i, n, 3<<20)
		}
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last record: err = %v, want io.EOF", err)
	}
}

func TestWriterConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), RecordsFile)
	w, err := OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				rec := Record{
					CaseID: fmt.Sprintf("s%d/scripted#%d", g, i), Scenario: fmt.Sprintf("s%d", g),
					Model: "scripted", Repeat: i, Status: StatusPass,
					// Big enough that a torn write would show.
					Turns: []Turn{{Answer: strings.Repeat("a", 5000)}},
				}
				if err := w.Write(&rec); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	run, err := ReadRun(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Warnings) != 0 {
		t.Errorf("warnings = %q", run.Warnings)
	}
	if got, want := len(run.Records), writers*each; got != want {
		t.Fatalf("records = %d, want %d", got, want)
	}
	for _, r := range run.Records {
		if r.Schema != SchemaVersion {
			t.Fatalf("record %s schema = %d, want %d", r.CaseID, r.Schema, SchemaVersion)
		}
	}
	if err := w.Write(&Record{CaseID: "late"}); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Write after Close: err = %v, want os.ErrClosed", err)
	}
}

func TestWriterAfterCrash(t *testing.T) {
	a := Record{Schema: 1, CaseID: "a#0", Status: StatusPass}
	b := Record{Schema: 1, CaseID: "b#0", Status: StatusPass}
	dir := writeRun(t, line(a)+line(b)[:30], "")
	w, err := OpenWriter(filepath.Join(dir, RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	run, got := readCaseIDs(t, dir)
	if diff := cmp.Diff([]string{"a#0", "b#0"}, got); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if len(run.Warnings) != 1 || !strings.Contains(run.Warnings[0], ":2: skipped a malformed line") {
		t.Errorf("warnings = %q, want one about line 2", run.Warnings)
	}
}

func TestWriteRunInfo(t *testing.T) {
	dir := t.TempDir()
	want := RunInfo{
		RunID: "r1", Started: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC),
		Args: []string{"run", "x.yaml"}, Version: "v1", Interrupted: true,
	}
	for range 2 { // the runner writes it at the start and again at the end
		if err := WriteRunInfo(dir, want); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, RecordsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&want, run.Info); diff != "" {
		t.Errorf("run info (-want +got):\n%s", diff)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("folder has %d entries, want run.json and records.jsonl only", len(entries))
	}
}
