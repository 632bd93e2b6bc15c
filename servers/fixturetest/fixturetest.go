// Package fixturetest is the test side of the fixture servers (servers/):
// it builds their binaries and runs them as real processes for tests.
//
// For a server's own tests, [Main] builds that server once per test binary
// (with -race when the tests have it), [Start] connects the go-sdk client
// to it over stdio, and [Stderr] reads the request log it writes. No test
// may leave a server process behind: every [Server] is closed, and its
// process reaped, when its test ends.
//
// For the tests of the host, the runner and the CLI, [MainAll] builds every
// fixture server into one folder, which their servers files name; the
// package also holds the scenarios and servers files those tests share
// ([LookupScenario], [HelperServers]), the process-group checks of the
// interrupt tests ([WaitGroupGone]), a concurrent [Buffer] and
// [WriteTree] for a test's files.
//
// The servers themselves are built from servers/internal/fixture, the
// server-side kit; this package is for tests only, and nothing but tests
// imports it.
package fixturetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/servers/internal/fixture"
)

// Protocol revisions every server is tested under: the current one, and the
// initialize-handshake revision that a forced legacy client negotiates.
const (
	Revision2026 = "2026-07-28"
	Revision2025 = "2025-11-25"
)

// Protocols lists both revisions, for table-driven tests.
var Protocols = []string{Revision2026, Revision2025}

// Timeout bounds every wait for a log line.
const Timeout = 10 * time.Second

// IgnoreTimes makes cmp.Diff skip the ts and ms of a log [fixture.Entry].
var IgnoreTimes = cmpopts.IgnoreFields(fixture.Entry{}, "Time", "MS")

// SessionID is the session id that [Meta] puts in every request.
const SessionID = "sess-fixturetest"

// Main builds the server package pkg (an import path such as
// github.com/hosteval/hosteval/servers/cmdb), with -race when the tests
// run with it, into a folder kept for the next test binary
// (BuildCached), sets *bin to the binary and runs the tests. Call
// it from TestMain.
func Main(m *testing.M, pkg string, bin *string) int {
	dir, err := BuildCached(raceEnabled, pkg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixturetest: building %s: %v\n", pkg, err)
		return 1
	}
	*bin = filepath.Join(dir, path.Base(pkg))
	return m.Run()
}

// Options say how to start a server and connect to it.
type Options struct {
	Args []string
	// Env is added to a minimal environment (PATH and GORACE), so that a switch
	// set in the developer's shell never changes a test.
	Env []string
	// Protocol is the revision the client asks for: "" or Revision2026 for
	// server/discover with the fall-back to initialize, Revision2025 to force
	// the initialize handshake.
	Protocol string
	// Client configures the client; nil means no handlers at all.
	Client *mcp.ClientOptions
	// ConnectTimeout bounds Connect (default 10s).
	ConnectTimeout time.Duration
	// TerminateDuration is how long closing waits for the process to exit
	// after closing its stdin, before SIGTERM and then SIGKILL (default 1s).
	TerminateDuration time.Duration
}

// Server is one server process and the client session connected to it.
type Server struct {
	Session *mcp.ClientSession
	Cmd     *exec.Cmd
	Stderr  *Stderr

	closeOnce sync.Once
	closeErr  error
}

// Start starts the server binary and connects to it, failing the test if it
// cannot. The server is closed when the test ends.
func Start(t testing.TB, bin string, opts Options) *Server {
	t.Helper()
	s, err := StartErr(t, bin, opts)
	if err != nil {
		t.Fatalf("connecting to %s: %v\nstderr:\n%s", filepath.Base(bin), err, s.Stderr)
	}
	return s
}

// StartErr is Start for tests that expect Connect to fail: it returns the
// error, and a Server whose Stderr and Cmd can still be inspected (Session
// is nil then). Either way the process is reaped when the test ends.
func StartErr(t testing.TB, bin string, opts Options) (*Server, error) {
	t.Helper()
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 10 * time.Second
	}
	if opts.TerminateDuration <= 0 {
		opts.TerminateDuration = time.Second
	}
	s := &Server{Stderr: &Stderr{}}
	s.Cmd = exec.Command(bin, opts.Args...)
	// A -race binary sleeps a second at exit, waiting for late reports,
	// unless told otherwise; that second would be paid by every test.
	s.Cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "GORACE=atexit_sleep_ms=10"}, opts.Env...)
	s.Cmd.Stderr = s.Stderr
	t.Cleanup(func() { s.cleanup(t) })

	client := mcp.NewClient(&mcp.Implementation{Name: "fixturetest", Version: "1.0.0"}, opts.Client)
	ctx, cancel := context.WithTimeout(context.Background(), opts.ConnectTimeout)
	defer cancel()
	var sopts *mcp.ClientSessionOptions
	if opts.Protocol != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: opts.Protocol}
	}
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: s.Cmd, TerminateDuration: opts.TerminateDuration}, sopts)
	if err != nil {
		return s, err
	}
	s.Session = cs
	return s, nil
}

