package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scenario"
)

// writeRun writes a run folder with recs, finished unless interrupted.
func writeRun(t *testing.T, recs []record.Record, interrupted bool) string {
	t.Helper()
	dir := t.TempDir()
	info := record.RunInfo{RunID: "r1", Started: time.Now().UTC(), Cases: len(recs), Interrupted: interrupted}
	if !interrupted {
		info.Finished = time.Now().UTC()
	}
	if err := record.WriteRunInfo(dir, info); err != nil {
		t.Fatal(err)
	}
	w, err := record.OpenWriter(filepath.Join(dir, record.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func rec(id, scenario, variant, status string, servers ...record.Server) record.Record {
	return record.Record{Schema: record.SchemaVersion, RunID: "r1", CaseID: id, Scenario: scenario, Variant: variant, Status: status, Servers: servers}
}

func srv(name, protocol string) record.Server { return record.Server{Name: name, Protocol: protocol} }

const table = header + "ab/terse\tcmdb\t2026-07-28\npinned\tlegacy\t-\nslow\tnpx\t2026-07-28\n"

func TestLoadtest(t *testing.T) {
	good := []record.Record{
		rec("ab/terse#0", "ab", "terse", record.StatusPass, srv("cmdb", "2026-07-28")),
		rec("pinned#0", "pinned", "", record.StatusPass, srv("legacy", "")),
		rec("slow#0", "slow", "", record.StatusPass, srv("npx", "2026-07-28")),
		rec("slow#1", "slow", "", record.StatusPass, srv("npx", "2026-07-28")),
	}
	tests := []struct {
		name        string
		recs        []record.Record
		interrupted bool
		code        int
		stderr      []string
	}{
		{"as on an idle machine", good, false, 0, nil},
		{"a slow starter recorded as legacy", []record.Record{good[0], good[1], good[2],
			rec("slow#1", "slow", "", record.StatusPass, srv("npx", "2025-11-25"))}, false, 1,
			[]string{"case slow#1: server npx got 2025-11-25, another case of it 2026-07-28"}},
		{"every case so", []record.Record{good[0], good[1],
			rec("slow#0", "slow", "", record.StatusPass, srv("npx", "2025-11-25"))}, false, 1,
			[]string{"slow: server npx: got 2025-11-25, want 2026-07-28"}},
		{"a case that erred", []record.Record{good[0], good[1], good[2],
			rec("slow#1", "slow", "", record.StatusError, srv("npx", ""))}, false, 1,
			[]string{"case slow#1: error", "server npx got -, another case of it 2026-07-28"}},
		{"a scenario missing and a new one", []record.Record{good[0], good[1],
			rec("new#0", "new", "", record.StatusPass, srv("cmdb", "2026-07-28"))}, false, 1,
			[]string{"slow: server npx: not in the run", "new: server cmdb: got 2026-07-28, not in"}},
		{"interrupted", good, true, 1, []string{"the run did not finish"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeRun(t, tt.recs, tt.interrupted)
			want := filepath.Join(t.TempDir(), "protocols.txt")
			if err := os.WriteFile(want, []byte(table), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := run([]string{"-run", dir, "-want", want}, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr.String())
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
				}
			}
			if tt.code == 0 && !strings.Contains(stdout.String(), "4 cases passed; 3 connections") {
				t.Errorf("stdout = %q", stdout.String())
			}
		})
	}
}

func TestLoadtestUpdate(t *testing.T) {
	dir := writeRun(t, []record.Record{
		rec("pinned#0", "pinned", "", record.StatusPass, srv("legacy", "")),
		rec("slow#0", "slow", "", record.StatusPass, srv("npx", "2026-07-28")),
		rec("ab/terse#0", "ab", "terse", record.StatusPass, srv("cmdb", "2026-07-28")),
	}, false)
	want := filepath.Join(t.TempDir(), "protocols.txt")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-run", dir, "-want", want, "-update"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != table {
		t.Errorf("table =\n%s\nwant\n%s", got, table)
	}
}

// TestTableCoversTheSuite keeps protocols.txt in step with scenarios/: a
// scenario added without its rows fails here, in go test, and not only
// later in make test-load.
func TestTableCoversTheSuite(t *testing.T) {
	suite, err := scenario.Load("../../scenarios")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := suite.Cases(scenario.CaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, c := range cases {
		name := c.Scenario.Name
		if c.Variant != "" {
			name += "/" + c.Variant
		}
		for _, s := range c.HostOptions().Servers {
			want[name+"\t"+s.Name] = true
		}
	}
	data, err := os.ReadFile("protocols.txt")
	if err != nil {
		t.Fatal(err)
	}
	table := parse(data)
	for k := range want {
		if _, ok := table[k]; !ok {
			t.Errorf("protocols.txt has no row for %q (run the suite on an idle machine, then go run ./tools/loadtest -run DIR -update)", k)
		}
	}
	for k := range table {
		if !want[k] {
			t.Errorf("protocols.txt has a row for %q, which scenarios/ no longer has", k)
		}
	}
}
