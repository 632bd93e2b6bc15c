package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/servers/fixturetest"
)

// TestCompareSameCommitNoRegression: two real runs of one suite, by this
// binary on this machine, are never a regression: `hosteval compare`
// exits 0. The runs go side by side, as an A/B of one commit, so that the
// machine's load weighs on both alike; their latencies still differ
// enough for the U test to call it significant now and then.
func TestCompareSameCommitNoRegression(t *testing.T) {
	dir := t.TempDir()
	fixturetest.WriteFiles(t, dir, lookupSuite(400, `---
name: find
servers: [cmdb]
repeat: 200
model:
  scripted:
    - call: "cmdb__find_assets {service: customer-db, env: prod, limit: 2}"
    - answer: "Two."
question: which hosts run customer-db?
expect:
  - {tool: cmdb__find_assets, outcome: ok}
`))
	a := startHosteval(t, dir, nil, "run", "-run-id", "a", "-concurrency", "2", "-logs", "failed", "suite.yaml")
	b := startHosteval(t, dir, nil, "run", "-run-id", "b", "-concurrency", "2", "-logs", "failed", "suite.yaml")
	for _, p := range []*hostevalProc{a, b} {
		if code := p.exitCode(t); code != 0 {
			t.Fatalf("run exited %d: %s", code, p.stderr.String())
		}
	}
	for _, order := range [][2]string{{"a", "b"}, {"b", "a"}} {
		cmd := exec.Command("hosteval", "compare", filepath.Join("results", order[0]), filepath.Join("results", order[1]))
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(out), "REGRESSED") {
			t.Errorf("compare %s %s: %v\n%s", order[0], order[1], err, out)
		}
		if !strings.Contains(string(out), "call latency p50") {
			t.Errorf("compare %s %s printed no latency:\n%s", order[0], order[1], out)
		}
	}
}
