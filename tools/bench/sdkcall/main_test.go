package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hosteval/hosteval/servers/fixturetest"
)

var cmdb string

func TestMain(m *testing.M) {
	os.Exit(fixturetest.Main(m, "github.com/hosteval/hosteval/servers/cmdb", &cmdb))
}

// gone reports whether no process has the pid in file (sdkcall's server
// was its child, so once reaped its pid is free).
func gone(t *testing.T, file string) bool {
	t.Helper()
	pid, err := fixturetest.WaitPID(file, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// TestSdkcallReapsItsServer runs sdkcall on servers that end every way
// but the calls: one that exits at the end of its input, one that ignores
// it (SIGTERM after the grace), one that never answers the handshake (the
// context ends), and checks each time that the server is gone when run
// returns.
func TestSdkcallReapsItsServer(t *testing.T) {
	tests := []struct {
		name    string
		script  string // run by sh -c with $1 the pid file and $2 cmdb; exec keeps the pid
		timeout time.Duration
		wantErr string
	}{
		{"exits at the end of its input", `echo $$ > "$1"; exec "$2"`, 0, ""},
		{"ignores the end of its input", `echo $$ > "$1"; "$2"; exec sleep 300`, 0, ""},
		{"never answers", `echo $$ > "$1"; exec sleep 300`, 2 * time.Second, "context deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "server.pid")
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			err := run(ctx, []string{"-n", "3", "-tool", "get_asset", "-args", `{"hostname":"jump-prod-02"}`, "--",
				"/bin/sh", "-c", tt.script, "server", pidFile, cmdb})
			if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("run = %v, want an error with %q", err, tt.wantErr)
			}
			if !gone(t, pidFile) {
				t.Error("the server still runs after sdkcall's run returned")
			}
		})
	}
}

func TestSdkcallNamesAToolError(t *testing.T) {
	err := run(context.Background(), []string{"-n", "1", "-tool", "no_such_tool", "--", cmdb})
	if err == nil {
		t.Fatal("run = nil, want the call's error")
	}
}

// TestSdkcallAsHost: with -as-host the client declares the elicitation
// capability and lists the tools once, before the calls; without, it does
// neither. Either way its first message is server/discover, as hosteval's
// (the floor's handshake is the host's). The server's input is copied to a
// file on its way.
func TestSdkcallAsHost(t *testing.T) {
	for _, asHost := range []bool{false, true} {
		t.Run(fmt.Sprint("as-host=", asHost), func(t *testing.T) {
			input := filepath.Join(t.TempDir(), "input")
			args := []string{"-n", "2", "-tool", "get_asset", "-args", `{"hostname":"jump-prod-02"}`}
			if asHost {
				args = append(args, "-as-host")
			}
			args = append(args, "--", "/bin/sh", "-c", `tee "$1" | "$2"`, "server", input, cmdb)
			if err := run(context.Background(), args); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(input)
			if err != nil {
				t.Fatal(err)
			}
			lists := strings.Count(string(data), `"method":"tools/list"`)
			elicitation := strings.Contains(string(data), `"elicitation":{`)
			calls := strings.Count(string(data), `"method":"tools/call"`)
			want := 0
			if asHost {
				want = 1
			}
			if first, _, _ := strings.Cut(string(data), "\n"); !strings.Contains(first, `"method":"server/discover"`) {
				t.Errorf("the first message is %s, want server/discover", first)
			}
			if lists != want || elicitation != asHost || calls != 2 {
				t.Errorf("%d listings, elicitation declared %v, %d calls; want %d, %v, 2\n%s", lists, elicitation, calls, want, asHost, data)
			}
		})
	}
}
