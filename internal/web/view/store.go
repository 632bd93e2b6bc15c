package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/report"
)

// store is what the pages know of the results folder: the runs found in
// it, each read as its records are appended. Every file is read through
// an os.Root of the folder, so that nothing outside it is ever opened, a
// symbolic link that leads out included.
type store struct {
	root *os.Root
	name string // the folder's base name, the key of a folder that is a run itself
	keep int    // runs whose records stay in memory

	mu     sync.Mutex
	runs   map[string]*runEntry
	loaded []string // keys of runs with records in memory, oldest use first
}

// runEntry is one run folder. Its records are read incrementally: only
// the bytes appended since the last look, and only whole lines, so that a
// run being written can be watched, and a line cut short by a crash is
// reported, not misread.
type runEntry struct {
	key  string // the URL name: the folder's path under the results folder
	path string // the folder, relative to the root ("." for the root itself)

	mu       sync.Mutex
	info     *record.RunInfo
	infoMod  time.Time
	recMod   time.Time
	offset   int64 // bytes of records.jsonl read, up to the end of a whole line
	tail     int   // bytes after the last newline: a line not yet whole
	lines    int
	records  []record.Record // nil when not loaded
	index    map[string]int
	warnings []string
	summary  *report.Summary // nil when stale
	gates    []report.GateResult
	gatesMod time.Time
	ov       overview
	changed  time.Time // when the folder last grew
	seen     [2]int64  // what poll saw of records.jsonl and run.json
}

// overview is what the runs page shows of a run, kept for every run.
type overview struct {
	Key, ID           string
	Started, Finished time.Time
	Interrupted       bool
	Args              string
	Totals            report.Totals
	Suite             string
	// Loaded is set once the figures were read.
	Loaded bool
	Err    string
}

// snapshot is a run as one page sees it: what was read when it asked.
// Records are only ever appended or replaced by a new slice, never changed
// in place, so a snapshot stays true while the run grows.
type snapshot struct {
	key      string
	info     *record.RunInfo
	records  []record.Record
	warnings []string
	summary  *report.Summary
	gates    []report.GateResult
	live     bool
}

func (s *snapshot) id() string {
	r := record.Run{Info: s.info, Records: s.records, Dir: s.key}
	return r.ID()
}

