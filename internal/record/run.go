package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// File names inside a run folder.
const (
	RecordsFile = "records.jsonl"
	RunInfoFile = "run.json"
)

// A run folder holds records.jsonl (one [Record] per finished case,
// appended by a [Writer], read back by a [Reader] or [ReadRun]) and
// run.json ([RunInfo]). The reports beside them are rebuilt from these two
// files alone.

// RunInfo is run.json: what the runner knows about a run as a whole. The
// runner writes it when the run starts and again when it ends, so a run that
// was killed has Finished unset; one stopped by Ctrl-C has Interrupted set.
type RunInfo struct {
	RunID    string    `json:"run_id"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	// Args are the command-line arguments of the run, for reproducing it.
	Args        []string `json:"args,omitempty"`
	Version     string   `json:"hosteval_version,omitempty"`
	Interrupted bool     `json:"interrupted"`
	// Cache is what the response cache did (absent when it was off);
	// Endpoints what each model endpoint went through. Both are written
	// when the run ends.
	Cache     *CacheStats     `json:"cache,omitempty"`
	Endpoints []EndpointStats `json:"endpoints,omitempty"`
	// Suite identifies what the run set out to run: a hash of the files
	// the suite was read from and of its expanded case IDs. The shards of
	// one suite share it, and merge refuses shards whose Suite differs.
	Suite string `json:"suite,omitempty"`
	// Texts are the texts the records' settings name by [DescriptionHash]
	// (the tool descriptions and system prompts the scenarios gave), by
	// hash: written once per run rather than in every record, so that a
	// report can show what an A/B variant changed.
	Texts map[string]string `json:"texts,omitempty"`
	// Cases is how many cases the run set out to run: its shard's, when
	// it ran one.
	Cases int `json:"cases,omitempty"`
	// Shard is the slice of the suite the run ran (run -shard K/N); absent
	// for the whole suite.
	Shard Shard `json:"shard,omitzero"`
	// Shards are the shard runs a merged run was built from, in shard
	// order; MissingShards those a partial merge did without.
	Shards        []ShardRun `json:"shards,omitempty"`
	MissingShards []Shard    `json:"missing_shards,omitempty"`
	// NotRecorded are the cases whose records could not be written (a
	// full disk): the run stopped at the first. When the disk is full,
	// run.json may not be written either.
	NotRecorded []string `json:"not_recorded,omitempty"`
	// Process is the process that writes the run, so that a reader can
	// tell a run still running from one whose process died (Incomplete).
	Process *RunProcess `json:"process,omitempty"`
	// Lint is what run -lint (or -pins) found in the servers' catalogs
	// before the cases ran; absent when the run did not lint.
	Lint *LintResult `json:"lint,omitempty"`
}

// LintResult is a lint of the run's servers (internal/lint's report, as
// run.json keeps it): the findings that remain and those suppressed.
type LintResult struct {
	// FailOn is the least severity that fails the run; Failed says
	// whether a finding at or above it remains.
	FailOn string `json:"fail_on"`
	Failed bool   `json:"failed"`
	// Servers are the servers linted, by name, in the order first used.
	Servers []string `json:"servers"`
	// Unreached are the servers the lint could not list (they did not
	// start or connect in the preflight): not linted, each with why.
	Unreached []LintUnreached `json:"unreached,omitempty"`
	// Pins is the lock the catalogs were compared with (run -pins).
	Pins       string        `json:"pins,omitempty"`
	Findings   []LintFinding `json:"findings"`
	Suppressed []LintFinding `json:"suppressed,omitempty"`
}

// LintUnreached is a server a lint could not list, and why.
type LintUnreached struct {
	Server string `json:"server"`
	Error  string `json:"error"`
}

// LintFinding is one finding of a lint: the rule, its severity and its
// place (server, tool, field, JSON pointer).
type LintFinding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Server   string `json:"server"`
	Tool     string `json:"tool,omitempty"`
	Field    string `json:"field"`
	Pointer  string `json:"pointer"`
	// Text is the offending text, invisible characters shown as <U+XXXX>.
	Text    string `json:"text,omitempty"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
	// Diff is what changed since the catalog was pinned (pin-changed).
	Diff []string `json:"diff,omitempty"`
	// Reason is a suppressed finding's suppression's reason.
	Reason string `json:"reason,omitempty"`
}

// Run is the content of one run folder.
type Run struct {
	Dir string
	// Info is nil when the folder has no usable run.json.
	Info    *RunInfo
	Records []Record
	// Warnings say what was skipped while reading (a truncated last line, a
	// malformed line, a case recorded twice). They never stop a report.
	Warnings []string
}

