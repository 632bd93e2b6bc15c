package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/interleave"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scenario"
	"github.com/hosteval/hosteval/internal/tokens"
)

// Runner throughput on the two-server ticket scenario (a lookup on cmdb,
// then a ticket the person confirms through input_required), with a
// scripted model, against the floor: the same servers spawned, connected
// and called by the bare SDK, with no harness. Each iteration runs a batch
// of cases; cases/s and peak memory per concurrent case (this process and
// every server process, by RSS, less what the idle harness holds before the
// run: the o200k vocabulary and the runtime are paid once, not per case)
// are reported, and the harness's own base beside them. Shared servers start once per
// run, so their batch is a run of realistic length, not a handful of cases.

const (
	batch       = 20
	sharedBatch = 200
)

const ticketScenario = `name: ticket
servers: [cmdb, tickets]
repeat: %d
model:
  scripted:
    - call: "cmdb__get_asset {hostname: jump-prod-02}"
    - call: "tickets__open_ticket {host: jump-prod-02, summary: brute force}"
    - answer: "Opened the ticket."
question: "who owns jump-prod-02? Open a ticket for it"
elicitation:
  - {server: tickets, action: accept, content: {priority: P1}}
approvals: [tickets__open_ticket]
expect:
  - {tool: tickets__open_ticket, outcome: ok, rounds: 2}
`

func benchCases(b *testing.B, shareable bool, n int) []*scenario.Case {
	dir := b.TempDir()
	servers := fmt.Sprintf("servers:\n  cmdb:\n    command: %[1]s/cmdb\n    shareable: %[2]t\n  tickets:\n    command: %[1]s/tickets\n    shareable: %[2]t\n", fixtureBin, shareable)
	os.WriteFile(filepath.Join(dir, "servers.yaml"), []byte(servers), 0o644)
	os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(fmt.Sprintf(ticketScenario, n)), 0o644)
	return loadCases(b, filepath.Join(dir, "s.yaml"))
}

func benchRunner(b *testing.B, share bool, concurrency, n int, logs string) {
	cases := benchCases(b, share, n)
	mem := watchMemory()
	ran := 0
	for b.Loop() {
		res, err := Run(context.Background(), cases, Options{Dir: b.TempDir(), RunID: "bench", Concurrency: concurrency, Share: share, Logs: logs})
		if err != nil || res.Passed != n {
			b.Fatalf("run: %v, %+v", err, res)
		}
		ran += res.Ran
	}
	b.ReportMetric(float64(ran)/b.Elapsed().Seconds(), "cases/s")
	peak, base := mem.stop()
	b.ReportMetric((peak-base)/float64(concurrency), "MB/case")
	b.ReportMetric(base, "MB-base")
}

func BenchmarkRunnerFresh(b *testing.B) { benchRunner(b, false, runtime.NumCPU(), batch, LogsAll) }

// BenchmarkRunnerShared keeps the logs of failed cases only (-logs failed),
// as a large run would: a file per case costs more than the case itself
// when the servers are already running. BenchmarkRunnerSharedAllLogs is the
// default, a log file per case.
func BenchmarkRunnerShared(b *testing.B) {
	benchRunner(b, true, 4*runtime.NumCPU(), sharedBatch, LogsFailed)
}

func BenchmarkRunnerSharedAllLogs(b *testing.B) {
	benchRunner(b, true, 4*runtime.NumCPU(), sharedBatch, LogsAll)
}

