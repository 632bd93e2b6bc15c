package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreflightVerdictStandsForTheRun: a mute server costs a whole budget
// to find out: one that never reads its input the connect budget, one that
// reads server/discover and never answers the discover budget (and, in
// auto mode, the restart as legacy then never answers initialize). Before
// issue 23 the preflight paid it, and then the cases again (each, for a
// server not shared); pinned to 2026-07-28, the cases paid it still after
// the preflight remembered its verdict in auto mode, for the pinned error
// did not carry the silence. Now the preflight's verdict stands for the
// run, in every protocol mode (auto, legacy, pinned): the server is started by the preflight
// alone, and every case records, at once, why it is not started again.
// Counted by the starts, not timed.
func TestPreflightVerdictStandsForTheRun(t *testing.T) {
	mutes := []struct {
		name, script string
	}{
		// Never reads: the connect budget runs out.
		{"deaf", "exec sleep 600"},
		// Reads everything, answers nothing: the discover budget runs out
		// once the host sees it read. The connect budget, which it never
		// meets, leaves a busy machine time to start it twice (auto).
		{"silent", "while read -r line; do :; done"},
	}
	for _, mute := range mutes {
		for _, protocol := range []string{"auto", "legacy", "2026-07-28"} {
			for _, shared := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/shared=%v", mute.name, protocol, shared), func(t *testing.T) {
					t.Parallel()
					starts := filepath.Join(t.TempDir(), "starts")
					servers := fmt.Sprintf(`servers:
  mute:
    command: sh
    args: [-c, "echo started >> %s; %s"]
    shareable: %v
    connect_timeout: 1m
    discover_timeout: 300ms
    initialize_timeout: 300ms
`, starts, mute.script, shared)
					if mute.name == "deaf" {
						servers = strings.Replace(servers, "connect_timeout: 1m", "connect_timeout: 300ms", 1)
					}
					cases := suiteWith(t, servers, fmt.Sprintf(`name: mute
servers: [mute]
host: {protocol: %s}
repeat: 4
model: {scripted: [{answer: "hi"}]}
question: hi
`, protocol))
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
					want := 1
					if mute.name == "silent" && protocol == "auto" {
						want = 2 // discover, then the restart as legacy
					}
					if n := strings.Count(string(data), "started"); n != want {
						t.Errorf("the server was started %d times, want %d, by the preflight", n, want)
					}
					for _, rec := range readRecords(t, dir) {
						if !strings.Contains(rec.Error, "server mute is not started again: it did not connect in the run's preflight (") {
							t.Errorf("%s: error %q; want the preflight's verdict", rec.CaseID, rec.Error)
						}
					}
				})
			}
		}
	}
}

// TestWithoutPreflightEachCaseFindsOut: with -preflight=false no verdict
// is kept (see host.Host.connect for why): each case tries the mute server
// and records its own failure.
func TestWithoutPreflightEachCaseFindsOut(t *testing.T) {
	t.Parallel()
	starts := filepath.Join(t.TempDir(), "starts")
	cases := suiteWith(t, fmt.Sprintf(`servers:
  mute:
    command: sh
    args: [-c, "echo started >> %s; exec sleep 600"]
    connect_timeout: 300ms
`, starts), `name: mute
servers: [mute]
repeat: 3
model: {scripted: [{answer: "hi"}]}
question: hi
`)
	dir := filepath.Join(t.TempDir(), "r")
	res, err := Run(context.Background(), cases, Options{Dir: dir, RunID: "r", Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 3 {
		t.Errorf("%d cases errored, want all 3", res.Errors)
	}
	data, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "started"); n != 3 {
		t.Errorf("the server was started %d times, want 3, once a case", n)
	}
	for _, rec := range readRecords(t, dir) {
		if want := "server mute did not connect within 300ms"; !strings.Contains(rec.Error, want) {
			t.Errorf("%s: error %q; want it to say %q", rec.CaseID, rec.Error, want)
		}
	}
}