// ID names the run: run.json's run_id, else the records' run_id, else the
// folder's base name.
func (r *Run) ID() string {
	if r.Info != nil && r.Info.RunID != "" {
		return r.Info.RunID
	}
	for _, rec := range r.Records {
		if rec.RunID != "" {
			return rec.RunID
		}
	}
	return filepath.Base(r.Dir)
}

// ReadRun reads a run folder: records.jsonl (required) and run.json
// (optional). It works on a run that was interrupted: a last line cut short
// by a crash is skipped with a warning. Within the run a case ID recorded
// twice keeps its last record, with a warning. A large run is better read
// with [Scan], which keeps no record.
func ReadRun(dir string) (*Run, error) {
	var (
		records []Record
		dups    []string
		index   = make(map[string]int)
	)
	path := filepath.Join(dir, RecordsFile)
	run, err := Scan(dir, func(rec *Record, line int) error {
		if i, dup := index[rec.CaseID]; dup && rec.CaseID != "" {
			dups = append(dups, DuplicateWarning(path, line, rec.CaseID))
			records[i] = *rec
			return nil
		}
		index[rec.CaseID] = len(records)
		records = append(records, *rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	run.Records = records
	run.Warnings = append(run.Warnings, dups...)
	return run, nil
}

// DuplicateWarning says that the record at path:line is of a case recorded
// before it, and is the one used.
func DuplicateWarning(path string, line int, caseID string) string {
	return fmt.Sprintf("%s:%d: case %q recorded again; the later record is used", path, line, caseID)
}

// ReadRunInfo reads dir's run.json; an error wraps fs.ErrNotExist when the
// run has none.
func ReadRunInfo(dir string) (*RunInfo, error) {
	return readRunInfo(filepath.Join(dir, RunInfoFile))
}

func readRunInfo(path string) (*RunInfo, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var info RunInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return nil, fmt.Errorf("%s: ignored: %w", path, err)
	}
	return &info, nil
}

// WriteRunInfo writes run.json into dir, replacing it atomically so that a
// reader never sees half of it.
func WriteRunInfo(dir string, info RunInfo) error {
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return fmt.Errorf("write run info: %w", err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, RunInfoFile), append(data, '\n')); err != nil {
		return fmt.Errorf("write run info: %w", err)
	}
	return nil
}

// Reader reads records.jsonl one record at a time, so that a large run need
// not be held in memory twice.
//
// A line that does not decode is skipped and reported by Warnings: the last
// line of a run that crashed is usually cut short, and one bad line must not
// cost the whole report. A record of a newer schema than this program knows
// is an error, since its fields may mean something else.
type Reader struct {
	name     string
	r        *bufio.Reader
	line     int
	warnings []string
}

// NewReader returns a Reader of r; name (usually the file's path) prefixes
// warnings and errors.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{name: name, r: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next record, or io.EOF after the last one.
func (r *Reader) Next() (Record, error) {
	for {
		line, complete, err := r.readLine()
		if err != nil {
			return Record{}, err
		}
		rec, ok, warning, err := decodeLine(r.name, r.line, line, complete)
		switch {
		case err != nil:
			return Record{}, err
		case warning != "":
			r.warnings = append(r.warnings, warning)
		case ok:
			return rec, nil
		}
	}
}

// readLine returns the next line and whether it ended in a newline (a
// line cut short by a crash does not), or io.EOF.
func (r *Reader) readLine() (line []byte, complete bool, err error) {
	// ReadBytes, not a Scanner: a record with large arguments can exceed
	// any fixed token size.
	line, err = r.r.ReadBytes('\n')
	if len(line) == 0 && err != nil {
		if errors.Is(err, io.EOF) {
			return nil, false, io.EOF
		}
		return nil, false, fmt.Errorf("%s: %w", r.name, err)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, fmt.Errorf("%s:%d: %w", r.name, r.line+1, err)
	}
	r.line++
	return line, line[len(line)-1] == '\n', nil
}

// decodeLine decodes line number num of the file name. A blank line gives
// nothing; one that does not decode, a warning; a record of a newer schema
// than this program knows, an error, since its fields may mean something
// else.
func decodeLine(name string, num int, line []byte, complete bool) (rec Record, ok bool, warning string, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Record{}, false, "", nil
	}
	if derr := json.Unmarshal(line, &rec); derr != nil {
		if !complete {
			return Record{}, false, fmt.Sprintf("%s:%d: skipped a truncated last line (%d bytes): %v", name, num, len(line), derr), nil
		}
		return Record{}, false, fmt.Sprintf("%s:%d: skipped a malformed line: %v", name, num, derr), nil
	}
	if rec.Schema > SchemaVersion {
		return Record{}, false, "", fmt.Errorf("%s:%d: record schema %d is newer than this program reads (%d)", name, num, rec.Schema, SchemaVersion)
	}
	return rec, true, "", nil
}

