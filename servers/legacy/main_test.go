package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/servers/fixturetest"
	"github.com/hosteval/hosteval/servers/internal/fixture"
)

var bin string

func TestMain(m *testing.M) {
	os.Exit(fixturetest.Main(m, "github.com/hosteval/hosteval/servers/legacy", &bin))
}

// TestClientFallsBack: the SDK client in auto mode probes with
// server/discover, is refused, and falls back to the initialize handshake;
// a client forced to 2025-11-25 never probes.
func TestClientFallsBack(t *testing.T) {
	tests := []struct {
		flavour, proto string
		wantDiscover   int // the error code server/discover was answered with; 0 when not sent
	}{
		{flavour: "unknown", proto: "", wantDiscover: -32601},
		{flavour: "unsupported", proto: "", wantDiscover: -32022},
		{flavour: "unknown", proto: fixturetest.Revision2025},
		{flavour: "unsupported", proto: fixturetest.Revision2025},
		{flavour: "silent", proto: fixturetest.Revision2025},
	}
	for _, tt := range tests {
		t.Run(tt.flavour+"/"+cmp.Or(tt.proto, "auto"), func(t *testing.T) {
			s := fixturetest.Start(t, bin, fixturetest.Options{Args: []string{"-discover=" + tt.flavour}, Protocol: tt.proto})
			if got := s.Protocol(); got != legacyRevision {
				t.Fatalf("negotiated %q, want %s", got, legacyRevision)
			}
			tools, err := s.Session.ListTools(t.Context(), nil)
			if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "hello" || tools.Tools[0].OutputSchema == nil {
				t.Fatalf("tools/list: %v %+v, want hello with an output schema", err, tools)
			}
			res, err := s.Session.CallTool(t.Context(), &mcp.CallToolParams{
				Name: "hello", Arguments: map[string]any{"name": "Amira"}, Meta: fixturetest.Meta("trace-legacy", 1),
			})
			if err != nil || res.IsError || fixturetest.Text(res) != "Hello, Amira!" {
				t.Fatalf("hello: %v %+v, want Hello, Amira!", err, res)
			}
			res, err = s.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "hello", Arguments: map[string]any{"name": ""}})
			if err != nil || !res.IsError {
				t.Errorf("hello with an empty name: %v %+v, want a tool error", err, res)
			}

			e := s.Stderr.WaitEntry(t, fixturetest.Timeout, fixturetest.ToolCall("hello", "trace-legacy", 1))
			if e.Outcome != fixture.OutcomeOK || e.Protocol != legacyRevision || e.SessionID != fixturetest.SessionID {
				t.Errorf("hello logged as %+v", e)
			}
			var discover []fixture.Entry
			for _, e := range s.Stderr.Entries() {
				if e.Method == methodDiscover {
					discover = append(discover, e)
				}
			}
			switch {
			case tt.wantDiscover == 0 && len(discover) != 0:
				t.Errorf("server/discover logged %+v, want it never sent", discover)
			case tt.wantDiscover != 0 && (len(discover) != 1 || discover[0].ErrorCode != tt.wantDiscover):
				t.Errorf("server/discover logged %+v, want one answer with error %d", discover, tt.wantDiscover)
			}
		})
	}
}

// TestSilentDiscoverHangsConnect documents what the SDK client does with a
// server that never answers server/discover: Connect waits until its
// context's deadline and fails. It does not fall back by itself, so a host
// must restart the server and connect with the initialize handshake.
func TestSilentDiscoverHangsConnect(t *testing.T) {
	const deadline = 750 * time.Millisecond
	start := time.Now()
	s, err := fixturetest.StartErr(t, bin, fixturetest.Options{Args: []string{"-discover=silent"}, ConnectTimeout: deadline})
	waited := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect: %v, want the deadline", err)
	}
	if waited < deadline {
		t.Errorf("Connect gave up after %v, before its %v deadline", waited, deadline)
	}
	// The SDK closed the session on failure, and the process exited.
	if s.Cmd.ProcessState == nil {
		t.Errorf("process still running after the failed Connect")
	}
	e := s.Stderr.WaitEntry(t, fixturetest.Timeout, func(e fixture.Entry) bool { return e.Method == methodDiscover })
	if e.Outcome != fixture.OutcomeUnanswered {
		t.Errorf("server/discover logged as %q, want unanswered", e.Outcome)
	}
}

// TestOnTheWire checks the raw answers, which the SDK client hides.
func TestOnTheWire(t *testing.T) {
	meta2026 := map[string]any{
		mcp.MetaKeyProtocolVersion:    "2026-07-28",
		mcp.MetaKeyClientCapabilities: map[string]any{},
	}
	discover := map[string]any{"jsonrpc": "2.0", "id": 1, "method": methodDiscover, "params": map[string]any{"_meta": meta2026}}
	tests := []struct {
		flavour string
		want    string // the answer to server/discover; "" for none
	}{
		{flavour: "unknown", want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method \"server/discover\" not found"}}`},
		{flavour: "unsupported", want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported protocol version",` +
			`"data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`},
		{flavour: "silent"},
	}
	for _, tt := range tests {
		t.Run(tt.flavour, func(t *testing.T) {
			w := startRaw(t, "-discover="+tt.flavour)
			w.send(t, discover)
			if tt.want != "" {
				if got := w.recv(t); got != tt.want {
					t.Errorf("server/discover answered\n%s\nwant\n%s", got, tt.want)
				}
			}
			// A 2026-07-28 request for anything else is refused with -32022.
			w.send(t, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": map[string]any{"_meta": meta2026}})
			if got := w.recv(t); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":2,"error":{"code":-32022,`) {
				t.Errorf("2026-07-28 tools/list answered %s, want -32022", got)
			}
			// The initialize handshake works, also after an unanswered discover.
			w.send(t, map[string]any{"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": map[string]any{
				"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"},
			}})
			if got := w.recv(t); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":3,"result":{"capabilities":`) || !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
				t.Errorf("initialize answered %s", got)
			}
		})
	}
}

func TestBadFlag(t *testing.T) {
	s, err := fixturetest.StartErr(t, bin, fixturetest.Options{Args: []string{"-discover=maybe"}})
	if err == nil {
		t.Fatal("connected, want the server to refuse the flag")
	}
	want := `legacy: -discover: want unknown, silent or unsupported, got "maybe"`
	if !strings.Contains(s.Stderr.String(), want) || s.Cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("stderr %q, %v; want %q and exit status 2", s.Stderr, s.Cmd.ProcessState, want)
	}
}

// raw talks JSON-RPC to a server process line by line, without the SDK.
type raw struct {
	stdin io.WriteCloser
	lines chan string
}

func startRaw(t *testing.T, args ...string) *raw {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"GORACE=atexit_sleep_ms=10"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &raw{stdin: stdin, lines: make(chan string)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	t.Cleanup(func() {
		stdin.Close() // the server exits on end of input
		for range r.lines {
		}
		<-done
		if err := cmd.Wait(); err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return r
}

func (r *raw) send(t *testing.T, msg any) {
	t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.stdin.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

func (r *raw) recv(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			t.Fatal("the server closed stdout")
		}
		return line
	case <-time.After(fixturetest.Timeout):
		t.Fatal("no answer")
		return ""
	}
}
