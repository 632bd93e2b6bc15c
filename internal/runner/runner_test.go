package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scenario"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// The runner's tests run real cases: real scenario files, the fixture
// servers as real processes, real result folders.

var fixtureBin string

func TestMain(m *testing.M) {
	// As the command is (cmd/hosteval's main): the servers' stops, and
	// the benchmarks against the bare SDK, then cost what they cost there
	// (host.treeBeforeStop).
	host.BecomeSubreaper()
	os.Exit(fixturetest.MainAll(m, &fixtureBin))
}

// testEnv sets the environment the scenario files expect: the variables
// they use, and no model settings from the machine running the tests.
func testEnv(t *testing.T) {
	t.Helper()
	t.Setenv("HOSTEVAL_TEST_TOKEN", "tok")
	t.Setenv("HOSTEVAL_MODEL", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "")
}

// loadCases loads a scenario file and expands it into cases.
func loadCases(tb testing.TB, path string) []*scenario.Case {
	tb.Helper()
	s, err := scenario.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	cases, err := s.Cases(scenario.CaseOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return cases
}

// suite writes the fixtures' servers file and a scenario file into a
// temporary folder and loads the cases.
func suite(t *testing.T, scenarios string) []*scenario.Case {
	t.Helper()
	servers := fmt.Sprintf(`servers:
  cmdb:
    command: %[1]s/cmdb
    shareable: true
  tickets:
    command: %[1]s/tickets
  slow:
    command: %[1]s/support
    env: {SUPPORT_SLOW_SECONDS: "2"}
`, fixtureBin)
	return suiteWith(t, servers, scenarios)
}

// suiteWith writes a servers file and a scenario file into a temporary
// folder and loads the cases.
func suiteWith(t *testing.T, servers, scenarios string) []*scenario.Case {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "servers.yaml"), []byte(servers), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(scenarios), 0o644); err != nil {
		t.Fatal(err)
	}
	return loadCases(t, filepath.Join(dir, "s.yaml"))
}

func readRecords(t *testing.T, dir string) []record.Record {
	t.Helper()
	run, err := record.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return run.Records
}

func TestRunWritesAResultsFolder(t *testing.T) {
	cases := suite(t, fixturetest.LookupScenario(6))
	dir := filepath.Join(t.TempDir(), "r1")
	res, err := Run(context.Background(), cases, Options{Dir: dir, RunID: "r1", Concurrency: 2, Wire: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 6 || res.Passed != 6 || res.Interrupted {
		t.Fatalf("result = %+v, want 6 ran, 6 passed, not interrupted", res)
	}
	recs := readRecords(t, dir)
	if len(recs) != 6 {
		t.Fatalf("%d records, want 6", len(recs))
	}
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.CaseID] = true
		if r.Status != record.StatusPass || r.RunID != "r1" || len(r.Calls) != 1 || r.Calls[0].SessionID != r.SessionID {
			t.Errorf("record %s: status %s, run %s, %d calls", r.CaseID, r.Status, r.RunID, len(r.Calls))
		}
		for _, name := range []string{"log", "wire"} {
			if _, err := os.Stat(filepath.Join(dir, r.Logs[name])); err != nil {
				t.Errorf("record %s: log %s: %v", r.CaseID, name, err)
			}
		}
	}
	if len(seen) != 6 {
		t.Errorf("case ids %v are not unique", seen)
	}
	info, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil || !strings.Contains(string(info), `"interrupted": false`) || !strings.Contains(string(info), `"finished"`) {
		t.Errorf("run.json = %s (%v), want finished and not interrupted", info, err)
	}
}

