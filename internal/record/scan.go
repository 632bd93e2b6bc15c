package record

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// Scan reads a run folder as [ReadRun] does, but keeps no record: it hands
// each one to each, in the order of the file, with its line number, and
// returns the Run without Records. Memory stays flat however large the run:
// a report of 100,000 cases holds what it aggregates, not the records.
//
// Decoding is most of what reading a run costs, so lines are decoded on
// every CPU, a few dozen at a time, while each is called on the caller's
// goroutine, one record at a time; rec is the caller's to keep. A case
// recorded twice is handed over twice: the later record is the one to use
// (see [DuplicateWarning]). An error from each stops the scan and is
// returned.
func Scan(dir string, each func(rec *Record, line int) error) (*Run, error) {
	run := &Run{Dir: dir}
	path := filepath.Join(dir, RecordsFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", dir, err)
	}
	defer f.Close()

	records, skipped := 0, 0
	err = decodeParallel(NewReader(f, path), func(rec *Record, line int, warning string) error {
		if warning != "" {
			run.Warnings = append(run.Warnings, warning)
			skipped++
			return nil
		}
		records++
		return each(rec, line)
	})
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", dir, err)
	}
	if records == 0 && skipped > 0 {
		return nil, fmt.Errorf("read run %s: no valid record in %s (%d lines skipped)", dir, RecordsFile, skipped)
	}

	info, err := readRunInfo(filepath.Join(dir, RunInfoFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		// A report from the records alone beats no report.
		run.Warnings = append(run.Warnings, err.Error())
	default:
		run.Info = info
	}
	return run, nil
}

// A scanBatch is a few consecutive lines of records.jsonl, decoded by one
// worker; done is closed once they are.
type scanBatch struct {
	lines    [][]byte
	first    int  // line number of lines[0]
	complete bool // whether the last line ended in a newline
	err      error

	recs     []Record
	ok       []bool
	warnings []string
	derr     error // a record too new: it ends the scan
	done     chan struct{}
}

const (
	scanBatchLines = 32
	scanBatchBytes = 256 << 10
)

// decodeParallel reads lines from rd, decodes them on GOMAXPROCS workers,
// and calls each in line order with a record or a warning. Batches in
// flight are bounded, so memory does not grow with the file.
func decodeParallel(rd *Reader, each func(rec *Record, line int, warning string) error) error {
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *scanBatch, workers)
	ordered := make(chan *scanBatch, 2*workers)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(work)
		defer close(ordered)
		for {
			b := readBatch(rd)
			select {
			case ordered <- b:
			case <-quit:
				return
			}
			if b.err != nil || len(b.lines) == 0 {
				close(b.done)
				return
			}
			select {
			case work <- b:
			case <-quit:
				close(b.done)
				return
			}
		}
	})
	for range workers {
		wg.Go(func() {
			for b := range work {
				b.decode(rd.name)
			}
		})
	}
	defer wg.Wait()
	defer close(quit)
	for b := range ordered {
		<-b.done
		if b.err != nil {
			if errors.Is(b.err, io.EOF) {
				return nil
			}
			return b.err
		}
		for i := range b.lines {
			switch {
			case b.warnings[i] != "":
				if err := each(nil, b.first+i, b.warnings[i]); err != nil {
					return err
				}
			case b.ok[i]:
				if err := each(&b.recs[i], b.first+i, ""); err != nil {
					return err
				}
			}
		}
		if b.derr != nil {
			return b.derr
		}
	}
	return nil
}

// readBatch reads the next lines; a batch with err set (io.EOF at the end)
// ends the scan after its lines.
func readBatch(rd *Reader) *scanBatch {
	b := &scanBatch{first: rd.line + 1, done: make(chan struct{})}
	size := 0
	for len(b.lines) < scanBatchLines && size < scanBatchBytes {
		line, complete, err := rd.readLine()
		if err != nil {
			if len(b.lines) == 0 {
				b.err = err
			}
			// The next batch reports the error (or io.EOF) again.
			break
		}
		b.lines, b.complete = append(b.lines, line), complete
		size += len(line)
	}
	return b
}

func (b *scanBatch) decode(name string) {
	defer close(b.done)
	b.recs = make([]Record, len(b.lines))
	b.ok = make([]bool, len(b.lines))
	b.warnings = make([]string, len(b.lines))
	for i, line := range b.lines {
		complete := b.complete || i < len(b.lines)-1
		rec, ok, warning, err := decodeLine(name, b.first+i, line, complete)
		if err != nil {
			// Later lines of the batch are not handed over.
			b.lines, b.derr = b.lines[:i], err
			return
		}
		b.recs[i], b.ok[i], b.warnings[i] = rec, ok, warning
	}
}
