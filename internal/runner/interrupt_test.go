package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scenario"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// waitPID reads a pid file a server wrote, waiting for it.
func waitPID(t *testing.T, path string) int {
	t.Helper()
	pid, err := fixturetest.WaitPID(path, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// runResult is what Run returned.
type runResult struct {
	res *Result
	err error
}

// runInBackground starts Run, for a test that interrupts it; the test
// waits for its result on the channel.
func runInBackground(cases []*scenario.Case, opts Options) <-chan runResult {
	done := make(chan runResult, 1)
	go func() {
		res, err := Run(context.Background(), cases, opts)
		done <- runResult{res, err}
	}()
	return done
}

// TestRunAbortKillsEveryServerGroup: the second Ctrl-C (Abort) kills the
// server's whole process group, the helper it started included, and
// run.json still says the run was interrupted and when it finished.
func TestRunAbortKillsEveryServerGroup(t *testing.T) {
	pids := t.TempDir()
	cases := suiteWith(t, fixturetest.HelperServers(fixtureBin, pids), fixturetest.HoldScenario)
	dir := filepath.Join(t.TempDir(), "r1")
	abort := make(chan struct{})
	groups := host.NewProcessGroups()
	done := runInBackground(cases, Options{Dir: dir, RunID: "r1", Abort: abort, Groups: groups})
	server := waitPID(t, filepath.Join(pids, "server.pid"))
	helper := waitPID(t, filepath.Join(pids, "helper.pid"))
	if got, _ := fixturetest.GroupMembers(server); len(got) < 3 {
		t.Fatalf("group %d has %v, want the shell, the helper and the server", server, got)
	}
	close(abort)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !r.res.Interrupted {
		t.Errorf("result = %+v, want interrupted", r.res)
	}
	if got, err := fixturetest.WaitGroupGone(server, time.Minute); err != nil || len(got) != 0 {
		t.Errorf("processes %v of the server's group (helper %d) survived the abort (%v)", got, helper, err)
	}
	run, err := record.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Info == nil || !run.Info.Interrupted || run.Info.Finished.IsZero() {
		t.Errorf("run.json = %+v, want interrupted and finished", run.Info)
	}
	if len(run.Records) != 1 || run.Records[0].Error != "interrupted before it finished" {
		t.Errorf("records = %+v, want the case recorded as interrupted", run.Records)
	}
	if n := groups.Len(); n != 0 {
		t.Errorf("%d process groups still registered", n)
	}
}

// TestRunLongNamesKeepTheirLogs: a scenario name too long for a file name
// still gets its log, where the record says it is, and two such names that
// differ only at the end get two files.
func TestRunLongNamesKeepTheirLogs(t *testing.T) {
	long := strings.Repeat("a-very-long-scenario-name-", 12) // 312 characters
	var docs []string
	for _, end := range []string{"one", "two"} {
		docs = append(docs, strings.Replace(fixturetest.LookupScenario(6), "name: lookup\n", "name: "+long+end+"\n", 1))
	}
	cases := suite(t, strings.Join(docs, "---\n"))
	dir := filepath.Join(t.TempDir(), "r1")
	res, err := Run(context.Background(), cases[:1], Options{Dir: dir, RunID: "r1", Wire: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed != 1 {
		t.Fatalf("result = %+v, want 1 passed", res)
	}
	recs := readRecords(t, dir)
	for _, name := range []string{"log", "wire"} {
		p := recs[0].Logs[name]
		if p == "" {
			t.Fatalf("record has no %s: %v", name, recs[0].Logs)
		}
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("the record's %s %s: %v", name, p, err)
		}
		if base := filepath.Base(p); len(base) > 255 {
			t.Errorf("%s file name is %d bytes", name, len(base))
		}
	}
	a, b := record.CaseStem(0, cases[0].ID), record.CaseStem(0, cases[6].ID)
	if a == b || len(a) > 4+1+100 {
		t.Errorf("stems %q and %q: want two distinct names of at most %d bytes", a, b, 4+1+100)
	}
	if got, want := record.CaseStem(6, "lookup#0"), "0007-lookup_0"; got != want {
		t.Errorf("a short name's stem = %q, want %q (unchanged)", got, want)
	}
}

// TestRunRecordsSettings: the record says which host settings the case ran
// under, the scenario's, the override's and the host's defaults together.
func TestRunRecordsSettings(t *testing.T) {
	cases := suite(t, `name: knobs
servers: [cmdb]
host: {tool_timeout: 3s, max_result_bytes: 900, deny: [cmdb__find_assets], descriptions: {cmdb__get_asset: "Look a host up."}, elicitation: false}
timeout: 45s
model:
  scripted:
    - answer: "nothing to do"
question: hi
`)
	dir := filepath.Join(t.TempDir(), "r1")
	override := func(o *host.Options) { o.ConnectTimeout = 30 * time.Second }
	if _, err := Run(context.Background(), cases, Options{Dir: dir, RunID: "r1", Override: override}); err != nil {
		t.Fatal(err)
	}
	recs := readRecords(t, dir)
	got := recs[0].Settings
	// The keys and units records have always had (max_tool_time_ms only
	// when progress extends a round).
	wantJSON := `{"protocol":"auto","connect_timeout_ms":30000,"discover_timeout_ms":20000,"initialize_timeout_ms":20000,` +
		`"tool_timeout_ms":3000,"person_timeout_ms":0,"max_result_bytes":900,"max_arg_bytes":16384,"max_steps":8,"max_rounds":4,"stderr_bytes":65536,"wire_bytes":67108864,` +
		`"case_timeout_ms":45000,"deny":["cmdb__find_assets"],"descriptions":{"cmdb__get_asset":"` + record.DescriptionHash("Look a host up.") + `"},` +
		`"elicitation":false}`
	gotJSON, _ := json.Marshal(got)
	if string(gotJSON) != wantJSON {
		t.Errorf("settings =\n%s\nwant\n%s", gotJSON, wantJSON)
	}
}
