package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// TestCaseClockStartsAfterConnect: a server that takes longer to start than
// the case's whole timeout (an npx server on a busy machine) does not eat
// the case: connecting has its own budget, and the case's clock starts once
// its servers are connected. The server still gets 2026-07-28, unrestarted.
func TestCaseClockStartsAfterConnect(t *testing.T) {
	t.Parallel()
	servers := fmt.Sprintf(`servers:
  cmdb:
    command: %s/cmdb
    env: {FIXTURE_START_DELAY: 5s}
`, fixtureBin)
	cases := suiteWith(t, servers, `name: slow-start
servers: [cmdb]
timeout: 3s
model:
  scripted:
    - call: "cmdb__get_asset {hostname: jump-prod-02}"
    - answer: "Camille Michel."
question: who owns jump-prod-02?
expect:
  - {server: cmdb, protocol: 2026-07-28, restarted: false, era_reason: "^answered discover$"}
  - {tool: cmdb__get_asset, outcome: ok}
`)
	dir := filepath.Join(t.TempDir(), "r1")
	res, err := Run(context.Background(), cases, Options{Dir: dir, RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	recs := readRecords(t, dir)
	if res.Passed != 1 || len(recs) != 1 {
		t.Fatalf("result %+v, records %+v: want the case passed", res, recs)
	}
	if ms := recs[0].Servers[0].ConnectMS; ms < 5000 {
		t.Errorf("connect took %vms, want the 5s start delay in it", ms)
	}
}
