package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/scenario"
)

func TestExitCode(t *testing.T) {
	load := &scenario.LoadError{Problems: []scenario.Problem{{File: "s.yaml", Line: 3, Path: "host.protocol", Msg: "unknown protocol mode"}}}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"ok", nil, exitOK},
		{"help", flag.ErrHelp, exitOK},
		{"a usage error", usagef("-concurrency must be at least 1"), exitUsage},
		{"a flag the flag package printed", shown{usageError{errors.New("flag provided but not defined: -x")}}, exitUsage},
		{"a scenario's problems", load, exitUsage},
		{"a configuration error from the host", fmt.Errorf("start: %w", fmt.Errorf("tools a__b and a_b collide: %w", host.ErrConfig)), exitUsage},
		{"a model endpoint refusing the configuration", configf("1 of 2 cases could not run: the model endpoint refused the configuration"), exitUsage},
		{"a failed case", failedf("1 of 2 cases failed"), exitFailed},
		{"interrupted", interruptedf("2 of 9 cases did not run"), exitSignaled},
		{"an interrupted context", fmt.Errorf("connect: %w", errInterrupted), exitSignaled},
		{"a server that would not start", errors.New("server cmdb: exited with status 1"), exitInfra},
		{"a verdict in a joined error", errors.Join(errors.New("server cmdb: exited"), failedf("x")), exitFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(tt.err); got != tt.want {
				t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestPrintError(t *testing.T) {
	load := &scenario.LoadError{Problems: []scenario.Problem{
		{File: "s.yaml", Line: 2, Path: "servers[1]", Msg: `no server "nope"`},
		{File: "s.yaml", Line: 3, Path: "host.protocol", Msg: "unknown protocol mode"},
	}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nothing", nil, ""},
		{"help", flag.ErrHelp, ""},
		{"shown by the flag package", shown{usageError{errors.New("bad flag")}}, ""},
		{"one line", usagef("-logs: want all, failed or none"), "hosteval: run: -logs: want all, failed or none\n"},
		{"a scenario's problems as they are", load, "s.yaml:2: servers[1]: no server \"nope\"\ns.yaml:3: host.protocol: unknown protocol mode\n"},
		{"joined errors, a line each", errors.Join(errors.New("server a: exited"), errors.New("server b: exited")),
			"hosteval: run: server a: exited\nhosteval: run: server b: exited\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			printError(&b, "run", tt.err)
			if b.String() != tt.want {
				t.Errorf("printed %q, want %q", b.String(), tt.want)
			}
		})
	}
}

// TestTerminalSummary: the one line a failed command leaves on the
// terminal when its stderr goes to a file.
func TestTerminalSummary(t *testing.T) {
	load := &scenario.LoadError{Problems: []scenario.Problem{
		{File: "s.yaml", Line: 3, Path: "host.protocol", Msg: "unknown protocol mode"},
		{File: "s.yaml", Line: 9, Path: "turns", Msg: "want a list"},
	}}
	tests := []struct {
		name string
		err  error
		code int
		want string
	}{
		{"one line", usagef("-script: open script.yaml: no such file or directory"), exitUsage,
			"hosteval: chat: -script: open script.yaml: no such file or directory (exit 2)"},
		{"several lines", load, exitUsage,
			"s.yaml:3: host.protocol: unknown protocol mode (exit 2; stderr has the rest)"},
		{"already shown", shown{usageError{errors.New("flag provided but not defined: -x")}}, exitUsage,
			"hosteval: chat: exit 2 (stderr says why)"},
		{"infrastructure", errors.New("server cmdb: exited with status 1"), exitInfra,
			"hosteval: chat: server cmdb: exited with status 1 (exit 3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := terminalSummary("chat", tt.err, tt.code); got != tt.want {
				t.Errorf("terminalSummary = %q, want %q", got, tt.want)
			}
		})
	}
}
