package record

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestScanKeepsFileOrder: records are decoded on several goroutines and
// handed over in the order of the file, with their line numbers, across
// many batches; malformed lines are warnings in place.
func TestScanKeepsFileOrder(t *testing.T) {
	var b strings.Builder
	const n = 1000
	for i := range n {
		if i == 500 {
			b.WriteString("{not json\n\n")
		}
		b.WriteString(line(Record{Schema: 1, CaseID: fmt.Sprintf("c#%d", i), Repeat: i, Status: StatusPass}))
	}
	b.WriteString(`{"schema":1,"case_id":"cut`) // a crash mid-write
	dir := writeRun(t, b.String(), `{"run_id": "r"}`)
	var got []int
	var lines []int
	run, err := Scan(dir, func(rec *Record, line int) error {
		got = append(got, rec.Repeat)
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d records, want %d", len(got), n)
	}
	for i := range got {
		wantLine := i + 1
		if i >= 500 {
			wantLine += 2 // the malformed line and the blank one
		}
		if got[i] != i || lines[i] != wantLine {
			t.Fatalf("record %d: repeat %d at line %d, want %d at line %d", i, got[i], lines[i], i, wantLine)
		}
	}
	if run.Info == nil || run.Info.RunID != "r" || run.Records != nil {
		t.Errorf("run = %+v, want run.json read and no records kept", run)
	}
	if len(run.Warnings) != 2 || !strings.Contains(run.Warnings[0], ":501: skipped a malformed line") || !strings.Contains(run.Warnings[1], ":1003: skipped a truncated last line") {
		t.Errorf("warnings = %q", run.Warnings)
	}
}

func TestScanStops(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		schema := 1
		if i == 250 {
			schema = SchemaVersion + 1
		}
		b.WriteString(line(Record{Schema: schema, CaseID: fmt.Sprintf("c#%d", i)}))
	}
	dir := writeRun(t, b.String(), "")
	seen := 0
	_, err := Scan(dir, func(*Record, int) error { seen++; return nil })
	if err == nil || !strings.Contains(err.Error(), ":251: record schema 2 is newer") || seen != 250 {
		t.Errorf("a newer record at line 251: err %v after %d records, want the error after 250", err, seen)
	}
	stop := errors.New("enough")
	seen = 0
	_, err = Scan(dir, func(*Record, int) error {
		seen++
		if seen == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || seen != 10 {
		t.Errorf("each's error: err %v after %d records, want %v after 10", err, seen, stop)
	}
}
