package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// failingFile is a records file on a disk that fills after left bytes: a
// write past them writes what fits and fails with ENOSPC, as a full disk
// does.
type failingFile struct {
	*os.File
	mu   sync.Mutex
	left int
	// lost counts the lines that were not written whole: the records of
	// the batch that met the full disk.
	lost int
}

func (f *failingFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(p) <= f.left {
		f.left -= len(p)
		return f.File.Write(p)
	}
	n, err := f.File.Write(p[:f.left])
	f.left -= n
	f.lost += bytes.Count(p[n:], []byte("\n"))
	if err == nil {
		err = &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return n, err
}

// TestRunStopsWhenARecordCannotBeWritten: a full disk (a tmpfs of 512 KiB,
// where the test may mount one, and a file that fails after 100 KB) stops
// the run at the first record it cannot write: no case starts after it,
// the running ones are cancelled, the run's error names every case not
// recorded, none of them is reported finished, and records.jsonl ends on
// a whole line. Before issue 23 the run went on, its lines said PASS, and
// the file was cut mid-line.
func TestRunStopsWhenARecordCannotBeWritten(t *testing.T) {
	const total = 600
	for _, disk := range []string{"tmpfs", "seam"} {
		t.Run(disk, func(t *testing.T) {
			cases := suite(t, fixturetest.LookupScenario(total))
			root := t.TempDir()
			opts := Options{RunID: "full", Concurrency: 2, Share: true, Logs: LogsNone}
			var seam record.File
			switch disk {
			case "tmpfs":
				if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", root).CombinedOutput(); err != nil {
					t.Skipf("no tmpfs here (%v: %s)", err, bytes.TrimSpace(out))
				}
				t.Cleanup(func() { exec.Command("umount", root).Run() })
			case "seam":
				opts.RecordsFile = func(f *os.File) record.File {
					seam = &failingFile{File: f, left: 100_000}
					return seam
				}
			}
			opts.Dir = filepath.Join(root, "full")
			var reported []string
			opts.OnCase = func(rec *record.Record, _ Result) { reported = append(reported, rec.CaseID) }
			res, err := Run(context.Background(), cases, opts)
			if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "records.jsonl: ") || !strings.Contains(err.Error(), "the run stopped") {
				t.Fatalf("Run: %v; want the full disk, and that the run stopped", err)
			}
			if len(res.NotRecorded) == 0 || !strings.Contains(err.Error(), strings.Join(res.NotRecorded, ", ")) {
				t.Errorf("the error %q does not name the cases not recorded %q", err, res.NotRecorded)
			}
			// Stopped at once: what is lost is the part of the batch
			// that failed past the full disk (the records of the cases
			// that finished within one group commit, 10 ms) and the cases
			// running then; the rest never started.
			if testing.Verbose() {
				t.Logf("%d recorded, %d not; %v", res.Ran, len(res.NotRecorded), err)
			}
			// How many are lost depends on the machine, not on the run:
			// the cases go on while a commit waits for its turn (a busy
			// machine's sync), and those that finish meanwhile are the
			// next batch, refused. So the bound is that most cases never
			// started, and that every record of the batch that failed
			// (the seam counts them) is said lost.
			if res.Ran+len(res.NotRecorded) > total/2 {
				t.Errorf("%d recorded, %d not, of %d: want the run stopped at the first failure", res.Ran, len(res.NotRecorded), total)
			}
			if f, ok := seam.(*failingFile); ok && (f.lost == 0 || len(res.NotRecorded) < f.lost) {
				t.Errorf("%d cases said not recorded, %d lines of the batch that failed not written: want them all said", len(res.NotRecorded), f.lost)
			}
			if !slices.Equal(reported, caseIDsIn(t, opts.Dir)) || len(reported) != res.Ran || res.Ran == 0 {
				t.Errorf("reported finished %d cases, the file holds %d, Ran %d: want the same cases", len(reported), len(caseIDsIn(t, opts.Dir)), res.Ran)
			}
			data, err := os.ReadFile(filepath.Join(opts.Dir, record.RecordsFile))
			if err != nil {
				t.Fatal(err)
			}
			if len(data) == 0 || data[len(data)-1] != '\n' {
				t.Errorf("records.jsonl (%d bytes) does not end on a whole line", len(data))
			}
			for _, id := range res.NotRecorded {
				if bytes.Contains(data, []byte(`"case_id":"`+id+`"`)) {
					t.Errorf("%s is said not recorded, and is in the file", id)
				}
			}
			// Every reader calls the run incomplete (on the tmpfs run.json
			// may not fit either).
			if disk == "seam" {
				run, err := record.ReadRun(opts.Dir)
				if err != nil {
					t.Fatal(err)
				}
				want := fmt.Sprintf("%d of %d cases recorded; the run stopped: %d records could not be written", res.Ran, total, len(res.NotRecorded))
				if len(res.NotRecorded) == 1 {
					want = strings.Replace(want, "records could", "record could", 1)
				}
				if got := record.Incomplete(run.Info, len(run.Records)); got != want {
					t.Errorf("the run reads as %q, want %q", got, want)
				}
			}
		})
	}
}

// caseIDsIn returns the case IDs of a run's records, in file order, and
// fails on any warning: the file must read whole.
func caseIDsIn(t *testing.T, dir string) []string {
	t.Helper()
	run, err := record.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Warnings) > 0 {
		t.Errorf("reading the records: %q", run.Warnings)
	}
	ids := make([]string, len(run.Records))
	for i, r := range run.Records {
		ids[i] = r.CaseID
	}
	return ids
}
