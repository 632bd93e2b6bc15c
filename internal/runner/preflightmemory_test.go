package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreflightVerdictStandsForTheRun: a server that never reads nor
// answers costs the whole connect budget to find out. Before
// issue 23 the preflight paid it, and then the cases again (each, for a
// server not shared). Now the preflight's verdict stands for the run: the
// server is started by the preflight alone, and every case records, at once, why it is not started
// again. Counted by the starts, not timed.
func TestPreflightVerdictStandsForTheRun(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			starts := filepath.Join(t.TempDir(), "starts")
			servers := fmt.Sprintf(`servers:
  mute:
    command: sh
    args: [-c, "echo started >> %s; exec sleep 600"]
    shareable: %v
    connect_timeout: 300ms
`, starts, shared)
			cases := suiteWith(t, servers, `name: mute
servers: [mute]
repeat: 4
model: {scripted: [{answer: "hi"}]}
question: hi
`)
			dir := filepath.Join(t.TempDir(), "r")
			res, err := Run(context.Background(), cases, Options{Dir: dir, RunID: "r", Concurrency: 2, Preflight: true, Share: shared})
			if err != nil {
				t.Fatal(err)
			}
			if res.Errors != 4 {
				t.Errorf("%d cases errored, want all 4", res.Errors)
			}
			data, err := os.ReadFile(starts)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(data), "started"); n != 1 {
				t.Errorf("the server was started %d times, want once, by the preflight", n)
			}
			for _, rec := range readRecords(t, dir) {
				if !strings.Contains(rec.Error, "server mute is not started again: it did not connect in the run's preflight (") {
					t.Errorf("%s: error %q; want the preflight's verdict", rec.CaseID, rec.Error)
				}
			}
		})
	}
}
