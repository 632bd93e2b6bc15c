package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/servers/fixturetest"
	"github.com/hosteval/hosteval/servers/internal/fixture"
)

var bin string

func TestMain(m *testing.M) {
	os.Exit(fixturetest.Main(m, "github.com/hosteval/hosteval/servers/chaos", &bin))
}

func callTool(ctx context.Context, s *fixturetest.Server, tool string, step int, args map[string]any) (*mcp.CallToolResult, error) {
	return s.Session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: fixturetest.Meta("trace-chaos", step)})
}

// carriesOn checks that the session still works after a fault.
func carriesOn(t *testing.T, s *fixturetest.Server) {
	t.Helper()
	res, err := callTool(t.Context(), s, "ok", 99, map[string]any{"message": "still there?"})
	if err != nil || res.IsError {
		t.Fatalf("ok after the fault: %v %+v", err, res)
	}
	if got := fixturetest.Structured[okOut](t, res); got != (okOut{OK: true, Message: "still there?"}) {
		t.Errorf("ok = %+v", got)
	}
}

// sessionDead checks that the session is gone for good after a fault.
func sessionDead(t *testing.T, s *fixturetest.Server) {
	t.Helper()
	if _, err := callTool(t.Context(), s, "ok", 99, nil); !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Errorf("ok after the fault: %v, want mcp.ErrConnectionClosed", err)
	}
}

func TestToolsList(t *testing.T) {
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto})
			res, err := s.Session.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			readOnly := map[string]bool{}
			for _, tool := range res.Tools {
				readOnly[tool.Name] = tool.Annotations.ReadOnlyHint
				if tool.OutputSchema == nil || tool.Description == "" {
					t.Errorf("%s: output schema %v, description %q", tool.Name, tool.OutputSchema != nil, tool.Description)
				}
				if tool.Name == "crash" && (tool.Annotations.DestructiveHint == nil || !*tool.Annotations.DestructiveHint) {
					t.Errorf("crash is not marked destructive")
				}
			}
			want := map[string]bool{"crash": false, "hang": true, "garbage": true, "huge": true, "weird_content": true, "plain_error": true, "ok": true}
			if diff := cmp.Diff(want, readOnly); diff != "" {
				t.Errorf("tools and read-only hints (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOK(t *testing.T) {
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto})
			carriesOn(t, s)
			e := s.Stderr.WaitEntry(t, fixturetest.Timeout, fixturetest.ToolCall("ok", "trace-chaos", 99))
			want := fixture.Entry{
				Operation: fixture.OpRequest, Server: "chaos", Method: "tools/call", Tool: "ok",
				Outcome: fixture.OutcomeOK, Protocol: proto, SessionID: fixturetest.SessionID, TraceID: "trace-chaos", Step: 99,
			}
			if diff := cmp.Diff(want, e, fixturetest.IgnoreTimes); diff != "" {
				t.Errorf("log line (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFaultsTheSessionSurvives: errors the client reports for one call,
// after which the same session goes on working.
func TestFaultsTheSessionSurvives(t *testing.T) {
	tests := []struct {
		tool    string
		check   func(t *testing.T, err error)
		logged  string
		logCode int
	}{
		{
			tool: "plain_error",
			check: func(t *testing.T, err error) {
				var werr *jsonrpc.Error
				if !errors.As(err, &werr) || werr.Code != 0 || werr.Message != "something went wrong" {
					t.Errorf("got %v, want a JSON-RPC error with code 0 and a plain message", err)
				}
			},
			logged: fixture.OutcomeError,
		},
		{
			tool: "weird_content",
			check: func(t *testing.T, err error) {
				if err == nil || !strings.Contains(err.Error(), `unrecognized content type "hologram"`) {
					t.Errorf("got %v, want the SDK refusing the hologram", err)
				}
			},
			logged: fixture.OutcomeOK, // the server answered; the client could not read it
		},
	}
	for _, proto := range fixturetest.Protocols {
		for i, tt := range tests {
			t.Run(proto+"/"+tt.tool, func(t *testing.T) {
				s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto})
				res, err := callTool(t.Context(), s, tt.tool, i, nil)
				if err == nil {
					t.Fatalf("got %+v, want an error", res)
				}
				tt.check(t, err)
				e := s.Stderr.WaitEntry(t, fixturetest.Timeout, fixturetest.ToolCall(tt.tool, "trace-chaos", i))
				if e.Outcome != tt.logged || e.ErrorCode != tt.logCode {
					t.Errorf("logged as %s %d, want %s %d", e.Outcome, e.ErrorCode, tt.logged, tt.logCode)
				}
				carriesOn(t, s)
			})
		}
	}
}

