package main

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// t0 is the formatter's start in the tests: two seconds before the first
// event of testdata/stream.jsonl.
var t0 = time.Date(2026, 12, 2, 10, 0, 40, 0, time.UTC)

func fixedClock() time.Time { return t0 }

// idleTicker never ticks within a test.
func idleTicker(time.Duration) *time.Ticker { return time.NewTicker(time.Hour) }

// TestStream: a real stream of go test -json (testdata/stream.jsonl: a
// package that did not build, one without test files, failed tests and
// subtests, a panic, a skip, a cached package, a slow one) is shown as
// testdata/stream.golden says, and the run fails.
func TestStream(t *testing.T) {
	in, err := os.Open("testdata/stream.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out, errs bytes.Buffer
	code := run([]string{"-phase", "go test -race", "-top", "3"}, in, &out, &errs, fixedClock, idleTicker)
	if code != 1 {
		t.Errorf("exit code %d, want 1 (tests failed)", code)
	}
	if errs.Len() > 0 {
		t.Errorf("stderr: %s", errs.String())
	}
	golden := "testdata/stream.golden"
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("output differs from %s (-want +got; go test -update rewrites it):\n%s", golden, diff)
	}
}

func TestExitCodes(t *testing.T) {
	pass := `{"Time":"2026-12-02T10:00:41Z","Action":"start","Package":"github.com/hosteval/hosteval/a"}
{"Time":"2026-12-02T10:00:41Z","Action":"run","Package":"github.com/hosteval/hosteval/a","Test":"TestA"}
{"Time":"2026-12-02T10:00:42Z","Action":"pass","Package":"github.com/hosteval/hosteval/a","Test":"TestA","Elapsed":1}
{"Time":"2026-12-02T10:00:42Z","Action":"pass","Package":"github.com/hosteval/hosteval/a","Elapsed":1.2}
`
	tests := []struct {
		name, in string
		want     int
		says     string
	}{
		{"all passed", pass, 0, "==> go test ok in 0m02s: 1 package ok, 0 failed, 0 without tests to run; tests: 1 passed, 0 failed, 0 skipped"},
		{"no events: go test did not run", "go: go.mod file not found\n", 1, "FAIL  go test: no test events (go test did not run)"},
		{"a package never finished", pass + `{"Time":"2026-12-02T10:00:43Z","Action":"start","Package":"github.com/hosteval/hosteval/b"}` + "\n", 1, "FAIL  b: it never finished"},
		{"a line that is not an event is passed on", "# vet says something\n" + pass, 0, "# vet says something"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if got := run(nil, strings.NewReader(tt.in), &out, &out, fixedClock, idleTicker); got != tt.want {
				t.Errorf("exit code %d, want %d; output:\n%s", got, tt.want, out.String())
			}
			if !strings.Contains(out.String(), tt.says) {
				t.Errorf("output does not say %q:\n%s", tt.says, out.String())
			}
		})
	}
}

// TestStillRunning: after -quiet without a package finishing, the packages
// still running are named, longest first, and not again before another
// -quiet has passed.
func TestStillRunning(t *testing.T) {
	now := t0
	var out bytes.Buffer
	p := &progress{out: &out, now: func() time.Time { return now }, start: t0, quiet: time.Minute,
		pkgs: map[string]*pkgState{}, builds: map[string][]string{}}
	p.last, p.noted = t0, t0
	p.line(`{"Time":"2026-12-02T10:00:41Z","Action":"start","Package":"github.com/hosteval/hosteval/internal/report"}`)
	p.line(`{"Time":"2026-12-02T10:00:50Z","Action":"start","Package":"github.com/hosteval/hosteval/internal/runner"}`)
	now = t0.Add(30 * time.Second)
	p.stillRunning()
	if out.Len() > 0 {
		t.Fatalf("named the running packages after 30s: %q", out.String())
	}
	now = t0.Add(100 * time.Second)
	p.stillRunning()
	p.stillRunning()
	want := " 1m40s  ...   still running: internal/report (1m39s), internal/runner (1m30s)\n"
	if got := out.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
