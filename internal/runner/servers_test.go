package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/model/replay"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scenario"
)

// Server cassettes: a case's servers marked record_server are recorded
// live, then replayed by a stand-in with the servers gone.

// recordedServers is a ticket flow (a lookup, a call confirmed through
// input_required, a state check) over servers marked record_server, and a
// 2025-11-25-only server, whose handshake is replayed too; bin is where
// the servers are.
func recordedServers(bin, host string) string {
	return `name: recorded
servers:
  - {name: cmdb, command: ` + bin + `/cmdb, record_server: true}
  - {name: tickets, command: ` + bin + `/tickets, record_server: true}
  - {name: legacy, command: ` + bin + `/legacy, record_server: true}
cassettes: {dir: cas}
model:
  scripted:
    - call: "cmdb__get_asset {hostname: ` + host + `}"
    - call: "tickets__open_ticket {host: ` + host + `, summary: brute force}"
    - call: "legacy__hello {name: Ada}"
    - answer: Opened.
question: open a ticket for ` + host + `
elicitation:
  - {server: tickets, action: accept, content: {priority: P1}}
approvals: [tickets__open_ticket]
expect:
  - {tool: cmdb__get_asset, outcome: ok, result_matches: Camille Michel}
  - {tool: tickets__open_ticket, outcome: ok, rounds: 2, asked_user: true, result_matches: INC-4100}
  - {tool: legacy__hello, outcome: ok, result_matches: "Hello, Ada!"}
  - {server: tickets, protocol: 2026-07-28}
  - {server: legacy, protocol: 2025-11-25}
  - {state: "tickets__list_tickets {}", matches: {total: 1}}
`
}

func writeScenario(t *testing.T, dir, text string) []*scenario.Case {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return loadCases(t, filepath.Join(dir, "s.yaml"))
}

// serverFigures is what a record says that a replay of its servers must
// keep: everything but times, IDs and the servers' latency.
func serverFigures(rec record.Record) record.Record {
	rec = figures(rec)
	for i := range rec.Checks {
		c := &rec.Checks[i]
		c.Time, c.SessionID, c.TraceID, c.MS, c.ServerMS, c.PersonMS, c.RoundMS = rec.Started, "", "", 0, 0, 0, nil
	}
	for i := range rec.ModelRequests {
		rec.ModelRequests[i].MS = 0
	}
	return rec
}

func TestServersRecordedThenReplayedWithoutThem(t *testing.T) {
	testEnv(t)
	dir := t.TempDir()
	cases := writeScenario(t, dir, recordedServers(fixtureBin, "jump-prod-02"))
	recorded := filepath.Join(dir, "recorded")
	res, err := Run(context.Background(), cases, Options{Dir: recorded, Cassettes: &Cassettes{Mode: replay.Record}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed != 1 {
		t.Fatalf("recording: %+v%s", res, failures(readRecords(t, recorded)[0]))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "cas", "recorded", "*"))
	want := []string{"scripted.0.server-cmdb.yaml", "scripted.0.server-legacy.yaml", "scripted.0.server-tickets.yaml"}
	var got []string
	for _, f := range files {
		got = append(got, filepath.Base(f))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("server cassettes (-want +got):\n%s", diff)
	}

	// The servers are gone: their commands no longer exist.
	cases = writeScenario(t, dir, recordedServers(filepath.Join(dir, "gone"), "jump-prod-02"))
	replayed := filepath.Join(dir, "replayed")
	res, err = Run(context.Background(), cases, Options{Dir: replayed, Preflight: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed != 1 {
		t.Fatalf("replay: %+v%s", res, failures(readRecords(t, replayed)[0]))
	}
	w, g := readRecords(t, recorded)[0], readRecords(t, replayed)[0]
	if diff := cmp.Diff(serverFigures(w), serverFigures(g)); diff != "" {
		t.Errorf("the replay differs from the recording (-recorded +replayed):\n%s", diff)
	}
	if g.Cassette == nil || len(g.Cassette.Servers) != 3 || g.Cassette.Path != "" {
		t.Errorf("cassette = %+v, want three server cassettes and no model cassette (a scripted model)", g.Cassette)
	}

	// A call the cassette does not hold fails the case, saying so.
	cases = writeScenario(t, dir, recordedServers(filepath.Join(dir, "gone"), "jump-prod-03"))
	missed := filepath.Join(dir, "missed")
	if res, err = Run(context.Background(), cases, Options{Dir: missed}); err != nil {
		t.Fatal(err)
	}
	rec := readRecords(t, missed)[0]
	wantMiss := `scripted.0.server-cmdb.yaml: tools/call {"arguments":{"hostname":"jump-prod-03"},"name":"get_asset"} is not recorded; recorded: {"arguments":{"hostname":"jump-prod-02"},"name":"get_asset"}`
	if res.Failed != 1 || rec.ErrorClass != record.ErrorReplayMiss || !strings.Contains(rec.Error, wantMiss) {
		t.Errorf("a call not recorded: %+v, class %q, error:\n%s\nwant it to say:\n%s", res, rec.ErrorClass, rec.Error, wantMiss)
	}
	if !strings.Contains(rec.Calls[0].Error, "hosteval replay: ") {
		t.Errorf("the model was told %q, want the stand-in's answer", rec.Calls[0].Error)
	}
}