// BenchmarkFloorSDK is the same work without the harness: per case, start
// both servers, connect (server/discover), list tools, call get_asset, call
// open_ticket (the SDK answers the input_required round itself), close.
func BenchmarkFloorSDK(b *testing.B) {
	concurrency := runtime.NumCPU()
	mem := watchMemory()
	ran := 0
	for b.Loop() {
		var g errgroup.Group
		g.SetLimit(concurrency)
		for range batch {
			g.Go(func() error { return floorCase(context.Background()) })
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		ran += batch
	}
	b.ReportMetric(float64(ran)/b.Elapsed().Seconds(), "cases/s")
	peak, base := mem.stop()
	b.ReportMetric((peak-base)/float64(concurrency), "MB/case")
	b.ReportMetric(base, "MB-base")
}

func floorCase(ctx context.Context) error { return floorCaseSpeaking(ctx, floorBare) }

// floorProtocol is what the floor's requests carry beyond the calls: the
// bare SDK's defaults, or what the host sends.
type floorProtocol int

const (
	floorBare floorProtocol = iota
	// floorAsHost follows the servers' tool changes (the SDK opens a
	// subscriptions/listen stream to a server that offers them, and
	// cancels it as it closes) and sends the _meta the host sends: the
	// host's protocol without the harness.
	floorAsHost
)

func floorCaseSpeaking(ctx context.Context, protocol floorProtocol) error {
	var cmdb, tickets *mcp.ClientSession
	var g errgroup.Group
	g.Go(func() (err error) { cmdb, err = floorConnect(ctx, "cmdb", protocol); return err })
	g.Go(func() (err error) { tickets, err = floorConnect(ctx, "tickets", protocol); return err })
	if err := g.Wait(); err != nil {
		return err
	}
	defer cmdb.Close()
	defer tickets.Close()
	m := newFloorMeta(protocol)
	for _, cs := range []*mcp.ClientSession{cmdb, tickets} {
		var params *mcp.ListToolsParams
		if meta := m.list(); meta != nil {
			params = &mcp.ListToolsParams{Meta: meta}
		}
		if _, err := cs.ListTools(ctx, params); err != nil {
			return err
		}
	}
	return floorCalls(ctx, cmdb, tickets, m)
}

// floorConnect starts a fixture server and connects the bare SDK to it,
// with an elicitation handler that accepts as the scenario's person does.
func floorConnect(ctx context.Context, name string, protocol floorProtocol) (*mcp.ClientSession, error) {
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"priority": "P1"}}, nil
		},
	}
	if protocol == floorAsHost {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "floor", Version: "1"}, opts)
	return client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(filepath.Join(fixtureBin, name)), TerminateDuration: 100 * time.Millisecond}, nil)
}

// floorMeta makes the _meta of the floor's requests: none for the bare
// SDK, the host's otherwise (a progress token on every request; session,
// trace, step and traceparent on a call).
type floorMeta struct {
	on             bool
	session, trace string
	token          int
}

func newFloorMeta(protocol floorProtocol) *floorMeta {
	return &floorMeta{on: protocol == floorAsHost, session: host.NewID(), trace: host.NewID()}
}

func (m *floorMeta) list() mcp.Meta {
	if !m.on {
		return nil
	}
	m.token++
	return mcp.Meta{"progressToken": "floor-" + strconv.Itoa(m.token)}
}

func (m *floorMeta) call(step int) mcp.Meta {
	if !m.on {
		return nil
	}
	meta := m.list()
	meta[record.MetaSessionID], meta[record.MetaTraceID], meta[record.MetaStep] = m.session, m.trace, step
	meta[record.MetaTraceparent] = fmt.Sprintf("00-%s-%016x-01", m.trace, step)
	return meta
}

// floorCalls is a case's calls: get_asset, then open_ticket (the SDK
// answers the input_required round itself).
func floorCalls(ctx context.Context, cmdb, tickets *mcp.ClientSession, m *floorMeta) error {
	if _, err := cmdb.CallTool(ctx, &mcp.CallToolParams{Meta: m.call(1), Name: "get_asset", Arguments: map[string]any{"hostname": "jump-prod-02"}}); err != nil {
		return err
	}
	res, err := tickets.CallTool(ctx, &mcp.CallToolParams{Meta: m.call(2), Name: "open_ticket", Arguments: map[string]any{"host": "jump-prod-02", "summary": "brute force"}})
	if err != nil || res.IsError {
		return fmt.Errorf("open_ticket: %v %v", err, res)
	}
	return nil
}

// memoryWatch samples the resident memory of this process and all its
// descendants, and keeps the peak.
type memoryWatch struct {
	stopc      chan struct{}
	wg         sync.WaitGroup
	peak, base int64
}

func watchMemory() *memoryWatch {
	tokens.Count("warm the vocabulary up before measuring the base")
	runtime.GC()
	m := &memoryWatch{stopc: make(chan struct{}), base: treeRSS(os.Getpid())}
	m.wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			if rss := treeRSS(os.Getpid()); rss > m.peak {
				m.peak = rss
			}
			select {
			case <-t.C:
			case <-m.stopc:
				return
			}
		}
	})
	return m
}

// stop ends the sampling and returns the peak and the base in MB.
func (m *memoryWatch) stop() (peak, base float64) {
	close(m.stopc)
	m.wg.Wait()
	return float64(m.peak) / (1 << 20), float64(m.base) / (1 << 20)
}

