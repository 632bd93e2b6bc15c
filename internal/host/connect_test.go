package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/record"
)

// These tests assert what was recorded (the revision, the reason, a
// restart), never how long anything took: the budgets are set below the
// servers' start-up delays on purpose, to prove that start-up is not what
// they measure.

// TestSlowStarterKeepsItsEra: a server that takes seconds to start (npx on a
// busy runner) is not misjudged by a discover or initialize budget far
// shorter than its start-up, because a budget runs only once the server has
// read its request.
func TestSlowStarterKeepsItsEra(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the host sees a server read its input only on Linux")
	}
	const (
		delay = "FIXTURE_START_DELAY=3s"
		short = time.Second
	)
	tests := []struct {
		name string
		spec ServerSpec
		mode Mode
		// budget is the discover and initialize budget: far below the
		// start-up delay, except where the ping is to decide.
		budget time.Duration
		want   record.Server
		// The handshake requests the server logged: one start, unless the
		// era says restarted.
		discover, initialize int
	}{
		{"a 2026-07-28 server", fixture("cmdb", delay), ModeAuto, short,
			record.Server{Protocol: "2026-07-28", Offered: "2026-07-28", EraReason: "answered discover"}, 1, 0},
		{"a legacy server that refuses discover", legacySpec(t, "unknown", delay), ModeAuto, short,
			record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", EraReason: "discover error code -32601"}, 1, 1},
		// Silent, and slow: restarted (and slow again), still 2025-11-25.
		{"a legacy server that ignores discover", legacySpec(t, "silent", delay), ModeAuto, budget.Defaults[budget.Budgets]().DiscoverTimeout,
			record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", Restarted: true, EraReason: "answered ping, not discover"}, 1, 1},
		{"legacy mode", legacySpec(t, "unknown", delay), ModeLegacy, short,
			record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", EraReason: "legacy mode"}, 0, 1},
		{"pinned", fixture("cmdb", delay), ModePinned, short,
			record.Server{Protocol: "2026-07-28", Offered: "2026-07-28", EraReason: "answered discover"}, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var serverLog logLines
			h, err := Start(context.Background(), Options{Servers: []ServerSpec{tt.spec}, Protocol: tt.mode, ServerLog: &serverLog,
				Budgets: budget.Budgets{Connect: budget.Connect{DiscoverTimeout: tt.budget, InitializeTimeout: tt.budget}}})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			checkConnection(t, h, tt.want, "")
			h.Close() // every server line is in
			for method, want := range map[string]int{"server/discover": tt.discover, "initialize": tt.initialize} {
				if got := len(serverLog.entries(map[string]any{"method": method})); got != want {
					t.Errorf("the server logged %d %s requests, want %d", got, method, want)
				}
			}
		})
	}
}

func legacySpec(t *testing.T, discover string, env ...string) ServerSpec {
	t.Helper()
	spec := fixture("legacy", env...)
	spec.Args = []string{"-discover=" + discover}
	return spec
}

// TestServerThatExitsAtOnce: a server that dies before answering is
// reported as exited, with its status and the end of its stderr, in every
// mode, and is started only once.
func TestServerThatExitsAtOnce(t *testing.T) {
	t.Parallel()
	for _, mode := range []Mode{ModeAuto, ModeLegacy, ModePinned} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			var serverLog logLines
			h, err := Start(context.Background(), Options{Servers: []ServerSpec{fixture("cmdb", "FIXTURE_EXIT=7")}, Protocol: mode, ServerLog: &serverLog})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			const want = "server cmdb exited with status 7 before it connected; its stderr ends: cmdb: exiting at once with status 7 (FIXTURE_EXIT)"
			checkConnection(t, h, record.Server{EraReason: "exited"}, want)
			if s := h.Servers()[0]; s.Error != want {
				t.Errorf("error = %q\nwant    %q", s.Error, want)
			}
			if n := len(serverLog.entries(map[string]any{"operation": "server.stderr", "text": "cmdb: exiting at once with status 7 (FIXTURE_EXIT)"})); n != 1 {
				t.Errorf("the server started %d times, want once", n)
			}
		})
	}
}

