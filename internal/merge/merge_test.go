package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/record"
)

var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// shardRun describes a shard's run folder for writeShard.
type shardRun struct {
	shard   record.Shard
	suite   string
	version string
	cases   []string // case IDs recorded, with their log files
	planned int      // cases set out to run (default: len(cases))
	start   time.Duration
	// interrupted marks the run as interrupted; killed leaves finished unset.
	interrupted, killed bool
}

// writeShard writes a shard's run folder as hosteval run does, with a log
// per case named as the runner names it (index: its place in ids).
func writeShard(t *testing.T, root string, s shardRun, ids []string) string {
	t.Helper()
	if s.suite == "" {
		s.suite = "sha256:suite"
	}
	if s.version == "" {
		s.version = "1.0.0"
	}
	if s.planned == 0 {
		s.planned = len(s.cases)
	}
	runID := "shard" + strings.ReplaceAll(s.shard.String(), "/", "of")
	dir := filepath.Join(root, runID)
	if err := os.MkdirAll(filepath.Join(dir, "cases"), 0o755); err != nil {
		t.Fatal(err)
	}
	info := record.RunInfo{RunID: runID, Started: t0.Add(s.start), Version: s.version, Suite: s.suite, Cases: s.planned, Shard: s.shard, Interrupted: s.interrupted}
	if !s.killed {
		info.Finished = t0.Add(s.start + time.Minute)
	}
	if err := record.WriteRunInfo(dir, info); err != nil {
		t.Fatal(err)
	}
	var lines []byte
	for i, id := range s.cases {
		idx := slices.Index(ids, id)
		log := "cases/" + stem(idx) + ".jsonl"
		if err := os.WriteFile(filepath.Join(dir, log), []byte(`{"case":"`+id+`"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		status := record.StatusPass
		if strings.HasPrefix(id, "fail") {
			status = record.StatusFail
		}
		rec := record.Record{Schema: 1, RunID: runID, CaseID: id, Scenario: strings.Split(id, "#")[0], Model: "scripted", Status: status,
			Started: t0.Add(s.start + time.Duration(i)*time.Second), MS: 10, Logs: map[string]string{"log": log}}
		data, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(append(lines, data...), '\n')
	}
	for name, data := range map[string][]byte{
		record.RecordsFile:     lines,
		"shared-servers.jsonl": []byte(`{"shard":"` + s.shard.String() + `"}` + "\n"),
		"summary.json":         []byte(`{"stale":true}`),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// stem names a case's files as the runner does: its number in the suite.
func stem(idx int) string { return fmt.Sprintf("%04d-case", idx+1) }

var suiteIDs = []string{"lookup#0", "lookup#1", "fail#0", "other#0"}

func TestMerge(t *testing.T) {
	root := t.TempDir()
	a := writeShard(t, root, shardRun{shard: record.Shard{K: 1, N: 2}, cases: []string{"lookup#1", "fail#0"}, start: time.Minute}, suiteIDs)
	b := writeShard(t, root, shardRun{shard: record.Shard{K: 2, N: 2}, cases: []string{"lookup#0", "other#0"}, start: 0}, suiteIDs)
	out := filepath.Join(root, "merged", "m1")
	// Given in any order: the shards are listed in shard order.
	res, err := Merge([]string{b + "/", a}, Options{Dir: out, RunID: "m1", Args: []string{"hosteval", "merge"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 4 || res.Passed != 3 || res.Failed != 1 || res.Errors != 0 || res.Info.Interrupted || len(res.Unfinished) != 0 {
		t.Errorf("merged %d records (%d passed, %d failed, %d errors), interrupted %v; want 4 (3, 1, 0), not interrupted", res.Records, res.Passed, res.Failed, res.Errors, res.Info.Interrupted)
	}

	run, err := record.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	want := record.RunInfo{
		RunID: "m1", Started: t0, Finished: t0.Add(2 * time.Minute), Args: []string{"hosteval", "merge"},
		Version: "1.0.0", Suite: "sha256:suite", Cases: 4,
		Shards: []record.ShardRun{
			{Shard: record.Shard{K: 1, N: 2}, RunID: "shard1of2", Dir: a, Started: t0.Add(time.Minute), Finished: t0.Add(2 * time.Minute), Cases: 2, Records: 2},
			{Shard: record.Shard{K: 2, N: 2}, RunID: "shard2of2", Dir: b, Started: t0, Finished: t0.Add(time.Minute), Cases: 2, Records: 2},
		},
	}
	if diff := cmp.Diff(want, *run.Info); diff != "" {
		t.Errorf("run.json (-want +got):\n%s", diff)
	}
	var ids []string
	for _, rec := range run.Records {
		ids = append(ids, rec.CaseID)
		if rec.RunID != "m1" {
			t.Errorf("case %s: run_id %q, want the merged run's, m1", rec.CaseID, rec.RunID)
		}
		data, err := os.ReadFile(filepath.Join(out, rec.Logs["log"]))
		if err != nil || string(data) != `{"case":"`+rec.CaseID+`"}`+"\n" {
			t.Errorf("case %s: log %s = %q, %v; want its own log", rec.CaseID, rec.Logs["log"], data, err)
		}
	}
	// As they finished.
	if want := []string{"lookup#0", "other#0", "lookup#1", "fail#0"}; !slices.Equal(ids, want) {
		t.Errorf("records %q, want %q", ids, want)
	}
	for k, want := range map[string]string{"shards/1-of-2/shared-servers.jsonl": `"1/2"`, "shards/2-of-2/run.json": `"shard2of2"`} {
		data, err := os.ReadFile(filepath.Join(out, k))
		if err != nil || !strings.Contains(string(data), want) {
			t.Errorf("%s = %q, %v; want the shard's own, with %s", k, data, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a shard's summary.json was carried over (%v): reports are rebuilt", err)
	}
}

// A shard that did not finish makes the merged run interrupted, and says so.
func TestMergeUnfinished(t *testing.T) {
	tests := []struct {
		name string
		s    shardRun
	}{
		{"interrupted", shardRun{cases: []string{"other#0"}, planned: 2, interrupted: true}},
		{"killed", shardRun{cases: []string{"other#0", "fail#0"}, killed: true}},
		{"records lost", shardRun{cases: []string{"other#0"}, planned: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			a := writeShard(t, root, shardRun{shard: record.Shard{K: 1, N: 2}, cases: []string{"lookup#0", "lookup#1"}}, suiteIDs)
			tt.s.shard = record.Shard{K: 2, N: 2}
			b := writeShard(t, root, tt.s, suiteIDs)
			res, err := Merge([]string{a, b}, Options{Dir: filepath.Join(root, "m"), RunID: "m"})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Info.Interrupted || len(res.Unfinished) != 1 || res.Unfinished[0].Shard.K != 2 {
				t.Errorf("interrupted %v, unfinished %v; want interrupted, shard 2/2 unfinished", res.Info.Interrupted, res.Unfinished)
			}
		})
	}
}

func TestMergeRefuses(t *testing.T) {
	one := func(k, n int, cases ...string) shardRun {
		return shardRun{shard: record.Shard{K: k, N: n}, cases: cases}
	}
	tests := []struct {
		name    string
		shards  []shardRun
		partial bool
		extra   func(root string) []string // more folders to give
		want    []string                   // substrings of the problems, in order
	}{
		{"another suite", []shardRun{one(1, 2, "lookup#0"), {shard: record.Shard{K: 2, N: 2}, cases: []string{"lookup#1"}, suite: "sha256:other"}}, false, nil,
			[]string{"ran suite sha256:other but", "shards of different suites"}},
		{"another version", []shardRun{one(1, 2, "lookup#0"), {shard: record.Shard{K: 2, N: 2}, cases: []string{"lookup#1"}, version: "1.1.0"}}, false, nil,
			[]string{"ran hosteval 1.1.0 but", "ran hosteval 1.0.0"}},
		{"another shard count", []shardRun{one(1, 2, "lookup#0"), one(2, 3, "lookup#1")}, false, nil,
			[]string{"is shard 2/3 but", "is shard 1/2"}},
		{"a shard twice", []shardRun{one(1, 3, "lookup#0"), one(1, 3, "lookup#1"), one(3, 3, "fail#0")}, false, nil,
			[]string{"shard 1/3 is given twice", "missing shard 2/3: give every shard's run folder, or -partial"}},
		{"missing shards", []shardRun{one(2, 4, "lookup#0")}, false, nil,
			[]string{"missing shards 1/4, 3/4, 4/4"}},
		{"a case in two shards", []shardRun{one(1, 2, "lookup#0", "lookup#1"), one(2, 2, "lookup#1")}, false, nil,
			[]string{"case lookup#1 is in"}},
		{"a case in two shards, partial", []shardRun{one(1, 3, "lookup#0", "lookup#1"), one(2, 3, "lookup#1")}, true, nil,
			[]string{"case lookup#1 is in"}},
		{"not a shard", []shardRun{one(1, 1, "lookup#0")}, false, func(root string) []string {
			dir := filepath.Join(root, "whole")
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, record.RecordsFile), nil, 0o644)
			record.WriteRunInfo(dir, record.RunInfo{RunID: "whole", Suite: "sha256:suite"})
			return []string{dir}
		}, []string{"whole is not a shard: it ran the whole suite"}},
		{"not a run folder", []shardRun{one(1, 1, "lookup#0")}, false, func(root string) []string {
			return []string{filepath.Join(root, "nowhere")}
		}, []string{"nowhere is not a run folder (no records.jsonl)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			var dirs []string
			for i, s := range tt.shards {
				dirs = append(dirs, writeShard(t, filepath.Join(root, string(rune('a'+i))), s, suiteIDs))
			}
			if tt.extra != nil {
				dirs = append(dirs, tt.extra(root)...)
			}
			out := filepath.Join(root, "merged")
			_, err := Merge(dirs, Options{Dir: out, RunID: "m", Partial: tt.partial})
			var refused *Refusal
			if !errors.As(err, &refused) {
				t.Fatalf("Merge: %v, want a refusal", err)
			}
			text := strings.Join(refused.Problems, "\n")
			rest := text
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("problems:\n%s\nwant %q (in order: %q)", text, w, tt.want)
				}
				rest = rest[i+len(w):]
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused merge wrote %s (%v)", out, err)
			}
		})
	}
}

// -partial merges the shards there are and lists those missing.
func TestMergePartial(t *testing.T) {
	root := t.TempDir()
	a := writeShard(t, root, shardRun{shard: record.Shard{K: 2, N: 3}, cases: []string{"lookup#0"}}, suiteIDs)
	res, err := Merge([]string{a}, Options{Dir: filepath.Join(root, "m"), RunID: "m", Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []record.Shard{{K: 1, N: 3}, {K: 3, N: 3}}
	if !slices.Equal(res.Info.MissingShards, want) || res.Records != 1 {
		t.Errorf("missing %v, %d records; want %v, 1", res.Info.MissingShards, res.Records, want)
	}
}

// A merged run folder is never written over.
func TestMergeNeverOverwrites(t *testing.T) {
	root := t.TempDir()
	a := writeShard(t, root, shardRun{shard: record.Shard{K: 1, N: 1}, cases: []string{"lookup#0"}}, suiteIDs)
	out := filepath.Join(root, "m")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Merge([]string{a}, Options{Dir: out, RunID: "m"})
	var refused *Refusal
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "exists") {
		t.Errorf("Merge into an existing folder: %v, want a refusal saying it exists", err)
	}
}