// Warnings lists the lines skipped so far.
func (r *Reader) Warnings() []string { return r.warnings }

// Writer appends records to records.jsonl, one line per record, and syncs
// the file after each so that a finished case survives a crash of the run.
// It is safe for concurrent use.
//
// Records that finish together share one fsync (a group commit): a record
// is appended at once, and Write returns when a sync that began after the
// append has finished. Syncing once per record under a lock made every case
// of a fast run wait in line for the disk.
//
// A write that fails (a full disk) is taken back: the file is cut to the
// end of the last whole record before it, so that it never ends inside a
// line, and the Writer writes nothing more. The error is a *NotWritten
// naming the cases whose records are not in the file, then and after.
type Writer struct {
	mu   sync.Mutex
	cond *sync.Cond // signalled when a sync ends
	f    File
	// written counts lines appended; synced how many of them a finished
	// sync covers; syncing is set while a sync runs (outside mu).
	written, synced int
	syncing         bool
	// size is the file's length after the last write, syncedSize after
	// the last sync; failed is the first failure, after which nothing
	// more is written.
	size, syncedSize int64
	failed           error
}

// File is what a Writer writes records to: the records file, or, in a
// test, a wrapper of it that fails as a full disk does.
type File interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// NotWritten is the error of records that are not in the file: the write
// failed (Err), or an earlier one did.
type NotWritten struct {
	Cases []string // the case IDs
	Err   error
}

func (e *NotWritten) Error() string {
	if len(e.Cases) == 1 {
		return fmt.Sprintf("record of %s not written: %v", e.Cases[0], e.Err)
	}
	if len(e.Cases) == 1 {
		return fmt.Sprintf("1 record not written: %v", e.Err)
	}
	return fmt.Sprintf("%d records not written: %v", len(e.Cases), e.Err)
}

func (e *NotWritten) Unwrap() error { return e.Err }

// OpenWriter opens path for appending records, creating it if needed. When
// the file ends in a partial line (a crash mid-write), a newline is written
// first, so that the partial line is skipped by readers and the next record
// stays whole.
func OpenWriter(path string) (*Writer, error) { return OpenWriterOn(path, nil) }

// OpenWriterOn is OpenWriter writing through wrap(file) (nil: the file
// itself): the seam of the tests of a full disk.
func OpenWriterOn(path string, wrap func(*os.File) File) (*Writer, error) {
	// Read and write: the last byte is read to find a partial line.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open records: %w", err)
	}
	if err := terminateLastLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("open records: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open records: %w", err)
	}
	w := &Writer{f: f, size: st.Size(), syncedSize: st.Size()}
	if wrap != nil {
		w.f = wrap(f)
	}
	w.cond = sync.NewCond(&w.mu)
	return w, nil
}

// fail takes back what was written since the last sync, which failed
// with err: the file is cut to the end of the last record synced, and
// nothing more is written. The caller holds mu.
func (w *Writer) fail(cases []string, err error) error {
	w.size = w.syncedSize
	if terr := w.f.Truncate(w.size); terr != nil {
		err = fmt.Errorf("%w (and cutting the file back to its last whole record: %v)", err, terr)
	}
	w.failed = err
	return &NotWritten{Cases: cases, Err: err}
}

func terminateLastLine(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, st.Size()-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	_, err = f.Write([]byte{'\n'})
	return err
}

