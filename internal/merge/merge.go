// Package merge combines the run folders of one suite's shards (hosteval
// run -shard K/N on N machines) into one run folder, from which the reports
// are rebuilt as if one machine had run every case. It owns the checks that
// the shards belong together (one suite, one hosteval version, every shard
// once, every case once) and the layout of the merged folder; it reads and
// writes result files only, through internal/record.
package merge

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/record"
)

// Options configure a merge.
type Options struct {
	// Dir is the merged run folder; it must not exist yet.
	Dir   string
	RunID string
	// Args are the merge's command line, kept in run.json.
	Args []string
	// Partial merges without the shards that are missing (they are listed
	// in run.json's missing_shards) instead of refusing.
	Partial bool
}

// Result says what a merge wrote.
type Result struct {
	Info record.RunInfo
	// Records counts the merged cases by status.
	Records, Passed, Failed, Errors int
	// Scenarios are the names of the scenarios with a case in the run.
	Scenarios []string
	// Unfinished names the shards that did not record every case they set
	// out to run (interrupted or killed).
	Unfinished []record.ShardRun
	// Warnings are what reading the shards skipped (see record.Run).
	Warnings []string
}

// Refusal lists every reason the given folders are not the shards of one
// run: a folder that is not a shard's run folder, shards of different
// suites, hosteval versions or shard counts, a shard given twice or
// missing, a case in two shards. Nothing is written when the merge is
// refused.
type Refusal struct {
	Problems []string
}

func (r *Refusal) Error() string {
	return "cannot merge: " + strings.Join(r.Problems, "\n")
}

// File and folder names of a merged run folder besides record's.
const (
	// CasesDir holds every case's log, wire trace and files, under the
	// names the shards gave them (numbered as in the whole suite).
	CasesDir = "cases"
	// ShardsDir holds, per shard, what belongs to the shard as a whole:
	// its run.json and its shared servers' log.
	ShardsDir = "shards"
)

// reportFiles are written from the records by the reports (and rebuilt
// after the merge); a shard's copies are not carried over.
var reportFiles = []string{"summary.json", "junit.xml", "report.md", "report.html", "gates.json", "transcripts"}

type shard struct {
	dir string
	run *record.Run
}