// treeRSS is the resident memory in bytes of pid and its descendants,
// found through each thread's children list: scanning all of /proc on every
// sample cost the benchmark more than the cases it measures.
func treeRSS(pid int) int64 {
	var total int64
	p := strconv.Itoa(pid)
	if data, err := os.ReadFile("/proc/" + p + "/statm"); err == nil {
		if f := strings.Fields(string(data)); len(f) > 1 {
			pages, _ := strconv.ParseInt(f[1], 10, 64)
			total += pages * int64(os.Getpagesize())
		}
	}
	tasks, _ := filepath.Glob("/proc/" + p + "/task/*/children")
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, c := range strings.Fields(string(data)) {
			if child, err := strconv.Atoi(c); err == nil {
				total += treeRSS(child)
			}
		}
	}
	return total
}

// BenchmarkRunnerVsFloor is the fresh-process row of issue 15's table: a
// batch of the ticket scenario's cases with fresh servers each, through the
// runner and through the bare SDK (BenchmarkFloorSDK's work), in turns.
func BenchmarkRunnerVsFloor(b *testing.B) {
	const n = batch
	cases := benchCases(b, false, n)
	concurrency := runtime.NumCPU()
	interleave.Measure(b, 1, "case",
		interleave.Side{Name: "runner", Run: func() int { return runBatch(b, cases, concurrency, false, LogsAll) }},
		interleave.Side{Name: "floor", Run: func() int { return floorBatch(b, n, concurrency, floorCase) }},
	)
}

// BenchmarkRunnerVsFloorAsHost is BenchmarkRunnerVsFloor against a floor
// that speaks the host's protocol (floorAsHost): the harness's own cost
// over what the host's requests must carry, as
// BenchmarkCallHostVsSDKSameMeta is for a call.
func BenchmarkRunnerVsFloorAsHost(b *testing.B) {
	const n = batch
	cases := benchCases(b, false, n)
	concurrency := runtime.NumCPU()
	interleave.Measure(b, 1, "case",
		interleave.Side{Name: "runner", Run: func() int { return runBatch(b, cases, concurrency, false, LogsAll) }},
		interleave.Side{Name: "floor", Run: func() int {
			return floorBatch(b, n, concurrency, func(ctx context.Context) error { return floorCaseSpeaking(ctx, floorAsHost) })
		}},
	)
}

// BenchmarkRunnerSharedVsFloor is the shared-servers row: cases of the
// ticket scenario on shared servers, -concurrency 8 -logs failed, through
// the runner, and the same calls made by the bare SDK on one session per
// server (the shared floor), in turns. A batch is a run of its own, so the
// runner's side pays for starting its servers once per batch, as a run
// does; the floor connects once per batch too.
func BenchmarkRunnerSharedVsFloor(b *testing.B) {
	const n, concurrency = 200, 8
	cases := benchCases(b, true, n)
	interleave.Measure(b, 1, "case",
		interleave.Side{Name: "runner", Run: func() int { return runBatch(b, cases, concurrency, true, LogsFailed) }},
		interleave.Side{Name: "floor", Run: func() int { return sharedFloorBatch(b, n, concurrency) }},
	)
}

func runBatch(b *testing.B, cases []*scenario.Case, concurrency int, share bool, logs string) int {
	res, err := Run(context.Background(), cases, Options{Dir: b.TempDir(), RunID: "bench", Concurrency: concurrency, Share: share, Logs: logs})
	if err != nil || res.Passed != len(cases) {
		b.Fatalf("run: %v, %+v", err, res)
	}
	return res.Ran
}

func floorBatch(b *testing.B, n, concurrency int, one func(context.Context) error) int {
	var g errgroup.Group
	g.SetLimit(concurrency)
	for range n {
		g.Go(func() error { return one(context.Background()) })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	return n
}

// sharedFloorBatch connects once to each server and runs n cases' calls
// on those sessions, concurrency at a time.
func sharedFloorBatch(b *testing.B, n, concurrency int) int {
	ctx := context.Background()
	cmdb, err := floorConnect(ctx, "cmdb", floorBare)
	if err != nil {
		b.Fatal(err)
	}
	defer cmdb.Close()
	tickets, err := floorConnect(ctx, "tickets", floorBare)
	if err != nil {
		b.Fatal(err)
	}
	defer tickets.Close()
	for _, cs := range []*mcp.ClientSession{cmdb, tickets} {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
	return floorBatch(b, n, concurrency, func(ctx context.Context) error { return floorCalls(ctx, cmdb, tickets, newFloorMeta(floorBare)) })
}