// Write appends rec as one line and syncs the file. A zero Schema is
// written as [SchemaVersion]; rec itself is not changed.
func (w *Writer) Write(rec *Record) error {
	data, err := marshalLine(rec)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return fmt.Errorf("write record %s: %w", rec.CaseID, os.ErrClosed)
	}
	for w.syncing {
		// A failed sync cuts the file back: no append meanwhile.
		w.cond.Wait()
	}
	if w.failed != nil {
		return &NotWritten{Cases: []string{rec.CaseID}, Err: w.failed}
	}
	// One write call per line: with O_APPEND the line lands whole at the
	// end even if another process appends to the same file.
	if _, err := w.f.Write(data); err != nil {
		return w.fail([]string{rec.CaseID}, fmt.Errorf("write records: %w", err))
	}
	w.size += int64(len(data))
	w.written++
	mine := w.written
	for w.synced < mine {
		if w.syncing {
			w.cond.Wait()
			continue
		}
		if w.failed != nil {
			return &NotWritten{Cases: []string{rec.CaseID}, Err: w.failed}
		}
		// Sync everything appended so far.
		w.syncing = true
		upTo, upToSize, f := w.written, w.size, w.f
		w.mu.Unlock()
		err := f.Sync()
		w.mu.Lock()
		w.syncing = false
		if err == nil {
			w.synced = max(w.synced, upTo)
			w.syncedSize = max(w.syncedSize, upToSize)
		} else {
			// What the sync covered may not be on disk: cut back to the
			// last record synced. The records appended since are lost
			// with it, and their writers told (failed).
			err = w.fail([]string{rec.CaseID}, fmt.Errorf("write records: %w", err))
		}
		w.cond.Broadcast()
		if err != nil {
			return err
		}
	}
	return nil
}

// WriteBatch appends recs, one line each, in one write, and syncs the file
// once: the group commit of a caller that gathers the records of cases
// that finished together (the runner's one writer). A record that does
// not encode is left out and named in the error; the others are written.
// Zero Schemas are written as [SchemaVersion]; recs are not changed.
func (w *Writer) WriteBatch(recs []*Record) error {
	var buf []byte
	var errs []error
	// ends[i] is where the line of lined[i] ends in buf.
	var lined []*Record
	var ends []int
	for _, rec := range recs {
		line, err := marshalLine(rec)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		buf = append(buf, line...)
		lined, ends = append(lined, rec), append(ends, len(buf))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return fmt.Errorf("write %d records: %w", len(recs), os.ErrClosed)
	}
	for w.syncing {
		w.cond.Wait()
	}
	if w.failed != nil {
		return &NotWritten{Cases: caseIDs(recs), Err: w.failed}
	}
	if len(buf) > 0 {
		// One write call: with O_APPEND the lines land whole at the end.
		n, err := w.f.Write(buf)
		if err != nil {
			// A full disk took the first n bytes: the records whose
			// lines are whole in them are kept, if they can be synced.
			kept := 0
			for kept < len(ends) && ends[kept] <= n {
				kept++
			}
			if kept > 0 {
				end := int64(ends[kept-1])
				if terr := w.f.Truncate(w.size + end); terr == nil && w.f.Sync() == nil {
					w.size += end
					w.syncedSize = w.size
				} else {
					kept = 0
				}
			}
			return w.fail(caseIDs(lined[kept:]), fmt.Errorf("write records: %w", err))
		}
		if err := w.f.Sync(); err != nil {
			return w.fail(caseIDs(lined), fmt.Errorf("write records: %w", err))
		}
		w.size += int64(len(buf))
		w.syncedSize = w.size
	}
	return errors.Join(errs...)
}

func caseIDs(recs []*Record) []string {
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.CaseID
	}
	return ids
}

// marshalLine encodes rec as one line of records.jsonl.
func marshalLine(rec *Record) ([]byte, error) {
	if rec.Schema == 0 {
		withSchema := *rec
		withSchema.Schema = SchemaVersion
		rec = &withSchema
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("write record %s: %w", rec.CaseID, err)
	}
	return append(data, '\n'), nil
}

// Close closes the file. Writes after Close fail with [os.ErrClosed].
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.syncing {
		w.cond.Wait()
	}
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	if err != nil {
		return fmt.Errorf("close records: %w", err)
	}
	return nil
}

// WriteFileAtomic writes a file of a run folder whole: to a temporary name
// beside it, synced, then renamed, so that a reader never sees half of it.
func WriteFileAtomic(path string, data []byte) error {
	return writeAtomic(path, true, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteRebuildable writes a file rebuilt from the records (a report) as a
// stream: write writes it through a buffer, and the file appears under
// path, renamed, once write has returned nil. It is not synced, which
// spares a run an fsync per report. A reader never sees half of it; after a crash of the machine
// it may be empty, and `hosteval report` writes it again.
func WriteRebuildable(path string, write func(io.Writer) error) error {
	return writeAtomic(path, false, write)
}

func writeAtomic(path string, sync bool, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	bw := bufio.NewWriterSize(tmp, 64<<10)
	if err := write(bw); err != nil {
		tmp.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return err
	}
	// Sync before the rename, or a crash could leave an empty file under
	// the final name.
	if sync {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
