package main

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
)

func TestGCBallast(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want int
	}{
		{nil, 16 << 20},
		{map[string]string{"GOGC": "200"}, 0},
		{map[string]string{"GOMEMLIMIT": "1GiB"}, 0},
	}
	for _, tt := range tests {
		if got := len(gcBallast(func(k string) string { return tt.env[k] })); got != tt.want {
			t.Errorf("env %v: ballast of %d bytes, want %d", tt.env, got, tt.want)
		}
	}
}

// TestGCBallastNotResident runs the command (this test binary as
// hosteval, see TestMain) with and without the ballast: it costs address
// space, not memory.
func TestGCBallastNotResident(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Maxrss in kilobytes is Linux's")
	}
	maxRSS := func(env ...string) int64 {
		cmd := &exec.Cmd{Path: os.Args[0], Args: []string{"hosteval", "version"}, Env: append(os.Environ(), env...)}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hosteval version: %v\n%s", err, out)
		}
		return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	}
	without := maxRSS("GOGC=100")
	with := maxRSS("GOGC=", "GOMEMLIMIT=")
	if with-without > 4<<20 {
		t.Errorf("peak resident memory %d bytes with the ballast, %d without", with, without)
	}
}