// TestServerThatIsNotJSONRPC: a server that prints a banner on stdout before
// it speaks is reported with what it printed.
func TestServerThatIsNotJSONRPC(t *testing.T) {
	t.Parallel()
	spec := ServerSpec{Name: "banner", Command: "/bin/sh", Args: []string{"-c", `echo "Server ready on stdio"; exec "$0"`, fixture("cmdb").Command}}
	h, err := Start(context.Background(), Options{Servers: []ServerSpec{spec}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	checkConnection(t, h, record.Server{EraReason: "wrote something that is not JSON-RPC"},
		`server banner wrote something that is not JSON-RPC on stdout: "Server ready on stdio"`)
}

// TestErasRemembersSilentServers: a server found silent to discover is
// connected as legacy at once by the next host that shares the memory
// (the next case of a run, or a later run through the file), and probed
// again when the remembered era fails.
func TestErasRemembersSilentServers(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "eras.json")
	eras := NewEras(file)
	spec := legacySpec(t, "silent")
	connect := func(eras *Eras, spec ServerSpec) (record.Server, int) {
		t.Helper()
		var serverLog logLines
		h := startHost(t, Options{Servers: []ServerSpec{spec}, Eras: eras, ServerLog: &serverLog})
		defer h.Close()
		return h.Servers()[0], len(serverLog.entries(map[string]any{"method": "server/discover"}))
	}
	tests := []struct {
		name         string
		eras         func() *Eras
		want         record.Server
		wantDiscover int
	}{
		{"first case: found out", func() *Eras { return eras },
			record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", Restarted: true, EraReason: "answered ping, not discover"}, 1},
		{"second case: remembered", func() *Eras { return eras },
			record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", EraReason: "remembered: answered ping, not discover"}, 0},
		{"next run: remembered through the file", func() *Eras { return NewEras(file) },
			record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", EraReason: "remembered: answered ping, not discover"}, 0},
		{"no memory", func() *Eras { return nil },
			record.Server{Protocol: "2025-11-25", Offered: "2025-11-25", Restarted: true, EraReason: "answered ping, not discover"}, 1},
	}
	for _, tt := range tests {
		s, discovers := connect(tt.eras(), spec)
		got := record.Server{Protocol: s.Protocol, Offered: s.Offered, Restarted: s.Restarted, EraReason: s.EraReason}
		if got != tt.want || discovers != tt.wantDiscover {
			t.Errorf("%s: %+v after %d discover requests\nwant %+v after %d", tt.name, got, discovers, tt.want, tt.wantDiscover)
		}
	}

	// A remembered era that no longer works (the server was upgraded to
	// speak only 2026-07-28) is probed again, and forgotten.
	modern := memorySpec(t, "modern", testServerOptions{modernOnly: true})
	eras.remember(eraKey(modern), eraMemo{Revision: Revision20251125, Reason: reasonIgnored})
	h := startHost(t, Options{Servers: []ServerSpec{modern}, Eras: eras})
	checkConnection(t, h, record.Server{Protocol: "2026-07-28", Offered: "2026-07-28", EraReason: "answered discover"}, "")
	if _, ok := eras.recall(eraKey(modern)); ok {
		t.Error("the era that failed is still remembered")
	}
}

// TestHonestCauses: what the model and the record are told when a server
// dies during a call.
func TestHonestCauses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec ServerSpec
		tool string
		kill bool // kill -9 the server while the call is in flight
		why  string
	}{
		{"kill -9", fixture("chaos"), "chaos__hang", true, "it was killed by signal SIGKILL"},
		{"stdout closed", testServerSpec(t, "t"), "t__close_stdout", false, "it closed its stdout while still running"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := startHost(t, Options{Servers: []ServerSpec{tt.spec}, Budgets: budget.Budgets{ToolTimeout: time.Minute}})
			s := h.servers[tt.spec.Name]
			var wg sync.WaitGroup
			if tt.kill {
				wg.Go(func() {
					waitInFlight(t, s, 1)
					syscall.Kill(s.proc.cmd.Process.Pid, syscall.SIGKILL)
				})
			}
			text, ev := call(t, h, tt.tool, `{}`)
			wg.Wait()
			want := fmt.Sprintf("error: the server %s stopped working during the call (%s), so its tools can't be used now.", tt.spec.Name, tt.why)
			if ev.Outcome != record.OutcomeError || text != want {
				t.Errorf("outcome %s, text %q\nwant error, %q", ev.Outcome, text, want)
			}
		})
	}
}

// TestConfigErrors: what the user configured wrong is an ErrConfig, found
// before anything starts.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		specs []ServerSpec
		want  string
	}{
		{"two servers of one name", []ServerSpec{fixture("cmdb"), fixture("cmdb")}, `two servers are named "cmdb"`},
		{"no name", []ServerSpec{{Command: "x"}}, "a server has no name"},
		{"neither command nor URL", []ServerSpec{{Name: "x"}}, "server x: give exactly one of a command, a URL and a catalog"},
		{"both command and URL", []ServerSpec{{Name: "x", Command: "x", URL: "http://127.0.0.1/mcp"}}, "server x: give exactly one of a command, a URL and a catalog"},
		{"not an http URL", []ServerSpec{{Name: "x", URL: "ftp://example.com/mcp"}}, `server x: url "ftp://example.com/mcp" is not an http or https URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Start(context.Background(), Options{Servers: tt.specs})
			if err == nil {
				h.Close()
				t.Fatal("Start succeeded")
			}
			if !errors.Is(err, ErrConfig) || !strings.HasSuffix(err.Error(), tt.want) {
				t.Errorf("error = %q (ErrConfig: %t), want an ErrConfig ending %q", err, errors.Is(err, ErrConfig), tt.want)
			}
		})
	}
}

// TestConnectBudget: a server still starting when the connect budget runs
// out is reported as such, not as silent.
func TestConnectBudget(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the host sees a server read its input only on Linux")
	}
	h, err := Start(context.Background(), Options{Servers: []ServerSpec{fixture("cmdb", "FIXTURE_START_DELAY=1m")}, Budgets: budget.Budgets{Connect: budget.Connect{ConnectTimeout: time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	checkConnection(t, h, record.Server{}, "server cmdb did not connect within 1s: it had not read server/discover yet (still starting?)")
}

// TestProcessGroupsOfAHost: the host registers each stdio server's group
// in Options.Groups, so that Kill reaches what the server started too, and
// forgets each group once it has reaped it.
func TestProcessGroupsOfAHost(t *testing.T) {
	t.Parallel()
	groups := NewProcessGroups()
	// The shell leaves a child behind in the server's group, as npx does.
	spec := ServerSpec{Name: "cmdb", Command: "/bin/sh", Args: []string{"-c", `sleep 300 & exec "$0"`, fixture("cmdb").Command}}
	h := startHost(t, Options{Servers: []ServerSpec{spec}, Groups: groups})
	pgid := h.servers["cmdb"].proc.cmd.Process.Pid
	if n := groups.Len(); n != 1 {
		t.Fatalf("%d groups registered, want 1", n)
	}
	if n := groups.Kill(); n != 1 {
		t.Errorf("Kill signalled %d groups, want 1", n)
	}
	h.Close()
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(-pgid, 0) == nil && time.Now().Before(deadline) {
		// Once another test of this process has made it a subreaper
		// (BecomeSubreaper), the killed sleep is handed to this process,
		// not to init, and stays in its group as a zombie until reaped:
		// reap it as init would.
		var ws syscall.WaitStatus
		syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still has members after Kill: %v", pgid, err)
	}
	if n := groups.Len(); n != 0 {
		t.Errorf("%d groups registered after Close, want 0", n)
	}
}
