package runner

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hosteval/hosteval/servers/fixturetest"
)

// TestRunPreflightStopsOnInterrupt: the first Ctrl-C (Drain) also stops the
// preflight, which otherwise waits for a slow server as long as its connect
// budget allows (here 10 minutes): the run ends interrupted, no case ran,
// and the server is not left behind.
func TestRunPreflightStopsOnInterrupt(t *testing.T) {
	t.Parallel()
	pids := t.TempDir()
	servers := fmt.Sprintf(`servers:
  slow:
    command: sh
    args: [-c, 'echo $$$$ > %s/server.pid; exec %s/cmdb']
    env: {FIXTURE_START_DELAY: 10m}
    connect_timeout: 10m
`, pids, fixtureBin)
	cases := suiteWith(t, servers, `name: slow
servers: [slow]
model:
  scripted:
    - answer: done
question: anything?
`)
	dir := filepath.Join(t.TempDir(), "r1")
	drain := make(chan struct{})
	done := runInBackground(cases, Options{Dir: dir, RunID: "r1", Preflight: true, Drain: drain})
	server := waitPID(t, filepath.Join(pids, "server.pid"))
	close(drain)
	var r runResult
	select {
	case r = <-done:
	case <-time.After(time.Minute): // a guard for the test, not a budget
		t.Fatal("Run did not end within a minute of the interrupt: the preflight waits for the slow server")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !r.res.Interrupted || r.res.Ran != 0 {
		t.Errorf("result %+v, want interrupted with no case run", r.res)
	}
	if left, err := fixturetest.WaitGroupGone(server, time.Minute); err != nil || len(left) != 0 {
		t.Errorf("processes %v of the slow server's group survived (%v)", left, err)
	}
}
