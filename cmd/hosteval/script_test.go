package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"gopkg.in/yaml.v3"

	"github.com/hosteval/hosteval/internal/longtest"
	"github.com/hosteval/hosteval/internal/table/tabletest"
	"github.com/hosteval/hosteval/servers/fakeapi/endpoint"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// End-to-end tests of the CLI: txtar scripts under testdata/script run the
// hosteval binary (this test binary, re-executed) on real scenario files,
// against the fixture servers built once for the whole run and found at
// $BIN. Run with -update to rewrite the scripts' golden sections.

var update = flag.Bool("update", false, "rewrite the scripts' expected output")

// fixtureBin holds the fixture servers' binaries.
var fixtureBin string

// withFixtures builds the fixture servers around the tests.
type withFixtures struct{ m *testing.M }

func (w withFixtures) Run() int { return fixturetest.MainAll(w.m, &fixtureBin) }

func TestMain(m *testing.M) {
	// A binary built with -race sleeps a second when it exits (the race
	// runtime's atexit_sleep_ms), and the scripts and tests here start
	// the race-built hosteval over 300 times, mostly one after another:
	// minutes of sleep that put go test -race -count=3 past its timeout.
	// Ten milliseconds, as the fixture servers get (fixturetest), unless
	// GORACE already says; scripts and commands inherit it.
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=10"))
	}
	testscript.Main(withFixtures{m}, map[string]func(){
		"hosteval": main,
		"cpuwrap":  cpuwrap, // the benchmarks' server wrapper (endpoint_bench_test.go)
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("BIN", fixtureBin)
			// The pinned npm servers (make node-deps).
			nodeModules, err := filepath.Abs("../../tools/node/node_modules")
			if err != nil {
				return err
			}
			env.Setenv("NODE_MODULES", nodeModules)
			env.Setenv("CI", "true")
			return nil
		},
		// [long] holds with HOSTEVAL_LONG_TESTS=1 (internal/longtest):
		// a script that runs the npm peers starts with
		// [!long] skip '...'.
		Condition: func(cond string) (bool, error) {
			if cond == "long" {
				return longtest.On(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// status N cmd args... runs cmd and checks its exit code.
			"status": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: status N command [args...]")
				}
				want, err := strconv.Atoi(args[0])
				ts.Check(err)
				err = ts.Exec(args[1], args[2:]...)
				got := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					got = ee.ExitCode()
				} else if err != nil {
					ts.Fatalf("%v", err)
				}
				if got != want {
					ts.Fatalf("exit status %d, want %d", got, want)
				}
			},
			// fakeapi FILE serves the test endpoint (servers/fakeapi/endpoint)
			// with the rules in FILE until the script ends, and sets
			// OPENAI_BASE_URL to it.
			"fakeapi": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: fakeapi FILE")
				}
				var cfg endpoint.Config
				ts.Check(yaml.Unmarshal([]byte(ts.ReadFile(args[0])), &cfg))
				h, err := endpoint.New(cfg)
				ts.Check(err)
				srv := httptest.NewServer(h)
				ts.Defer(srv.Close)
				ts.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
			},
			// replace FILE OLD NEW replaces every OLD in FILE with NEW.
			"replace": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 3 {
					ts.Fatalf("usage: replace FILE OLD NEW")
				}
				data := ts.ReadFile(args[0])
				if !strings.Contains(data, args[1]) {
					ts.Fatalf("%s has no %q", args[0], args[1])
				}
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.ReplaceAll(data, args[1], args[2])), 0o644))
			},
			// fits N checks that every line of the text tables on stdout
			// (title, header, rule, rows and notes) takes at most N
			// display columns and ends in no space; ! fits N that some
			// line does not. fits -all N [stdout|stderr] checks every
			// line of the file (stdout by default), tables or not.
			"fits": func(ts *testscript.TestScript, neg bool, args []string) {
				all := len(args) > 0 && args[0] == "-all"
				if all {
					args = args[1:]
				}
				file := "stdout"
				switch {
				case all && len(args) == 2 && (args[1] == "stdout" || args[1] == "stderr"):
					file = args[1]
				case len(args) != 1:
					ts.Fatalf("usage: fits [-all] N [stdout|stderr]")
				}
				width, err := strconv.Atoi(args[0])
				ts.Check(err)
				find, what := tabletest.Overflows, "table lines"
				if all {
					find, what = tabletest.Lines, "lines of "+file
				}
				problems, checked := find(ts.ReadFile(file), width)
				switch {
				case checked == 0:
					ts.Fatalf("no table on stdout")
				case neg && len(problems) == 0:
					ts.Fatalf("every one of the %d %s fits %d columns", checked, what, width)
				case !neg && len(problems) > 0:
					ts.Fatalf("%d of %d %s do not fit %d columns:\n%s", len(problems), checked, what, width, strings.Join(problems, "\n"))
				}
			},
			// profile cpu|mem|trace FILE checks that FILE is a CPU or
			// memory profile in pprof's format, or a Go execution trace.
			"profile": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: profile cpu|mem|trace FILE")
				}
				if err := checkProfile(args[0], []byte(ts.ReadFile(args[1]))); err != nil {
					ts.Fatalf("%s: %v", args[1], err)
				}
			},
			// records DIR N checks that DIR/records.jsonl has N lines.
			"records": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: records DIR N")
				}
				data := ts.ReadFile(filepath.Join(args[0], "records.jsonl"))
				n := 0
				for _, c := range data {
					if c == '\n' {
						n++
					}
				}
				if want, _ := strconv.Atoi(args[1]); (n == want) == neg {
					ts.Fatalf("records.jsonl has %d lines, want %s", n, args[1])
				}
			},
		},
	})
}