// Merge checks that dirs are the run folders of one suite's shards, then
// writes opts.Dir: every shard's records (run_id set to opts.RunID), a
// run.json for the whole (the earliest start, the latest finish,
// interrupted if any shard was, the shards listed), every case's files
// under the same relative paths, and each shard's own files under
// shards/<K>-of-<N>/. Reports are the caller's to rebuild.
func Merge(dirs []string, opts Options) (*Result, error) {
	if len(dirs) == 0 {
		return nil, &Refusal{Problems: []string{"no shard run folders given"}}
	}
	shards, err := read(dirs)
	if err != nil {
		return nil, err
	}
	missing, err := check(shards, opts.Partial)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(opts.Dir); err == nil {
		return nil, &Refusal{Problems: []string{fmt.Sprintf("%s exists: merge writes a new run folder", opts.Dir)}}
	}
	if err := os.MkdirAll(filepath.Join(opts.Dir, CasesDir), 0o755); err != nil {
		return nil, fmt.Errorf("create merged run folder: %w", err)
	}

	first := shards[0].run.Info
	res := &Result{Info: record.RunInfo{
		RunID: opts.RunID, Args: opts.Args, Version: first.Version, Suite: first.Suite, MissingShards: missing,
	}}
	var recs []record.Record
	for _, sh := range shards {
		info := sh.run.Info
		sr := record.ShardRun{Shard: info.Shard, RunID: sh.run.ID(), Dir: sh.dir, Started: info.Started, Finished: info.Finished,
			Cases: info.Cases, Records: len(sh.run.Records), Interrupted: info.Interrupted,
			Incomplete: record.Incomplete(info, len(sh.run.Records))}
		res.Info.Shards = append(res.Info.Shards, sr)
		res.Info.Cases += info.Cases
		for h, text := range info.Texts {
			if res.Info.Texts == nil {
				res.Info.Texts = map[string]string{}
			}
			res.Info.Texts[h] = text
		}
		res.Info.Cache = res.Info.Cache.Add(info.Cache)
		res.Info.Endpoints = record.AddEndpoints(res.Info.Endpoints, info.Endpoints)
		if res.Info.Started.IsZero() || info.Started.Before(res.Info.Started) {
			res.Info.Started = info.Started
		}
		if info.Finished.After(res.Info.Finished) {
			res.Info.Finished = info.Finished
		}
		if info.Interrupted || info.Finished.IsZero() || sr.Records < sr.Cases || sr.Incomplete != "" {
			res.Info.Interrupted = true
			res.Unfinished = append(res.Unfinished, sr)
		}
		res.Warnings = append(res.Warnings, sh.run.Warnings...)
		recs = append(recs, sh.run.Records...)
		if err := copyFiles(sh, opts.Dir); err != nil {
			return nil, err
		}
	}
	// The order a single machine would have written them in, more or less:
	// as they finished.
	slices.SortStableFunc(recs, func(a, b record.Record) int { return ended(a).Compare(ended(b)) })
	var buf bytes.Buffer
	for i := range recs {
		recs[i].RunID = opts.RunID
		data, err := json.Marshal(&recs[i])
		if err != nil {
			return nil, fmt.Errorf("write merged records: %w", err)
		}
		buf.Write(data)
		buf.WriteByte('\n')
		res.Records++
		if !slices.Contains(res.Scenarios, recs[i].Scenario) {
			res.Scenarios = append(res.Scenarios, recs[i].Scenario)
		}
		switch recs[i].Status {
		case record.StatusPass:
			res.Passed++
		case record.StatusFail:
			res.Failed++
		default:
			res.Errors++
		}
	}
	if err := record.WriteFileAtomic(filepath.Join(opts.Dir, record.RecordsFile), buf.Bytes()); err != nil {
		return nil, fmt.Errorf("write merged records: %w", err)
	}
	if err := record.WriteRunInfo(opts.Dir, res.Info); err != nil {
		return nil, err
	}
	return res, nil
}

// read reads every shard's run folder; a folder that is not a shard's is a
// problem of the refusal.
func read(dirs []string) ([]shard, error) {
	var (
		shards   []shard
		problems []string
	)
	for _, dir := range dirs {
		dir = filepath.Clean(dir)
		if _, err := os.Stat(filepath.Join(dir, record.RecordsFile)); err != nil {
			problems = append(problems, fmt.Sprintf("%s is not a run folder (no %s)", dir, record.RecordsFile))
			continue
		}
		run, err := record.ReadRun(dir)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		switch {
		case run.Info == nil:
			problems = append(problems, fmt.Sprintf("%s has no usable %s, which says which shard it is", dir, record.RunInfoFile))
		case run.Info.Shard.IsZero():
			problems = append(problems, fmt.Sprintf("%s is not a shard: it ran the whole suite (shards come from hosteval run -shard K/N)", dir))
		case run.Info.Suite == "":
			problems = append(problems, fmt.Sprintf("%s does not say which suite it ran (written by an older hosteval?)", dir))
		default:
			shards = append(shards, shard{dir: dir, run: run})
		}
	}
	if len(problems) > 0 {
		return nil, &Refusal{Problems: problems}
	}
	slices.SortStableFunc(shards, func(a, b shard) int { return cmp.Compare(a.run.Info.Shard.K, b.run.Info.Shard.K) })
	return shards, nil
}