func TestRunDrainsOnFirstInterrupt(t *testing.T) {
	cases := suite(t, `name: slow
servers: [slow]
repeat: 4
model:
  scripted:
    - call: "slow__search_knowledge {query: refunds}"
    - answer: done
question: refunds?
expect:
  - {tool: slow__search_knowledge, outcome: ok}
`)
	dir := filepath.Join(t.TempDir(), "r1")
	drain := make(chan struct{})
	// Drain once the first case is under way (its model asked for the slow
	// search, which takes 2 s): it finishes, no other starts.
	var once sync.Once
	underWay := func(host.Step) { once.Do(func() { close(drain) }) }
	res, err := Run(context.Background(), cases, Options{Dir: dir, RunID: "r1", Concurrency: 1, Drain: drain,
		Override: func(o *host.Options) { o.Steps = underWay }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Ran != 1 || res.Passed != 1 {
		t.Fatalf("result = %+v, want interrupted after 1 case, passed", res)
	}
	if recs := readRecords(t, dir); len(recs) != 1 || recs[0].Status != record.StatusPass {
		t.Fatalf("records = %+v, want the one finished case", recs)
	}
	info, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	if !strings.Contains(string(info), `"interrupted": true`) {
		t.Errorf("run.json = %s, want interrupted", info)
	}
}

func TestRunCancelRecordsAndReaps(t *testing.T) {
	// The searches take a minute: the run is cancelled while both cases
	// wait on theirs, however slowly the machine got them there.
	servers := fmt.Sprintf(`servers:
  tickets:
    command: %[1]s/tickets
  slow:
    command: %[1]s/support
    env: {SUPPORT_SLOW_SECONDS: "60"}
`, fixtureBin)
	cases := suiteWith(t, servers, `name: slow
servers: [slow, tickets]
repeat: 2
host: {tool_timeout: 2m}
model:
  scripted:
    - call: "slow__search_knowledge {query: refunds}"
    - answer: done
question: refunds?
`)
	dir := filepath.Join(t.TempDir(), "r1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled once both models asked for the search.
	var asked atomic.Int32
	searching := func(s host.Step) {
		if s.Who == "model" && strings.HasPrefix(s.Text, "wants ") && asked.Add(1) == 2 {
			cancel()
		}
	}
	before := children(t)
	res, err := Run(ctx, cases, Options{Dir: dir, RunID: "r1", Concurrency: 2,
		Override: func(o *host.Options) { o.Steps = searching }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Ran != 2 || res.Errors != 2 {
		t.Fatalf("result = %+v, want interrupted, 2 ran, 2 errors", res)
	}
	for _, r := range readRecords(t, dir) {
		if r.Error != "interrupted before it finished" {
			t.Errorf("record %s: error %q, want interrupted", r.CaseID, r.Error)
		}
	}
	if after := children(t); after > before {
		t.Errorf("%d child processes after the run, %d before: a server was not reaped", after, before)
	}
}

func TestRunCaseTimeout(t *testing.T) {
	cases := suite(t, `name: slow
servers: [slow]
timeout: 500ms
model:
  scripted:
    - call: "slow__search_knowledge {query: refunds}"
    - answer: done
question: refunds?
`)
	dir := filepath.Join(t.TempDir(), "r1")
	res, err := Run(context.Background(), cases, Options{Dir: dir, RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	recs := readRecords(t, dir)
	if res.Errors != 1 || len(recs) != 1 || recs[0].Error != "the case did not finish within its timeout of 500ms" {
		t.Fatalf("result %+v, records %+v: want one error for the timeout", res, recs)
	}
}

func TestRunSharesShareableServers(t *testing.T) {
	cases := suite(t, fixturetest.LookupScenario(6))
	dir := filepath.Join(t.TempDir(), "r1")
	res, err := Run(context.Background(), cases, Options{Dir: dir, RunID: "r1", Concurrency: 2, Share: true})
	if err != nil || res.Passed != 6 {
		t.Fatalf("result %+v, err %v; want 6 passed", res, err)
	}
	// One cmdb process served every case: one discovery in the shared log,
	// six calls, and none in the cases' own server logs.
	n := countLines(t, filepath.Join(dir, "shared-servers.jsonl"), `"method":"server/discover"`)
	calls := countLines(t, filepath.Join(dir, "shared-servers.jsonl"), `"method":"tools/call"`)
	if n != 1 || calls != 6 {
		t.Errorf("shared log: %d discoveries and %d calls, want 1 and 6", n, calls)
	}
	for _, r := range readRecords(t, dir) {
		if !r.Servers[0].Shared {
			t.Errorf("record %s: server not marked shared", r.CaseID)
		}
	}
}

func TestRunPreflightFindsUnknownTools(t *testing.T) {
	cases := suite(t, `name: typo
servers: [cmdb]
host: {allow: [cmdb__get_aset]}
model: {scripted: [{answer: hi}]}
question: hi
`)
	_, err := Run(context.Background(), cases, Options{Dir: filepath.Join(t.TempDir(), "r1"), Preflight: true})
	lerr, ok := err.(*scenario.LoadError)
	if !ok || len(lerr.Problems) != 1 || !strings.Contains(lerr.Problems[0].String(), `host.allow[0]: server cmdb offers no tool "cmdb__get_aset" (did you mean "cmdb__get_asset"?)`) {
		t.Fatalf("err = %v, want one problem naming cmdb__get_aset", err)
	}
}

func countLines(t *testing.T, path, substr string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), substr) {
			n++
		}
	}
	return n
}

// children counts this process's live child processes.
func children(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	me := strconv.Itoa(os.Getpid())
	n := 0
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(fields) > 1 && fields[1] == me && fields[0] != "Z" {
			n++
		}
	}
	return n
}

func TestRunKeepsOnlyFailedLogs(t *testing.T) {
	cases := suite(t, fixturetest.LookupScenario(6)+`---
name: broken
servers: [cmdb]
model:
  scripted:
    - call: "cmdb__get_asset {hostname: jump-prod-02}"
    - answer: "Camille Michel."
question: who owns jump-prod-02?
expect:
  - {tool: cmdb__get_asset, outcome: tool_error}
`)
	tests := []struct {
		logs string
		// files is how many files cases/ holds: one per kept log.
		files                int
		passedLog, failedLog bool
	}{
		{LogsAll, 7, true, true},
		{LogsFailed, 1, false, true},
		{LogsNone, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.logs, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "r1")
			res, err := Run(context.Background(), cases, Options{Dir: dir, RunID: "r1", Logs: tt.logs})
			if err != nil || res.Passed != 6 || res.Failed != 1 {
				t.Fatalf("result %+v, err %v; want 6 passed, 1 failed", res, err)
			}
			for _, r := range readRecords(t, dir) {
				want := tt.passedLog
				if r.Status != record.StatusPass {
					want = tt.failedLog
				}
				data, statErr := os.ReadFile(filepath.Join(dir, r.Logs["log"]))
				switch {
				case !want && r.Logs["log"] != "":
					t.Errorf("case %s (%s) kept its log %s", r.CaseID, r.Status, r.Logs["log"])
				case want && (r.Logs["log"] == "" || statErr != nil || !strings.Contains(string(data), `"operation":"host.tool_call"`)):
					t.Errorf("case %s (%s) has no log with its call: %q, %v", r.CaseID, r.Status, r.Logs["log"], statErr)
				}
			}
			entries, _ := os.ReadDir(filepath.Join(dir, "cases"))
			if len(entries) != tt.files {
				t.Errorf("cases/ holds %d entries, want %d", len(entries), tt.files)
			}
		})
	}
}

// TestRunFinishWhileSharedServersStop: Finish (the reports) runs while the
// shared servers take their grace to exit, and Run returns once both are
// done. The shared server here exits only when killed: its shell ignores
// SIGTERM and stdin's end, so stopping it takes two graces at least.
func TestRunFinishWhileSharedServersStop(t *testing.T) {
	servers := fmt.Sprintf(`servers:
  cmdb:
    command: sh
    args: ["-c", "trap '' TERM; %s/cmdb; while :; do sleep 1; done"]
    shareable: true
`, fixtureBin)
	cases := suiteWith(t, servers, fixturetest.LookupScenario(2))
	dir := filepath.Join(t.TempDir(), "r1")
	var (
		calls       int
		got         Result
		stoppedLate bool
		stoppedCh   <-chan struct{}
	)
	res, err := Run(context.Background(), cases, Options{Dir: dir, RunID: "r1", Concurrency: 2, Share: true,
		Finish: func(res Result, stopped <-chan struct{}) error {
			calls++
			got, stoppedCh = res, stopped
			select {
			case <-stopped:
			default:
				stoppedLate = true
			}
			// Every record is on disk and run.json is final.
			if n := len(readRecords(t, dir)); n != 2 {
				t.Errorf("Finish: %d records on disk, want 2", n)
			}
			info, err := record.ReadRunInfo(dir)
			if err != nil || info.Finished.IsZero() {
				t.Errorf("Finish: run.json %+v, %v; want it finished", info, err)
			}
			return errors.New("reports failed")
		}})
	if err == nil || err.Error() != "reports failed" {
		t.Fatalf("Run error = %v, want Finish's", err)
	}
	if calls != 1 || got.Passed != 2 || res.Passed != 2 {
		t.Fatalf("Finish called %d times with %+v, Run returned %+v; want once, 2 passed", calls, got, res)
	}
	if !stoppedLate {
		t.Error("the shared server had stopped before Finish was called: the reports waited for it")
	}
	select {
	case <-stoppedCh:
	default:
		t.Error("Run returned before the shared server stopped")
	}
}

// run.json and records.jsonl are written while the servers start: a run
// folder they cannot be written to fails the run before any case, with or
// without the preflight, and no case runs (no case file, no record).
func TestRunFolderThatCannotBeWritten(t *testing.T) {
	for _, pre := range []bool{true, false} {
		t.Run(fmt.Sprintf("preflight=%t", pre), func(t *testing.T) {
			cases := suite(t, fixturetest.LookupScenario(2))
			dir := filepath.Join(t.TempDir(), "r")
			// A folder where the records file goes.
			if err := os.MkdirAll(filepath.Join(dir, record.RecordsFile), 0o755); err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), cases, Options{Dir: dir, RunID: "r", Concurrency: 2, Preflight: pre})
			if err == nil || !strings.Contains(err.Error(), "open records") || res != nil {
				t.Fatalf("Run = %+v, %v; want no result and an error that says open records", res, err)
			}
			files, _ := os.ReadDir(filepath.Join(dir, "cases"))
			if len(files) != 0 {
				t.Errorf("%d case files, want none", len(files))
			}
			if _, err := os.Stat(filepath.Join(dir, record.RunInfoFile)); err != nil {
				t.Errorf("run.json: %v; want it written", err)
			}
		})
	}
}