// Close closes the session, which closes the server's stdin and waits for
// it to exit (then SIGTERM, then SIGKILL). It returns the process's exit
// error, if any.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if s.Session != nil {
			s.closeErr = s.Session.Close()
		}
	})
	return s.closeErr
}

// Protocol is the revision the session negotiated.
func (s *Server) Protocol() string {
	if s.Session == nil || s.Session.InitializeResult() == nil {
		return ""
	}
	return s.Session.InitializeResult().ProtocolVersion
}

func (s *Server) cleanup(t testing.TB) {
	_ = s.Close() // an exit status is the test's business, not cleanup's
	if s.Cmd.Process != nil && s.Cmd.ProcessState == nil {
		// Connect failed before the SDK could reap the process.
		_ = s.Cmd.Process.Kill()
		_ = s.Cmd.Wait()
	}
	if s.Cmd.Process != nil && s.Cmd.ProcessState == nil {
		t.Errorf("server process %d was not reaped", s.Cmd.Process.Pid)
	}
	if strings.Contains(s.Stderr.String(), "WARNING: DATA RACE") {
		t.Errorf("the server reported a data race:\n%s", s.Stderr)
	}
}

// Meta is the _meta a host sends with a request: the correlation keys of
// internal/record.
func Meta(traceID string, step int) mcp.Meta {
	return mcp.Meta{
		record.MetaSessionID: SessionID,
		record.MetaTraceID:   traceID,
		record.MetaStep:      step,
	}
}

// Text joins the text items of a result's content.
func Text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Structured decodes a result's structuredContent into a T.
func Structured[T any](t testing.TB, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("structuredContent: %v", err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
	return v
}

// Stderr collects a server's stderr and reads its request log.
type Stderr struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func (s *Stderr) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	return s.buf.Write(p)
}

func (s *Stderr) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// Lines returns every line written so far.
func (s *Stderr) Lines() []string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s.String()))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// Entries returns the request log lines written so far.
func (s *Stderr) Entries() []fixture.Entry {
	var entries []fixture.Entry
	for _, line := range s.Lines() {
		var e fixture.Entry
		if json.Unmarshal([]byte(line), &e) == nil && e.Operation == fixture.OpRequest {
			entries = append(entries, e)
		}
	}
	return entries
}

// WaitEntry waits up to timeout for a request log line that match accepts,
// and fails the test if none comes.
func (s *Stderr) WaitEntry(t testing.TB, timeout time.Duration, match func(fixture.Entry) bool) fixture.Entry {
	t.Helper()
	var found fixture.Entry
	s.wait(t, timeout, func() bool {
		for _, e := range s.Entries() {
			if match(e) {
				found = e
				return true
			}
		}
		return false
	}, "a matching request log line")
	return found
}

// WaitLine waits up to timeout for a line containing substr, and fails the
// test if none comes.
func (s *Stderr) WaitLine(t testing.TB, timeout time.Duration, substr string) string {
	t.Helper()
	var found string
	s.wait(t, timeout, func() bool {
		for _, l := range s.Lines() {
			if strings.Contains(l, substr) {
				found = l
				return true
			}
		}
		return false
	}, fmt.Sprintf("a line containing %q", substr))
	return found
}

func (s *Stderr) wait(t testing.TB, timeout time.Duration, done func() bool, what string) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		changed := s.changed
		s.mu.Unlock()
		if done() {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("no %s within %v; stderr:\n%s", what, timeout, s)
			return
		}
	}
}

// ToolCall is a tools/call entry for the named tool carrying trace id and step.
func ToolCall(tool, traceID string, step int) func(fixture.Entry) bool {
	return func(e fixture.Entry) bool {
		return e.Method == "tools/call" && e.Tool == tool && e.TraceID == traceID && e.Step == step
	}
}