// check refuses shards that do not make one run, and returns the shards
// missing (allowed when partial).
func check(shards []shard, partial bool) ([]record.Shard, error) {
	var problems []string
	first := shards[0]
	fi := first.run.Info
	oneN := true
	for _, sh := range shards[1:] {
		info := sh.run.Info
		if info.Shard.N != fi.Shard.N {
			oneN = false
			problems = append(problems, fmt.Sprintf("%s is shard %s but %s is shard %s: the shards of one run split it into as many", sh.dir, info.Shard, first.dir, fi.Shard))
		}
		if info.Suite != fi.Suite {
			problems = append(problems, fmt.Sprintf("%s ran suite %s but %s ran suite %s: shards of different suites (the scenario or servers files, -run, -repeat or -model differ)", sh.dir, info.Suite, first.dir, fi.Suite))
		}
		if info.Version != fi.Version {
			problems = append(problems, fmt.Sprintf("%s ran hosteval %s but %s ran hosteval %s: shards of different hosteval versions", sh.dir, info.Version, first.dir, fi.Version))
		}
	}
	byK := map[int]string{}
	for _, sh := range shards {
		k := sh.run.Info.Shard.K
		if other, ok := byK[k]; ok {
			problems = append(problems, fmt.Sprintf("shard %s is given twice: %s and %s", sh.run.Info.Shard, other, sh.dir))
			continue
		}
		byK[k] = sh.dir
	}
	seen := map[string]string{}
	for _, sh := range shards {
		for _, rec := range sh.run.Records {
			if other, ok := seen[rec.CaseID]; ok && other != sh.dir {
				problems = append(problems, fmt.Sprintf("case %s is in %s and in %s", rec.CaseID, other, sh.dir))
				continue
			}
			seen[rec.CaseID] = sh.dir
		}
	}
	var missing []record.Shard
	if oneN {
		for k := 1; k <= fi.Shard.N; k++ {
			if _, ok := byK[k]; !ok {
				missing = append(missing, record.Shard{K: k, N: fi.Shard.N})
			}
		}
		if len(missing) > 0 && !partial {
			names := make([]string, len(missing))
			for i, m := range missing {
				names[i] = m.String()
			}
			problems = append(problems, fmt.Sprintf("missing %s %s: give every shard's run folder, or -partial to merge without them",
				plural(len(missing), "shard", "shards"), strings.Join(names, ", ")))
		}
	}
	if len(problems) > 0 {
		return nil, &Refusal{Problems: problems}
	}
	return missing, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// copyFiles carries a shard's files into the merged folder: the case files
// (cases/, and any other file a record names) under the same relative
// paths, and the shard's own files under shards/<K>-of-<N>/. Reports and
// records are not copied: they are rebuilt.
func copyFiles(sh shard, out string) error {
	entries, err := os.ReadDir(sh.dir)
	if err != nil {
		return fmt.Errorf("read shard %s: %w", sh.dir, err)
	}
	own := filepath.Join(ShardsDir, fmt.Sprintf("%d-of-%d", sh.run.Info.Shard.K, sh.run.Info.Shard.N))
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == record.RecordsFile || slices.Contains(reportFiles, name):
		case name == CasesDir:
			if err := copyTree(filepath.Join(sh.dir, name), filepath.Join(out, name)); err != nil {
				return err
			}
		default:
			if err := copyTree(filepath.Join(sh.dir, name), filepath.Join(out, own, name)); err != nil {
				return err
			}
		}
	}
	for _, rec := range sh.run.Records {
		for _, rel := range rec.Logs {
			if !filepath.IsLocal(rel) || strings.HasPrefix(filepath.ToSlash(filepath.Clean(rel)), CasesDir+"/") {
				continue
			}
			dst := filepath.Join(out, rel)
			if _, err := os.Stat(dst); err == nil {
				continue
			}
			if err := copyTree(filepath.Join(sh.dir, rel), dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// copyTree copies a file or a folder. A file that is already there is an
// error: two shards never write the same case file (their names carry the
// case's number in the whole suite).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("copy %s: %w", p, err)
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return nil // a case's files may hold a socket or a link: not results
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return copyFile(p, target)
	})
}

// copyFile links src to dst when both are on one file system (a shard's
// files are never written again), and copies it otherwise.
func copyFile(src, dst string) error {
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("copy %s: %s is already there (from another shard)", src, dst)
	}
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}

// ended is when a case ended.
func ended(r record.Record) time.Time {
	return r.Started.Add(time.Duration(r.MS * float64(time.Millisecond)))
}
