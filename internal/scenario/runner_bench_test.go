package scenario

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
)

// Runner throughput on the two-server ticket scenario (a lookup on cmdb,
// then a ticket the person confirms through input_required), with a
// scripted model, against the floor: the same servers spawned, connected
// and called by the bare SDK, with no harness. Each iteration runs a batch
// of cases; cases/s and peak memory per concurrent case (this process and
// every server process, by RSS) are reported.

const batch = 20

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

func benchCases(b *testing.B, shareable bool) []*Case {
	dir := b.TempDir()
	servers := fmt.Sprintf("servers:\n  cmdb:\n    command: %[1]s/cmdb\n    shareable: %[2]t\n  tickets:\n    command: %[1]s/tickets\n    shareable: %[2]t\n", fixtureBin, shareable)
	os.WriteFile(filepath.Join(dir, "servers.yaml"), []byte(servers), 0o644)
	os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(fmt.Sprintf(ticketScenario, batch)), 0o644)
	s, err := Load(filepath.Join(dir, "s.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	cases, err := s.Cases(CaseOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return cases
}

func benchRunner(b *testing.B, share bool, concurrency int) {
	cases := benchCases(b, share)
	mem := watchMemory()
	ran := 0
	for b.Loop() {
		res, err := Run(context.Background(), cases, RunOptions{Dir: b.TempDir(), RunID: "bench", Concurrency: concurrency, Share: share})
		if err != nil || res.Passed != batch {
			b.Fatalf("run: %v, %+v", err, res)
		}
		ran += res.Ran
	}
	b.ReportMetric(float64(ran)/b.Elapsed().Seconds(), "cases/s")
	b.ReportMetric(mem.stop()/float64(concurrency), "MB/case")
}

func BenchmarkRunnerFresh(b *testing.B)  { benchRunner(b, false, runtime.NumCPU()) }
func BenchmarkRunnerShared(b *testing.B) { benchRunner(b, true, 4*runtime.NumCPU()) }

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
	b.ReportMetric(mem.stop()/float64(concurrency), "MB/case")
}

func floorCase(ctx context.Context) error {
	connect := func(name string) (*mcp.ClientSession, error) {
		client := mcp.NewClient(&mcp.Implementation{Name: "floor", Version: "1"}, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"priority": "P1"}}, nil
			},
		})
		return client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(filepath.Join(fixtureBin, name)), TerminateDuration: 100 * time.Millisecond}, nil)
	}
	var cmdb, tickets *mcp.ClientSession
	var g errgroup.Group
	g.Go(func() (err error) { cmdb, err = connect("cmdb"); return err })
	g.Go(func() (err error) { tickets, err = connect("tickets"); return err })
	if err := g.Wait(); err != nil {
		return err
	}
	defer cmdb.Close()
	defer tickets.Close()
	for _, cs := range []*mcp.ClientSession{cmdb, tickets} {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return err
		}
	}
	if _, err := cmdb.CallTool(ctx, &mcp.CallToolParams{Name: "get_asset", Arguments: map[string]any{"hostname": "jump-prod-02"}}); err != nil {
		return err
	}
	res, err := tickets.CallTool(ctx, &mcp.CallToolParams{Name: "open_ticket", Arguments: map[string]any{"host": "jump-prod-02", "summary": "brute force"}})
	if err != nil || res.IsError {
		return fmt.Errorf("open_ticket: %v %v", err, res)
	}
	return nil
}

// memoryWatch samples the resident memory of this process and all its
// descendants, and keeps the peak.
type memoryWatch struct {
	stopc chan struct{}
	wg    sync.WaitGroup
	peak  int64
}

func watchMemory() *memoryWatch {
	m := &memoryWatch{stopc: make(chan struct{})}
	m.wg.Go(func() {
		t := time.NewTicker(50 * time.Millisecond)
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

// stop ends the sampling and returns the peak in MB.
func (m *memoryWatch) stop() float64 {
	close(m.stopc)
	m.wg.Wait()
	return float64(m.peak) / (1 << 20)
}

// treeRSS is the resident memory in bytes of pid and its descendants.
func treeRSS(pid int) int64 {
	parents := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(fields) > 1 {
			pp, _ := strconv.Atoi(fields[1])
			parents[pp] = append(parents[pp], p)
		}
	}
	var total int64
	var walk func(int)
	walk = func(p int) {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/statm")
		if err == nil {
			if f := strings.Fields(string(data)); len(f) > 1 {
				pages, _ := strconv.ParseInt(f[1], 10, 64)
				total += pages * int64(os.Getpagesize())
			}
		}
		for _, c := range parents[p] {
			walk(c)
		}
	}
	walk(pid)
	return total
}
