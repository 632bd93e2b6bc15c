package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scenario"
)

// idCases makes cases with the given IDs, numbered in order.
func idCases(ids ...string) []*scenario.Case {
	cases := make([]*scenario.Case, len(ids))
	for i, id := range ids {
		cases[i] = &scenario.Case{ID: id, Index: i}
	}
	return cases
}

func caseIDs(cases []*scenario.Case) []string {
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = c.ID
	}
	return ids
}

// Every shard count splits every suite into slices that hold each case
// once, differ in size by one at most, and keep the suite's order.
func TestSelectShardBalanced(t *testing.T) {
	for _, size := range []int{0, 1, 2, 7, 32, 1000} {
		var ids []string
		for i := range size {
			ids = append(ids, fmt.Sprintf("scenario-%d/variant#%d", i/5, i%5))
		}
		cases := idCases(ids...)
		for n := 1; n <= 9; n++ {
			seen := map[string]int{}
			lo, hi := size, 0
			for k := 1; k <= n; k++ {
				got := SelectShard(cases, record.Shard{K: k, N: n})
				lo, hi = min(lo, len(got)), max(hi, len(got))
				if !slices.IsSortedFunc(got, func(a, b *scenario.Case) int { return a.Index - b.Index }) {
					t.Errorf("%d cases, shard %d/%d: not in the suite's order: %v", size, k, n, caseIDs(got))
				}
				for _, c := range got {
					seen[c.ID]++
				}
			}
			if hi-lo > 1 {
				t.Errorf("%d cases in %d shards: sizes from %d to %d, want a difference of one at most", size, n, lo, hi)
			}
			for _, id := range ids {
				if seen[id] != 1 {
					t.Errorf("%d cases in %d shards: case %s is in %d shards, want 1", size, n, id, seen[id])
				}
			}
		}
	}
}

// The slice depends on the case IDs only: these are the shards of this
// suite on every machine, whatever order the cases come in, and a
// change to the algorithm (which would make shards of two hosteval
// versions disagree) fails here.
func TestSelectShardStable(t *testing.T) {
	ids := []string{"lookup#0", "lookup#1", "lookup#2", "lookup#3", "ticket/short#0", "ticket/short#1", "ticket/long#0", "ticket/long#1", "catalog#0", "chaos#0"}
	want := [][]string{
		{"lookup#0", "lookup#3", "ticket/short#1", "ticket/long#0"},
		{"lookup#1", "ticket/short#0", "chaos#0"},
		{"lookup#2", "ticket/long#1", "catalog#0"},
	}
	cases := idCases(ids...)
	reversed := slices.Clone(cases)
	slices.Reverse(reversed)
	for k := 1; k <= 3; k++ {
		got := caseIDs(SelectShard(cases, record.Shard{K: k, N: 3}))
		if !slices.Equal(got, want[k-1]) {
			t.Errorf("shard %d/3 = %q, want %q", k, got, want[k-1])
		}
		// Given in another order, the same cases are picked.
		again := caseIDs(SelectShard(reversed, record.Shard{K: k, N: 3}))
		slices.Sort(again)
		sorted := slices.Sorted(slices.Values(want[k-1]))
		if !slices.Equal(again, sorted) {
			t.Errorf("shard %d/3 of the cases reversed = %q, want %q", k, again, sorted)
		}
	}
	if got := SelectShard(cases, record.Shard{}); len(got) != len(cases) {
		t.Errorf("the zero shard has %d cases, want all %d", len(got), len(cases))
	}
}

// The repeats of one scenario go to different shards.
func TestSelectShardSpreadsRepeats(t *testing.T) {
	var ids []string
	for r := range 8 {
		ids = append(ids, fmt.Sprintf("flaky#%d", r))
	}
	cases := idCases(ids...)
	for k := 1; k <= 4; k++ {
		if got := SelectShard(cases, record.Shard{K: k, N: 4}); len(got) != 2 {
			t.Errorf("shard %d/4 has repeats %q, want 2 of the 8", k, caseIDs(got))
		}
	}
}

// The suite's identity changes with its files' content, its servers
// file, and the cases it expands into; not with loading it again.
func TestSuiteID(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scenarioText := "name: lookup\nservers: [cmdb]\nmodel: {scripted: [{answer: hi}]}\nquestion: hi\n"
	write("servers.yaml", "servers:\n  cmdb:\n    command: "+fixtureBin+"/cmdb\n")
	write("s.yaml", scenarioText)
	id := func(opts scenario.CaseOptions) string {
		t.Helper()
		suite, err := scenario.Load(filepath.Join(dir, "s.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		cases, err := suite.Cases(opts)
		if err != nil {
			t.Fatal(err)
		}
		return SuiteID(suite, cases)
	}
	base := id(scenario.CaseOptions{})
	if again := id(scenario.CaseOptions{}); again != base {
		t.Errorf("loaded again: %s, want %s", again, base)
	}
	if got := id(scenario.CaseOptions{Repeat: 3}); got == base {
		t.Errorf("with -repeat 3: %s, the same as without", got)
	}
	write("s.yaml", scenarioText+"description: changed\n")
	if got := id(scenario.CaseOptions{}); got == base {
		t.Errorf("after the scenario file changed: %s, the same as before", got)
	}
	write("s.yaml", scenarioText)
	write("servers.yaml", "servers:\n  cmdb:\n    command: "+fixtureBin+"/cmdb\n    shareable: true\n")
	if got := id(scenario.CaseOptions{}); got == base {
		t.Errorf("after the servers file changed: %s, the same as before", got)
	}
}

// A shard's run.json says which shard of which suite it ran, and its
// cases' files are numbered as in the whole suite, so that the files of
// all shards can sit in one folder.
func TestRunShard(t *testing.T) {
	testEnv(t)
	cases := suite(t, "name: lookup\nservers: [cmdb]\nrepeat: 4\nmodel: {scripted: [{call: 'cmdb__get_asset {hostname: jump-prod-02}'}, {answer: done}]}\nquestion: who owns jump-prod-02?\n")
	shard := record.Shard{K: 2, N: 2}
	picked := SelectShard(cases, shard)
	dir := filepath.Join(t.TempDir(), "r")
	res, err := Run(t.Context(), picked, Options{Dir: dir, RunID: "r", Suite: "sha256:test", Shard: shard, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 2 || res.Passed != 2 {
		t.Fatalf("ran %d of %d, %d passed; want 2 of 2 passed", res.Ran, res.Total, res.Passed)
	}
	run, err := record.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Info; got.Shard != shard || got.Suite != "sha256:test" || got.Cases != 2 {
		t.Errorf("run.json shard %v suite %q cases %d; want 2/2, sha256:test, 2", got.Shard, got.Suite, got.Cases)
	}
	var want, got []string
	for _, c := range picked {
		want = append(want, fmt.Sprintf("cases/%04d-lookup_%d.jsonl", c.Index+1, c.Repeat))
	}
	for _, rec := range run.Records {
		got = append(got, rec.Logs["log"])
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("logs %q, want %q (numbered as in the whole suite)", got, want)
	}
}