// newStore opens the results folder dir.
func newStore(dir string, keep int) (*store, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	name := path.Base(strings.TrimRight(strings.ReplaceAll(dir, `\`, "/"), "/"))
	if abs, err := absBase(dir); err == nil {
		name = abs
	}
	return &store{root: root, name: name, keep: max(keep, 1), runs: map[string]*runEntry{}}, nil
}

func (s *store) close() error { return s.root.Close() }

// maxDepth is how deep under the results folder runs are looked for:
// results/<run>, and results/<group>/<run> (shards, a CI's folders).
const maxDepth = 2

// scan finds the run folders (a folder with records.jsonl) under the
// root, adds the new ones and forgets the ones that went. It returns the
// keys of the runs added.
func (s *store) scan() []string {
	found := map[string]string{} // key -> path
	if isRun(s.root, ".") {
		found[s.name] = "."
	} else {
		var walk func(dir string, depth int)
		walk = func(dir string, depth int) {
			entries, err := fs.ReadDir(s.root.FS(), dir)
			if err != nil {
				return
			}
			for _, e := range entries {
				p := path.Join(dir, e.Name())
				if strings.HasPrefix(e.Name(), ".") || !isDir(s.root, p) {
					continue
				}
				if isRun(s.root, p) {
					found[p] = p
				} else if depth < maxDepth {
					walk(p, depth+1)
				}
			}
		}
		walk(".", 1)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var added []string
	for key, p := range found {
		if _, ok := s.runs[key]; !ok {
			s.runs[key] = &runEntry{key: key, path: p, ov: overview{Key: key, ID: path.Base(p)}}
			added = append(added, key)
		}
	}
	for key := range s.runs {
		if _, ok := found[key]; !ok {
			delete(s.runs, key)
			s.loaded = slices.DeleteFunc(s.loaded, func(k string) bool { return k == key })
		}
	}
	sort.Strings(added)
	return added
}

func isDir(root *os.Root, p string) bool {
	st, err := root.Stat(p)
	return err == nil && st.IsDir()
}

func isRun(root *os.Root, dir string) bool {
	st, err := root.Stat(path.Join(dir, record.RecordsFile))
	return err == nil && st.Mode().IsRegular()
}

// entries lists the runs, newest first.
func (s *store) entries() []*runEntry {
	s.mu.Lock()
	list := make([]*runEntry, 0, len(s.runs))
	for _, e := range s.runs {
		list = append(list, e)
	}
	s.mu.Unlock()
	return list
}

// entry is the run with key, or nil.
func (s *store) entry(key string) *runEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[key]
}

// touch marks e's records as in use, and unloads the runs used least
// recently beyond keep (a live run stays: it is read as it grows).
func (s *store) touch(e *runEntry) {
	s.mu.Lock()
	s.loaded = slices.DeleteFunc(s.loaded, func(k string) bool { return k == e.key })
	s.loaded = append(s.loaded, e.key)
	var evict []*runEntry
	for len(s.loaded) > s.keep {
		old := s.runs[s.loaded[0]]
		s.loaded = s.loaded[1:]
		if old != nil && old != e {
			evict = append(evict, old)
		}
	}
	s.mu.Unlock()
	for _, old := range evict {
		old.unload()
	}
}

func (e *runEntry) unload() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.records, e.index, e.summary = nil, nil, nil
	e.offset, e.tail, e.lines, e.recMod = 0, 0, 0, time.Time{}
	e.warnings = nil
}

// load reads what was appended to e since the last look and returns a
// snapshot of it.
func (s *store) load(e *runEntry) (*snapshot, error) {
	s.touch(e)
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.refresh(s.root); err != nil {
		return nil, err
	}
	if e.summary == nil {
		run := &record.Run{Dir: e.path, Info: e.info, Records: e.records, Warnings: e.allWarnings()}
		e.summary = report.Aggregate(run)
		e.ov = overviewOf(e.key, e.info, e.summary)
	}
	return &snapshot{
		key: e.key, info: e.info, records: e.records, warnings: e.allWarnings(),
		summary: e.summary, gates: e.gates, live: e.live(),
	}, nil
}

// live reports whether the run is still being written: no end recorded,
// and its process (run.json's) is alive. A killed run has no end recorded
// either, and must not read as running for ever. Where the process cannot
// be checked (a run of another machine, a run.json from before it was
// recorded), a run that grew lately is taken as running.
func (e *runEntry) live() bool {
	if e.info != nil && (!e.info.Finished.IsZero() || e.info.Interrupted) {
		return false
	}
	if e.info != nil {
		if alive, known := e.info.Process.Alive(); known {
			return alive
		}
	}
	return time.Since(e.changed) < liveWindow
}

// liveWindow is how long after its last change a run without an end, whose
// process cannot be checked, is shown as running rather than as cut short.
const liveWindow = 30 * time.Second

func (e *runEntry) allWarnings() []string {
	w := slices.Clone(e.warnings)
	if e.tail > 0 {
		w = append(w, fmt.Sprintf("%s: the last line (%d bytes) is not whole: a case being written, or a line cut short by a crash", record.RecordsFile, e.tail))
	}
	return w
}

// refresh reads run.json, gates.json and the records appended since the
// last look. It reports whether anything changed. e.mu is held.
func (e *runEntry) refresh(root *os.Root) (bool, error) {
	changed := false
	infoPath := path.Join(e.path, record.RunInfoFile)
	if st, err := root.Stat(infoPath); err == nil && !st.ModTime().Equal(e.infoMod) {
		e.infoMod = st.ModTime()
		if data, err := root.ReadFile(infoPath); err == nil {
			var info record.RunInfo
			if json.Unmarshal(data, &info) == nil {
				e.info = &info
				changed = true
			}
		}
	}
	gatesPath := path.Join(e.path, report.GatesFile)
	if st, err := root.Stat(gatesPath); err == nil && !st.ModTime().Equal(e.gatesMod) {
		e.gatesMod = st.ModTime()
		if f, err := root.Open(gatesPath); err == nil {
			if g, err := report.ReadGatesJSON(f); err == nil {
				e.gates = g
				changed = true
			}
			f.Close()
		}
	}

	recPath := path.Join(e.path, record.RecordsFile)
	st, err := root.Stat(recPath)
	if err != nil {
		return changed, fmt.Errorf("run %s: %w", e.key, err)
	}
	size := st.Size()
	if e.records == nil || size < e.offset+int64(e.tail) {
		// Not loaded, or the file was replaced by a shorter one: from the start.
		e.records, e.index, e.offset, e.tail, e.lines, e.warnings = []record.Record{}, map[string]int{}, 0, 0, 0, nil
		changed = true
	}
	if size == e.offset+int64(e.tail) && st.ModTime().Equal(e.recMod) && !changed {
		return false, nil
	}
	e.recMod = st.ModTime()
	if size > e.offset {
		if err := e.readFrom(root, recPath, size); err != nil {
			return changed, err
		}
		changed = true
	}
	if changed {
		e.summary = nil
		e.changed = time.Now()
	}
	return changed, nil
}

// readFrom reads records.jsonl from e.offset to size: its whole lines
// become records, a last line without its newline is left for later.
func (e *runEntry) readFrom(root *os.Root, name string, size int64) error {
	f, err := root.Open(name)
	if err != nil {
		return fmt.Errorf("run %s: %w", e.key, err)
	}
	defer f.Close()
	if _, err := f.Seek(e.offset, io.SeekStart); err != nil {
		return fmt.Errorf("run %s: %w", e.key, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, size-e.offset))
	if err != nil {
		return fmt.Errorf("run %s: %w", e.key, err)
	}
	whole := bytes.LastIndexByte(data, '\n') + 1
	e.tail = len(data) - whole
	e.offset += int64(whole)
	var added []record.Record
	replaced := false
	for line := range bytes.Lines(data[:whole]) {
		e.lines++
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var rec record.Record
		if err := json.Unmarshal(line, &rec); err != nil {
			e.warnings = append(e.warnings, fmt.Sprintf("%s:%d: skipped a malformed line: %v", record.RecordsFile, e.lines, err))
			continue
		}
		if rec.Schema > record.SchemaVersion {
			e.warnings = append(e.warnings, fmt.Sprintf("%s:%d: skipped a record of schema %d, newer than this program reads (%d)", record.RecordsFile, e.lines, rec.Schema, record.SchemaVersion))
			continue
		}
		if i, dup := e.index[rec.CaseID]; dup && rec.CaseID != "" {
			e.warnings = append(e.warnings, fmt.Sprintf("%s:%d: case %q recorded again; the later record is used", record.RecordsFile, e.lines, rec.CaseID))
			if !replaced {
				// A page may hold the old slice: change a copy.
				e.records = slices.Clone(e.records)
				replaced = true
			}
			if i < len(e.records) {
				e.records[i] = rec
			} else {
				added[i-len(e.records)] = rec
			}
			continue
		}
		e.index[rec.CaseID] = len(e.records) + len(added)
		added = append(added, rec)
	}
	e.records = append(e.records, added...)
	return nil
}

// overviewOf is the runs page's line of a run.
func overviewOf(key string, info *record.RunInfo, s *report.Summary) overview {
	ov := overview{Key: key, ID: s.RunID, Totals: s.Totals, Loaded: true}
	if info != nil {
		ov.Started, ov.Finished, ov.Interrupted = info.Started, info.Finished, info.Interrupted
		ov.Args = strings.Join(info.Args, " ")
	}
	cases := s.Cases()
	if ov.Started.IsZero() {
		for i := range cases {
			if t := cases[i].Started; !t.IsZero() && (ov.Started.IsZero() || t.Before(ov.Started)) {
				ov.Started = t
			}
		}
	}
	var files []string
	// A summary.json of schema 2 names each group's file; one of schema
	// 1, each case's.
	for _, f := range groupAndCaseFiles(s.Groups, cases) {
		if f != "" && !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	ov.Suite = strings.Join(files, " ")
	return ov
}

// overview returns e's line for the runs page. A finished run whose
// summary.json is newer than its records is read from it, without
// loading its records; any other is loaded.
func (s *store) overview(e *runEntry) overview {
	e.mu.Lock()
	if e.ov.Loaded && e.info != nil && (!e.info.Finished.IsZero() || e.info.Interrupted) && e.records == nil {
		ov := e.ov
		e.mu.Unlock()
		return ov
	}
	if e.records == nil {
		if ov, ok := e.fromSummary(s.root); ok {
			e.ov = ov
			e.mu.Unlock()
			return ov
		}
	}
	e.mu.Unlock()
	if _, err := s.load(e); err != nil {
		e.mu.Lock()
		e.ov.Err = err.Error()
		e.mu.Unlock()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ov
}

// fromSummary reads e's overview from summary.json, when the run has
// ended and the summary is not older than the records. e.mu is held.
func (e *runEntry) fromSummary(root *os.Root) (overview, bool) {
	data, err := root.ReadFile(path.Join(e.path, record.RunInfoFile))
	if err != nil {
		return overview{}, false
	}
	var info record.RunInfo
	if json.Unmarshal(data, &info) != nil || (info.Finished.IsZero() && !info.Interrupted) {
		return overview{}, false
	}
	sst, err := root.Stat(path.Join(e.path, report.SummaryFile))
	if err != nil {
		return overview{}, false
	}
	rst, err := root.Stat(path.Join(e.path, record.RecordsFile))
	if err != nil || sst.ModTime().Before(rst.ModTime()) {
		return overview{}, false
	}
	f, err := root.Open(path.Join(e.path, report.SummaryFile))
	if err != nil {
		return overview{}, false
	}
	defer f.Close()
	sum, err := report.ReadSummaryJSON(f)
	if err != nil {
		return overview{}, false
	}
	e.info = &info
	return overviewOf(e.key, &info, sum), true
}

// errNoRun is returned for a run key the store does not know.
var errNoRun = errors.New("no such run")

func absBase(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	return filepath.Base(abs), err
}

// poll looks at e's files without reading them, and reports whether the
// run changed since the last poll: it grew, or its run.json was written.
// A run whose records are in memory reads what was appended.
func (s *store) poll(e *runEntry) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.records != nil {
		changed, err := e.refresh(s.root)
		return changed && err == nil
	}
	var sig [2]int64
	if st, err := s.root.Stat(path.Join(e.path, record.RecordsFile)); err == nil {
		sig[0] = st.Size() ^ st.ModTime().UnixNano()
	}
	if st, err := s.root.Stat(path.Join(e.path, record.RunInfoFile)); err == nil {
		sig[1] = st.ModTime().UnixNano()
	}
	if sig == e.seen {
		return false
	}
	first := e.seen == [2]int64{}
	e.seen = sig
	if !first {
		// Its overview is stale: read it again when asked.
		e.ov.Loaded = false
		e.changed = time.Now()
	}
	return !first
}

// groupAndCaseFiles are the scenario files named by groups and cases.
func groupAndCaseFiles(groups []report.GroupStats, cases []report.CaseStats) []string {
	var files []string
	for i := range groups {
		files = append(files, groups[i].File)
	}
	for i := range cases {
		files = append(files, cases[i].File)
	}
	return files
}
