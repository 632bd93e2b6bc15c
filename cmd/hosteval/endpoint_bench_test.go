package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/servers/fakeapi/endpoint"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// BenchmarkEndpointEfficiency is issue 28's measure of a run against a
// real model endpoint, whose time is spent waiting: hosteval run as a
// whole process, -concurrency C -logs failed, against the fake endpoint
// (servers/fakeapi/endpoint, in this process) answering after a delay L,
// each case two model requests (a call of a shared cmdb's get_asset, then
// the answer) and that call. By Little's law C cases in flight, each
// taking r x L = 2 x L, finish at most C/(r x L) cases a second; the
// efficiency is the rate achieved over that bound, the rate taken over the
// cases' span in records.jsonl (the first case's start to the last one's
// end: the process's start and its reports are not the endpoint's time).
//
// The CPU a case costs is reported by who spent it, from rusage: hosteval
// itself (harness-cpu-ms/case), the shared cmdb (server-cpu-ms/case) and
// the endpoint (endpoint-cpu-ms/case); with C = 64 and L = 50 ms the
// bound is 640 cases a second, which two cores reach only if the three
// together cost under 3.1 ms a case. load1 is the machine's load average
// when the run ended: the efficiency is a wall-time figure and moves with
// the load, the CPU figures far less. `make bench-endpoint` runs it;
// HOSTEVAL_BENCH_CPUPROFILE=PREFIX has each run write hosteval's CPU
// profile to PREFIX.<delay>-C<C>.pprof.
func BenchmarkEndpointEfficiency(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("the servers' CPU is read from Linux's rusage")
	}
	wrap, err := exec.LookPath("cpuwrap")
	if err != nil {
		b.Fatalf("cpuwrap (TestMain's command) is not on PATH: %v", err)
	}
	for _, delay := range []time.Duration{200 * time.Millisecond, 50 * time.Millisecond} {
		for _, c := range []int{8, 32, 64} {
			b.Run(fmt.Sprintf("delay=%s/C=%d", delay, c), func(b *testing.B) {
				benchEndpoint(b, wrap, delay, c)
			})
		}
	}
}

// endpointBenchSeconds is how long the cases of one run would take at the
// bound: long enough that a case's start and end weigh little.
const endpointBenchSeconds = 6

func benchEndpoint(b *testing.B, wrap string, delay time.Duration, c int) {
	const requests = 2 // per case
	// A multiple of C, so that the bound is reachable: the last round of
	// cases is full.
	n := c * max(1, int(endpointBenchSeconds*time.Second/(requests*delay)))
	h, err := endpoint.New(endpoint.Config{
		Model: "gpt-oss-120b",
		Rules: []endpoint.Rule{{
			Match:  `(?i)who owns ([a-z0-9-]+)`,
			Calls:  []endpoint.Call{{Tool: "cmdb__get_asset", Args: `{"hostname": {{json (index .Groups 1)}}}`}},
			Answer: "{{.JSON.owner}} ({{.JSON.team}}) owns {{index .Groups 1}}.",
		}},
		Delay: delay,
	})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	dir := b.TempDir()
	serverCPU := filepath.Join(dir, "cmdb.cpu")
	files := map[string]string{
		"servers.yaml": fmt.Sprintf("servers:\n  cmdb:\n    command: %s\n    args: [%q, %q]\n    shareable: true\n", wrap, serverCPU, fixtureBin+"/cmdb"),
	}
	var args []string
	for i := 0; i*10000 < n; i++ { // a scenario repeats at most 10,000 times
		name := fmt.Sprintf("owner%d.yaml", i)
		files[name] = fmt.Sprintf(`name: owner%d
servers: [cmdb]
repeat: %d
model:
  openai: {base_url: %q, model: gpt-oss-120b}
question: who owns jump-prod-02?
expect:
  - {tool: cmdb__get_asset, outcome: ok}
  - {answer_matches: Camille Michel}
`, i, min(10000, n-i*10000), srv.URL+"/v1")
		args = append(args, name)
	}
	fixturetest.WriteFiles(b, dir, files)
	var eff, rate, harness, server, end, load float64
	for b.Loop() {
		run := []string{"run", "-concurrency", strconv.Itoa(c), "-logs", "failed", "-out", "results", "-run-id", "r"}
		if prof := os.Getenv("HOSTEVAL_BENCH_CPUPROFILE"); prof != "" {
			// hosteval's own profile of the run: where its CPU goes.
			run = append(run, "-cpuprofile", fmt.Sprintf("%s.%s-C%d.pprof", prof, delay, c))
		}
		var total, endpointCPU, cmdb time.Duration
		for attempt := 1; ; attempt++ {
			os.RemoveAll(filepath.Join(dir, "results"))
			os.Remove(serverCPU)
			before := selfCPU()
			total = runCPU(b, dir, append(run, args...)...)
			endpointCPU = selfCPU() - before
			var ok bool
			if cmdb, ok = readCPU(b, serverCPU); ok {
				break
			}
			// The server's grace ended before its wrapper wrote what
			// it used (a loaded machine): the group was killed, and
			// the CPU figures of this run are not whole.
			if attempt == 3 {
				b.Fatalf("the server's wrapper did not write %s in %d runs: the machine is too loaded for its grace", serverCPU, attempt)
			}
			b.Logf("run %d: the server's wrapper was stopped before it wrote its CPU time; running again", attempt)
		}
		span, passed := caseSpan(b, filepath.Join(dir, "results", "r"))
		if passed != n {
			b.Fatalf("%d of %d cases passed", passed, n)
		}
		rate = float64(n) / span.Seconds()
		eff = rate / (float64(c) / (requests * delay.Seconds()))
		perCase := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(n) }
		harness, server, end = perCase(total-cmdb), perCase(cmdb), perCase(endpointCPU)
		load = loadAverage1()
	}
	b.ReportMetric(eff, "efficiency")
	b.ReportMetric(rate, "cases/s")
	b.ReportMetric(harness, "harness-cpu-ms/case")
	b.ReportMetric(server, "server-cpu-ms/case")
	b.ReportMetric(end, "endpoint-cpu-ms/case")
	b.ReportMetric(harness+server+end, "cpu-ms/case")
	b.ReportMetric(load, "load1")
}

