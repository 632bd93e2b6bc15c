package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/servers/fixturetest"
)

// TestCompareSameCommitNoRegression: two samples of one commit's calls,
// taken by this binary on this machine under the same load, are never a
// regression for `hosteval compare`; the same samples with the new
// side's calls three times slower are one.
//
// The two samples are the alternate cases of one real run (split into
// two run folders), not two runs side by side: two processes started
// together still see different shares of a loaded machine (at load 30
// their p50 call latency differed by +166%, beyond -min-effect's 50%),
// and the test claims that compare does not take noise for a
// regression, not that two processes get the same share of the CPU.
// Cases that alternate in one run's timeline see the same load.
func TestCompareSameCommitNoRegression(t *testing.T) {
	dir := t.TempDir()
	fixturetest.WriteFiles(t, dir, map[string]string{
		"servers.yaml": fmt.Sprintf("servers:\n  cmdb:\n    command: %s/cmdb\n    shareable: true\n", fixtureBin),
		"suite.yaml": `name: find
servers: [cmdb]
repeat: 300
model:
  scripted:
    - call: "cmdb__find_assets {service: customer-db, env: prod, limit: 2}"
    - answer: "Two."
question: which hosts run customer-db?
expect:
  - {tool: cmdb__find_assets, outcome: ok}
`})
	p := startHosteval(t, dir, nil, "run", "-run-id", "one", "-concurrency", "2", "-logs", "failed", "suite.yaml")
	if code := p.exitCode(t); code != 0 {
		t.Fatalf("run exited %d: %s", code, p.stderr.String())
	}
	results := filepath.Join(dir, "results")
	splitRun(t, filepath.Join(results, "one"), results, "a", "b", 1)
	splitRun(t, filepath.Join(results, "one"), results, "a", "b-slow", 3)

	compare := func(old, cur string) (string, int) {
		cmd := exec.Command("hosteval", "compare", filepath.Join("results", old), filepath.Join("results", cur))
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	for _, order := range [][2]string{{"a", "b"}, {"b", "a"}} {
		out, code := compare(order[0], order[1])
		if code != 0 || strings.Contains(out, "REGRESSED") {
			t.Errorf("compare %s %s: exit %d\n%s", order[0], order[1], code, out)
		}
		if !strings.Contains(out, "call latency p50") {
			t.Errorf("compare %s %s printed no latency:\n%s", order[0], order[1], out)
		}
	}
	if out, code := compare("a", "b-slow"); code != 1 || !strings.Contains(out, "REGRESSED") {
		t.Errorf("compare a b-slow (every call of b three times slower): exit %d, want 1 and REGRESSED\n%s", code, out)
	}
}

// splitRun writes the alternate records of the run folder src (in the
// order they were written, so neighbours ran at the same time) into two
// run folders of out, named first and second, each with its own run.json;
// second's call latencies are multiplied by slower.
func splitRun(t *testing.T, src, out, first, second string, slower float64) {
	t.Helper()
	var meta map[string]any
	data, err := os.ReadFile(filepath.Join(src, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(src, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var halves [2][][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for i := 0; sc.Scan(); i++ {
		halves[i%2] = append(halves[i%2], bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for h, id := range []string{first, second} {
		if len(halves[h]) < 100 {
			t.Fatalf("%s: %d records in half %d, want at least 100", src, len(halves[h]), h)
		}
		var buf bytes.Buffer
		calls := 0
		for _, line := range halves[h] {
			var rec map[string]any
			if err := json.Unmarshal(line, &rec); err != nil {
				t.Fatal(err)
			}
			rec["run_id"] = id
			list, _ := rec["calls"].([]any)
			for _, c := range list {
				call := c.(map[string]any)
				if h == 1 {
					call["ms"] = call["ms"].(float64) * slower
				}
				calls++
			}
			b, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(append(b, '\n'))
		}
		if calls != len(halves[h]) {
			t.Fatalf("%s: %d calls in %d records, want one a case", src, calls, len(halves[h]))
		}
		meta["run_id"], meta["cases"] = id, len(halves[h])
		m, err := json.MarshalIndent(meta, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(out, id)
		fixturetest.WriteFiles(t, d, map[string]string{"run.json": string(m), "records.jsonl": buf.String()})
	}
}
