package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/internal/host"
)

// silentSuite is a servers file with a legacy server that reads
// server/discover and never answers it (it answers a ping).
func silentSuite(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf(`servers:
  silent:
    command: %s/legacy
    args: [-discover=silent]
`, fixtureBin)
}

const silentScenario = `name: hello
servers: [silent]
repeat: 4
model:
  scripted:
    - call: "silent__hello {name: Amira}"
    - answer: done
question: say hello
expect:
  - {server: silent, protocol: 2025-11-25, era_reason: "answered ping, not discover"}
  - {tool: silent__hello, outcome: ok}
`

// TestRunLearnsAnEraOnce: a run finds out once that a server never answers
// server/discover (the wait, the restart); the other cases remember it and
// go straight to the 2025-11-25 initialize, and say so in era_reason. With
// the preflight, no case pays at all.
func TestRunLearnsAnEraOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		concurrency int
		preflight   bool
		restarted   int // cases that found out themselves
	}{
		{"one case at a time", 1, false, 1},
		{"the preflight finds out", 4, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cases := suiteWith(t, silentSuite(t), silentScenario)
			dir := filepath.Join(t.TempDir(), "r1")
			res, err := Run(context.Background(), cases, Options{Dir: dir, RunID: "r1", Concurrency: tt.concurrency, Preflight: tt.preflight})
			if err != nil {
				t.Fatal(err)
			}
			if res.Passed != 4 {
				t.Errorf("result %+v, want 4 passed", res)
			}
			restarted, remembered, discovers := 0, 0, 0
			for _, rec := range readRecords(t, dir) {
				if len(rec.Servers) != 1 {
					t.Fatalf("%s: servers %+v, want one", rec.CaseID, rec.Servers)
				}
				s := rec.Servers[0]
				if s.Protocol != host.Revision20251125 {
					t.Errorf("%s: protocol %q, want %s", rec.CaseID, s.Protocol, host.Revision20251125)
				}
				switch {
				case s.Restarted && s.EraReason == "answered ping, not discover":
					restarted++
				case !s.Restarted && s.EraReason == "remembered: answered ping, not discover":
					remembered++
				default:
					t.Errorf("%s: restarted %t, era_reason %q", rec.CaseID, s.Restarted, s.EraReason)
				}
				discovers += countLines(t, filepath.Join(dir, rec.Logs["log"]), `"method":"server/discover"`)
			}
			if restarted != tt.restarted || remembered != 4-tt.restarted {
				t.Errorf("%d cases found out and %d remembered, want %d and %d", restarted, remembered, tt.restarted, 4-tt.restarted)
			}
			// The server logs each request it reads: only the cases that
			// found out sent server/discover.
			if discovers != tt.restarted {
				t.Errorf("the cases' servers read server/discover %d times, want %d", discovers, tt.restarted)
			}
		})
	}
}

// TestRunErasAcrossRuns: Eras made with a file carry what one run found out
// to the next run, whose first case goes straight to initialize.
func TestRunErasAcrossRuns(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "eras.json")
	cases := suiteWith(t, silentSuite(t), strings.Replace(silentScenario, "repeat: 4", "repeat: 1", 1))
	var got []string
	for _, id := range []string{"r1", "r2"} {
		dir := filepath.Join(t.TempDir(), id)
		res, err := Run(context.Background(), cases, Options{Dir: dir, RunID: id, Eras: host.NewEras(file)})
		if err != nil || res.Passed != 1 {
			t.Fatalf("run %s: %+v, %v; want 1 passed", id, res, err)
		}
		recs := readRecords(t, dir)
		got = append(got, fmt.Sprintf("restarted=%t %s", recs[0].Servers[0].Restarted, recs[0].Servers[0].EraReason))
	}
	want := []string{"restarted=true answered ping, not discover", "restarted=false remembered: answered ping, not discover"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the two runs' connections: %q, want %q", got, want)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("eras file: %v", err)
	}
}