// runCPU runs this test binary as hosteval in dir and returns the CPU
// time of its process and of the processes it reaped.
func runCPU(b *testing.B, dir string, args ...string) time.Duration {
	b.Helper()
	cmd := &exec.Cmd{Path: os.Args[0], Args: append([]string{"hosteval"}, args...), Dir: dir, Env: append(os.Environ(), "CI=true", "OPENAI_API_KEY=", "HOSTEVAL_MODEL=")}
	output := &tail{}
	cmd.Stdout, cmd.Stderr = output, output
	if err := cmd.Run(); err != nil {
		b.Fatalf("hosteval %s: %v\n%s", strings.Join(args, " "), err, output.buf)
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// caseSpan is the time from the first case's start to the last one's
// end, and how many cases passed.
func caseSpan(b *testing.B, dir string) (time.Duration, int) {
	var first, last time.Time
	passed := 0
	if _, err := record.Scan(dir, func(rec *record.Record, _ int) error {
		end := rec.Started.Add(time.Duration(rec.MS * float64(time.Millisecond)))
		if first.IsZero() || rec.Started.Before(first) {
			first = rec.Started
		}
		if end.After(last) {
			last = end
		}
		if rec.Status == record.StatusPass {
			passed++
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	return last.Sub(first), passed
}

// selfCPU is this process's CPU time so far: the endpoint's, as the
// benchmark only waits while hosteval runs.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// readCPU reads what cpuwrap wrote; ok is false when it wrote nothing.
func readCPU(b *testing.B, path string) (time.Duration, bool) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false
	}
	if err != nil {
		b.Fatalf("the server's CPU time: %v", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		b.Fatalf("the server's CPU time: %v", err)
	}
	return time.Duration(ns), true
}

func loadAverage1() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
	return f
}

// cpuwrap FILE COMMAND [ARGS] is TestMain's command for the benchmarks:
// it runs COMMAND on its own standard input and output, exits with its
// status, and writes to FILE the CPU time, in nanoseconds, of COMMAND and
// of itself, so that a benchmark can tell a server's CPU from its host's
// (the host's rusage counts the processes it reaped). The wrapper adds
// the Go runtime's start, a millisecond or two, once per server.
func cpuwrap() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: cpuwrap FILE COMMAND [ARGS]")
		os.Exit(2)
	}
	// A signal to the process group reaches the server too; the wrapper
	// outlives it to write what it used.
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if cmd.ProcessState != nil {
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	// Written whole or not at all: a reader never sees half a number.
	tmp := os.Args[1] + ".tmp"
	werr := os.WriteFile(tmp, []byte(strconv.FormatInt(int64(cpu), 10)+"\n"), 0o644)
	if werr == nil {
		werr = os.Rename(tmp, os.Args[1])
	}
	if werr != nil {
		fmt.Fprintln(os.Stderr, "cpuwrap:", werr)
	}
	if cmd.ProcessState != nil {
		os.Exit(cmd.ProcessState.ExitCode())
	}
	fmt.Fprintln(os.Stderr, "cpuwrap:", err)
	os.Exit(1)
}
