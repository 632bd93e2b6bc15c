package report

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"

	"github.com/hosteval/hosteval/internal/record"
)

// SharedServersLog is the log of the servers a run shared across cases.
const SharedServersLog = "shared-servers.jsonl"

// maxLogRead bounds what is read of one log file for a transcript.
const maxLogRead = 64 << 20

// RunLogs reads the logs of a run folder's cases for their transcripts.
// Only files under the folder are read, whatever a record says (an
// os.Root holds it), and the shared servers' log is read once for all the
// transcripts made from one RunLogs. A log that cannot be read is a note
// in the transcript, not an error. It is safe for concurrent use.
type RunLogs struct {
	root *os.Root

	once   sync.Once
	shared map[string][]byte // trace_id -> its lines of the shared servers' log
}

// OpenRunLogs opens the run folder dir.
func OpenRunLogs(dir string) (*RunLogs, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("run logs: %w", err)
	}
	return RunLogsOf(root), nil
}

// RunLogsOf reads the run folder root; Close closes it.
func RunLogsOf(root *os.Root) *RunLogs { return &RunLogs{root: root} }

// Close releases the folder.
func (l *RunLogs) Close() error { return l.root.Close() }

// Transcript builds the transcript of rec, one of the run's records.
func (l *RunLogs) Transcript(runID string, rec *record.Record) *Transcript {
	return NewTranscript(runID, rec, l.CaseLogs(rec))
}

// CaseLogs reads the logs of rec: its case log, its lines of the shared
// servers' log, and its wire trace when the run kept one.
func (l *RunLogs) CaseLogs(rec *record.Record) CaseLogs {
	var logs CaseLogs
	fsys := l.root.FS()
	read := func(name string) []byte {
		if name == "" {
			return nil
		}
		name = path.Clean(filepath.ToSlash(name))
		data, err := readLimited(fsys, name)
		if err != nil {
			logs.Notes = append(logs.Notes, fmt.Sprintf("%s: %v", name, err))
		}
		return data
	}
	logs.Log = read(rec.Logs["log"])
	logs.Wire = read(rec.Logs["wire"])
	if rec.Logs["log"] == "" {
		logs.Notes = append(logs.Notes, "the run kept no log of this case (see run -logs)")
	}
	if slices.ContainsFunc(rec.Servers, func(s record.Server) bool { return s.Shared }) {
		l.once.Do(func() { l.shared = indexShared(fsys) })
		for _, id := range traceIDs(rec) {
			logs.Shared = append(logs.Shared, l.shared[id]...)
		}
	}
	return logs
}

// LoadTranscript builds the transcript of rec from the run folder dir.
// To make many, open the folder once with OpenRunLogs.
func LoadTranscript(dir, runID string, rec *record.Record) (*Transcript, error) {
	logs, err := OpenRunLogs(dir)
	if err != nil {
		return nil, fmt.Errorf("transcript of %s: %w", rec.CaseID, err)
	}
	defer logs.Close()
	return logs.Transcript(runID, rec), nil
}

func readLimited(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLogRead))
	if err == nil && len(data) == maxLogRead {
		err = fmt.Errorf("read the first %d MB only", maxLogRead>>20)
	}
	return data, err
}

// traceIDs are the traces of a record's calls and checks, in order.
func traceIDs(rec *record.Record) []string {
	var ids []string
	for _, calls := range [][]record.Call{rec.Calls, rec.Checks} {
		for _, c := range calls {
			if c.TraceID != "" && !slices.Contains(ids, c.TraceID) {
				ids = append(ids, c.TraceID)
			}
		}
	}
	return ids
}

var traceKey = []byte(`"trace_id":"`)

// indexShared reads the shared servers' log and indexes its lines by
// trace_id; lines of no trace (a handshake) are left out.
func indexShared(fsys fs.FS) map[string][]byte {
	index := map[string][]byte{}
	f, err := fsys.Open(SharedServersLog)
	if err != nil {
		return index
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, maxLogRead), 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if i := bytes.Index(line, traceKey); i >= 0 {
			rest := line[i+len(traceKey):]
			if j := bytes.IndexByte(rest, '"'); j > 0 {
				id := string(rest[:j])
				index[id] = append(index[id], line...)
				if line[len(line)-1] != '\n' {
					index[id] = append(index[id], '\n')
				}
			}
		}
		if err != nil {
			// io.EOF, or a read error: what was read is what there is.
			return index
		}
	}
}

// TranscriptWriter writes, under dir/transcripts/, the transcript of each
// case of a run that did not pass (of every case with all) as Markdown and
// as a self-contained HTML page, from the same model, given the records one
// at a time (see ReadEach), so that a run is read once for its reports and
// its transcripts, and never held whole. Close returns the stem of each
// case's files by case ID (Options.Transcripts), so that the reports link
// them. The links inside go to the case logs relatively, so they work from
// a copied run folder, such as a CI artifact, with no server.
type TranscriptWriter struct {
	dir, runID string
	all        bool
	logs       *RunLogs
	stems      map[string]string
	err        error
}

// NewTranscriptWriter writes the transcripts of the run folder dir, whose
// ID is runID (run.json's; "" for the records' own): of every case when
// all is set, else of those that did not pass.
func NewTranscriptWriter(dir, runID string, all bool) *TranscriptWriter {
	return &TranscriptWriter{dir: dir, runID: runID, all: all, stems: map[string]string{}}
}

// Add writes rec's transcript if it is wanted; pos is its place among the
// run's records.
func (w *TranscriptWriter) Add(rec *record.Record, pos int) error {
	if w.err != nil || (!w.all && rec.Status == record.StatusPass) {
		return w.err
	}
	if w.logs == nil {
		logs, err := OpenRunLogs(w.dir)
		if err == nil {
			err = os.MkdirAll(filepath.Join(w.dir, TranscriptsDir), 0o755)
		}
		if err != nil {
			w.err = fmt.Errorf("write transcripts: %w", err)
			return w.err
		}
		w.logs = logs
	}
	stem := TranscriptStem(rec, pos)
	t := w.logs.Transcript(cmp.Or(w.runID, rec.RunID, filepath.Base(w.dir)), rec)
	for _, f := range []struct {
		ext   string
		write func(io.Writer) error
	}{
		{".md", func(w io.Writer) error { return WriteTranscriptMarkdown(w, t, RelativeLogs) }},
		{".html", func(w io.Writer) error { return WriteTranscriptHTML(w, t, RelativeLogs) }},
	} {
		var buf bytes.Buffer
		if err := f.write(&buf); err != nil {
			w.err = err
			return err
		}
		if err := record.WriteFileAtomic(filepath.Join(w.dir, filepath.FromSlash(stem)+f.ext), buf.Bytes()); err != nil {
			w.err = fmt.Errorf("write transcripts: %w", err)
			return w.err
		}
	}
	w.stems[rec.CaseID] = stem
	return nil
}

// Close releases the run folder and returns the stem of each case's
// transcript files by case ID (Options.Transcripts).
func (w *TranscriptWriter) Close() (map[string]string, error) {
	if w.logs != nil {
		w.logs.Close()
	}
	return w.stems, w.err
}