func TestCrash(t *testing.T) {
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto})
			_, err := callTool(t.Context(), s, "crash", 1, nil)
			if err == nil || !strings.Contains(err.Error(), "EOF") {
				t.Fatalf("got %v, want the connection to end (EOF)", err)
			}
			note := s.Stderr.WaitLine(t, fixturetest.Timeout, `"operation":"chaos.crash"`)
			if !strings.Contains(note, `"trace_id":"trace-chaos","step":1`) {
				t.Errorf("crash note %s lacks the call's trace id and step", note)
			}
			sessionDead(t, s)
			s.Close()
			if code := s.Cmd.ProcessState.ExitCode(); code != crashStatus {
				t.Errorf("exit status %d, want %d", code, crashStatus)
			}
		})
	}
}

// TestGarbage: a line on stdout that is not JSON breaks the go-sdk client's
// connection for good; the call fails with the decoder's error.
func TestGarbage(t *testing.T) {
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto})
			_, err := callTool(t.Context(), s, "garbage", 1, nil)
			if err == nil || !strings.Contains(err.Error(), "invalid character 'g' looking for beginning of value") {
				t.Fatalf("got %v, want a JSON syntax error", err)
			}
			sessionDead(t, s)
			// The server itself was fine: it answered, and logged it.
			s.Stderr.WaitEntry(t, fixturetest.Timeout, fixturetest.ToolCall("garbage", "trace-chaos", 1))
		})
	}
}

// TestHang: the call never answers; the caller's deadline ends the wait and
// the session carries on. On close the server, still draining the hung
// call, ignores its closed stdin until SIGTERM.
func TestHang(t *testing.T) {
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			const terminate = 300 * time.Millisecond
			s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto, TerminateDuration: terminate})
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			if _, err := callTool(ctx, s, "hang", 1, nil); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v, want the caller's deadline", err)
			}
			carriesOn(t, s)
			start := time.Now()
			s.Close()
			if took := time.Since(start); took < terminate {
				t.Errorf("closed in %v: the hung call should hold the server until SIGTERM after %v", took, terminate)
			}
			if s.Cmd.ProcessState == nil {
				t.Fatal("server not reaped")
			}
			if entries := s.Stderr.Entries(); len(entries) > 0 && entries[len(entries)-1].Tool == "hang" {
				t.Errorf("hang was logged as answered: %+v", entries[len(entries)-1])
			}
		})
	}
}

// TestHuge: 20 MB is more than the go-sdk client reads in one message
// (16 MB by default), so the connection fails; 1 MB gets through.
func TestHuge(t *testing.T) {
	s := fixturetest.Start(t, bin, fixturetest.Options{})
	res, err := callTool(t.Context(), s, "huge", 1, map[string]any{"bytes": 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := res.StructuredContent.(map[string]any)
	if data, _ := out["data"].(string); out["bytes"] != 1e6 || len(data) != 1_000_000 || strings.Trim(data, "x") != "" {
		t.Errorf("got %d bytes of data, labelled %v; want 1000000", len(data), out["bytes"])
	}
	carriesOn(t, s)

	_, err = callTool(t.Context(), s, "huge", 2, nil)
	if err == nil || !strings.Contains(err.Error(), "exceeded the configured maximum line length") {
		t.Fatalf("got %v, want the client refusing a frame over its limit", err)
	}
	sessionDead(t, s)
	e := s.Stderr.WaitEntry(t, fixturetest.Timeout, fixturetest.ToolCall("huge", "trace-chaos", 2))
	if e.Outcome != fixture.OutcomeOK {
		t.Errorf("logged as %s, want ok (the server answered)", e.Outcome)
	}
}
