package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hosteval/hosteval/servers/fixturetest"
)

func TestRunProcs(t *testing.T) {
	tests := []struct {
		name               string
		env                map[string]string
		concurrency, cases int
		want               int
	}{
		{"one case", nil, 8, 1, 1},
		{"one at a time", nil, 1, 500, 1},
		{"several at once", nil, 2, 3, 0},
		{"no case", nil, 4, 0, 0},
		{"the user's GOMAXPROCS", map[string]string{"GOMAXPROCS": "4"}, 1, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runProcs(func(k string) string { return tt.env[k] }, tt.concurrency, tt.cases)
			if got != tt.want {
				t.Errorf("runProcs(concurrency %d, cases %d) = %d, want %d", tt.concurrency, tt.cases, got, tt.want)
			}
		})
	}
}

// TestRunSetsOneProc runs hosteval run in-process and records what it
// asks of GOMAXPROCS: one P for a run of one conversation at a time,
// nothing for a run of several at once or when the user set GOMAXPROCS.
func TestRunSetsOneProc(t *testing.T) {
	const scenario = `name: hello
repeat: REPEAT
model:
  scripted:
    - answer: hello
question: say hello
expect:
  - answer_matches: hello
`
	tests := []struct {
		name   string
		repeat string
		args   []string
		env    map[string]string
		want   []int
	}{
		{"one case", "1", nil, nil, []int{1}},
		{"three, one at a time", "3", []string{"-concurrency", "1"}, nil, []int{1}},
		{"three at once", "3", []string{"-concurrency", "3"}, nil, nil},
		{"GOMAXPROCS set", "1", nil, map[string]string{"GOMAXPROCS": "2"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "hello.yaml")
			if err := os.WriteFile(file, []byte(strings.Replace(scenario, "REPEAT", tt.repeat, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			var set []int
			var stdout, stderr fixturetest.Buffer
			e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
				getenv:   func(k string) string { return tt.env[k] },
				maxProcs: func(n int) { set = append(set, n) }}
			// A guard against a hang, not a budget.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := append(append([]string{"run", "-out", filepath.Join(dir, "results")}, tt.args...), file)
			if code := runEnv(ctx, e, args); code != 0 {
				t.Fatalf("hosteval run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
			}
			if !slices.Equal(set, tt.want) {
				t.Errorf("GOMAXPROCS set to %v, want %v", set, tt.want)
			}
		})
	}
}
