package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/record"
)

// The suite split into 4 shards, run one after the other here as on 4
// machines, and merged, gives the run one machine gives: the same exit
// code, summary.json (timings, IDs and the run's own facts aside), and
// per case the same status and expectation verdicts. The suite is the
// default suite's fast files (scenarios/, on the fixture servers) and
// testdata/shards/mixed.yaml (repeats, failures, a case that cannot run).
func TestShardsMergeEqualOneRun(t *testing.T) {
	work := t.TempDir()
	suite := filepath.Join(work, "scenarios")
	if err := os.MkdirAll(suite, 0o755); err != nil {
		t.Fatal(err)
	}
	// scenarios/servers.yaml starts ../bin/<server>.
	if err := os.Symlink(fixtureBin, filepath.Join(work, "bin")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"../../scenarios/servers.yaml", "../../scenarios/ab.yaml", "../../scenarios/rules.yaml",
		"../../scenarios/tickets.yaml", "../../scenarios/versions.yaml", "testdata/shards/mixed.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(suite, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	hosteval := func(args ...string) (int, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(k string) string {
			if k == "CI" {
				return "true"
			}
			return ""
		}}
		code := runEnv(context.Background(), e, args)
		return code, errOut.String()
	}
	code, stderr := hosteval("run", "-concurrency", "2", "-out", work, "-run-id", "single", suite)
	if code != exitInfra {
		t.Fatalf("one run: exit %d, want %d (a case cannot run)\n%s", code, exitInfra, stderr)
	}
	var shards []string
	for k := 1; k <= 4; k++ {
		id := fmt.Sprintf("shard-%d", k)
		if code, stderr := hosteval("run", "-shard", fmt.Sprintf("%d/4", k), "-concurrency", "2", "-out", filepath.Join(work, id), "-run-id", id, suite); code > exitInfra {
			t.Fatalf("shard %d/4: exit %d\n%s", k, code, stderr)
		}
		shards = append(shards, filepath.Join(work, id, id))
	}
	slices.Reverse(shards) // the order given does not matter
	mergeCode, stderr := hosteval(append([]string{"merge", "-out", work, "-run-id", "merged"}, shards...)...)
	if mergeCode != code {
		t.Errorf("merge: exit %d, want %d as the one run\n%s", mergeCode, code, stderr)
	}
	single, merged := filepath.Join(work, "single"), filepath.Join(work, "merged")

	if diff := cmp.Diff(normalisedSummary(t, single), normalisedSummary(t, merged)); diff != "" {
		t.Errorf("summary.json of the merged shards differs from one run's (-one +merged):\n%s", diff)
	}
	one, all := verdicts(t, single), verdicts(t, merged)
	if diff := cmp.Diff(one, all); diff != "" {
		t.Errorf("case verdicts of the merged shards differ from one run's (-one +merged):\n%s", diff)
	}
	// Not vacuous: every kind of verdict is there.
	statuses := map[string]int{}
	for _, v := range one {
		statuses[v.Status]++
	}
	if want := map[string]int{"pass": 26, "fail": 3, "error": 1}; !cmp.Equal(statuses, want) {
		t.Errorf("one run's statuses %v, want %v", statuses, want)
	}

	run, err := record.ReadRun(merged)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sh := range run.Info.Shards {
		got = append(got, sh.Shard.String())
		if sh.Records != sh.Cases {
			t.Errorf("shard %s: %d records of %d cases", sh.Shard, sh.Records, sh.Cases)
		}
	}
	if want := []string{"1/4", "2/4", "3/4", "4/4"}; !slices.Equal(got, want) || run.Info.Cases != 30 || run.Info.Interrupted {
		t.Errorf("merged run.json: shards %v, %d cases, interrupted %v; want %v, 30, false", got, run.Info.Cases, run.Info.Interrupted, want)
	}
	// Every case log a record names is there, with the same name as in
	// the one run.
	for _, rec := range run.Records {
		for _, p := range rec.Logs {
			if _, err := os.Stat(filepath.Join(merged, p)); err != nil {
				t.Errorf("case %s: %v", rec.CaseID, err)
			}
			if _, err := os.Stat(filepath.Join(single, p)); err != nil {
				t.Errorf("case %s: the one run has no %s: %v", rec.CaseID, p, err)
			}
		}
	}
}

// timingKeys are the fields of summary.json that measure time, and the
// run's own facts (its ID, run.json), which differ between any two runs.
var timingKeys = map[string]bool{"run": true, "run_id": true, "started": true, "ms": true, "call_ms": true}

// normalisedSummary reads summary.json without timing fields.
func normalisedSummary(t *testing.T, dir string) any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return dropTimings(v)
}

func dropTimings(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if timingKeys[k] || strings.HasSuffix(k, "_ms") {
				delete(v, k)
				continue
			}
			v[k] = dropTimings(x)
		}
	case []any:
		for i, x := range v {
			v[i] = dropTimings(x)
		}
	}
	return v
}

// verdict is a case's status and the verdict on each expectation.
type verdict struct {
	Status       string
	Expectations []record.Expectation
}

func verdicts(t *testing.T, dir string) map[string]verdict {
	t.Helper()
	run, err := record.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]verdict{}
	for _, rec := range run.Records {
		out[rec.CaseID] = verdict{rec.Status, rec.Expectations}
	}
	return out
}
