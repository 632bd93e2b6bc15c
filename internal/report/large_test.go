package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/longtest"
	"github.com/hosteval/hosteval/internal/record"
)

// synthRun writes a run folder of n records shaped like those of a cheap
// scenario on a shared server (one call with a 700-byte result, two model
// requests, two expectations, about 3 KB a line), with call latencies
// drawn from one distribution (median scale ms, a long tail) and every
// failEvery-th case failing (0: none).
func synthRun(tb testing.TB, dir, runID string, n int, scale float64, seed uint64, failEvery int) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, record.RecordsFile))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	rng := rand.New(rand.NewPCG(seed, 7))
	result := `{"hostname":"jump-prod-02","owner":"Camille Michel","notes":"` + strings.Repeat("SSH bastion for production access. ", 18) + `"}`
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	server := record.Server{Operation: record.OpConnect, Time: start, Name: "cmdb", Mode: "auto", Protocol: "2026-07-28",
		Offered: "2026-07-28", ServerName: "cmdb", ServerVersion: "1.0.0", Tools: 2, ConnectMS: 18.4, EraReason: "answered discover", Shared: true}
	settings := &record.Settings{Protocol: "auto", Budgets: budget.Budgets{ToolTimeout: 10 * time.Second, MaxResultBytes: 16384, MaxSteps: 8}, CaseTimeoutMS: 60000, Elicitation: true}
	for i := range n {
		// Log-normal latencies: what a server's calls look like.
		ms := record.RoundMS(scale * expNormal(rng))
		status, passed := record.StatusPass, true
		if failEvery > 0 && i%failEvery == failEvery-1 {
			status, passed = record.StatusFail, false
		}
		id := fmt.Sprintf("lookup#%d", i)
		rec := record.Record{
			Schema: record.SchemaVersion, RunID: runID, CaseID: id, Scenario: "lookup", File: "scenarios/cheap.yaml", Line: 1,
			Model: "scripted", Repeat: i, Status: status, Started: start.Add(time.Duration(i) * time.Millisecond), MS: ms + 2,
			SessionID: "ec74d9999f54a917e9d7d1ce382364af", Servers: []record.Server{server},
			Turns: []record.Turn{{Question: "who owns jump-prod-02?", Answer: "Camille Michel.", TraceID: "4857760b2caa6148159d0410c9e7774d", Steps: 1, Requests: 2, MS: ms + 1}},
			Calls: []record.Call{{
				Operation: record.OpToolCall, Time: start, SessionID: "ec74d9999f54a917e9d7d1ce382364af", TraceID: "4857760b2caa6148159d0410c9e7774d",
				Step: 1, Name: "cmdb__get_asset", Server: "cmdb", Tool: "get_asset", ArgKeys: []string{"hostname"},
				Arguments: map[string]any{"hostname": "jump-prod-02"}, Outcome: record.OutcomeOK, Approval: record.ApprovalAuto,
				Rounds: 1, MS: ms, ServerMS: ms - 0.1, ResultBytes: len(result), RawBytes: len(result), Structured: true,
				Result: result, Protocol: "2026-07-28",
			}},
			ModelRequests: []record.ModelRequest{
				{Operation: record.OpModelRequest, Time: start, SessionID: "s", TraceID: "t", Turn: 1, Index: 1, Model: "scripted", Messages: 1, ToolDefBytes: 812, ToolDefTokens: 166, ToolCalls: 1},
				{Operation: record.OpModelRequest, Time: start, SessionID: "s", TraceID: "t", Turn: 1, Index: 2, Model: "scripted", Messages: 3, ToolDefBytes: 812, ToolDefTokens: 166},
			},
			Expectations: []record.Expectation{
				{Name: "tool cmdb__get_asset outcome=ok", Line: 9, Passed: true},
				{Name: "answer_matches Camille", Line: 10, Passed: passed, Detail: map[bool]string{false: `answer "Nobody." does not match`}[passed]},
			},
			ToolDefs: record.ToolDefs{Tools: 2, Bytes: 812, Tokens: 166},
			Settings: settings,
		}
		data, err := json.Marshal(&rec)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(append(data, '\n'))
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	info, _ := json.Marshal(record.RunInfo{RunID: runID, Started: start, Finished: start.Add(time.Hour)})
	if err := os.WriteFile(filepath.Join(dir, record.RunInfoFile), info, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// expNormal is e^N(0, 0.5): a log-normal factor with median 1.
func expNormal(rng *rand.Rand) float64 {
	return math.Exp(rng.NormFloat64() * 0.5)
}

// heapPeak samples the live heap, as the last collection marked it, every
// few milliseconds until stopped, and keeps the largest. The live heap is
// what a flat report holds; the heap's objects in all (garbage not yet
// swept among them) peak wherever the collector's pacing lets them, and
// on a busy machine its mark workers fall behind: 45 MB against a limit
// of 43 under a loaded go test, for the same live heap.
type heapPeak struct {
	stop chan struct{}
	wg   sync.WaitGroup
	peak uint64
}

func watchHeap() *heapPeak {
	h := &heapPeak{stop: make(chan struct{})}
	sample := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	h.wg.Go(func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			rtmetrics.Read(sample)
			h.peak = max(h.peak, sample[0].Value.Uint64())
			select {
			case <-t.C:
			case <-h.stop:
				return
			}
		}
	})
	return h
}

func (h *heapPeak) done() uint64 {
	close(h.stop)
	h.wg.Wait()
	return h.peak
}

// TestReportLargeRunFlatMemory: reading and reporting a run of 100,000
// cases (10,000 under the race detector) holds a compact row per case and
// no record: the heap peaks well under what one record per case would
// take, and what stays is under 300 bytes a case. Every report file is
// written; those meant for people list the failures, not every case.
func TestReportLargeRunFlatMemory(t *testing.T) {
	longtest.Require(t, "writes and reads a run of 100,000 cases: 3 minutes on a busy machine")
	n := 100_000
	if raceEnabled {
		n = 10_000
	}
	dir := filepath.Join(t.TempDir(), "big")
	synthRun(t, dir, "big", n, 20, 1, 1000)
	st, _ := os.Stat(filepath.Join(dir, record.RecordsFile))

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := watchHeap()
	s, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteReports(dir, s, Options{}); err != nil {
		t.Fatal(err)
	}
	top := peak.done()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	kept := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d cases, records.jsonl %d MB: heap peak %d MB, %d bytes a case kept", n, st.Size()>>20, top>>20, kept/int64(n))
	runtime.KeepAlive(s)

	if s.Totals.Cases != n || s.Totals.Failed != n/1000 || len(s.Failures) != n/1000 {
		t.Fatalf("totals %+v, %d failures; want %d cases, %d failed", s.Totals, len(s.Failures), n, n/1000)
	}
	// A record decoded takes several KB; a case here may take one, the
	// garbage of decoding and the collector's headroom included.
	if limit := uint64(24<<20 + 1024*n); top > limit {
		t.Errorf("heap peaked at %d MB reading %d MB of records; want under %d MB", top>>20, st.Size()>>20, limit>>20)
	}
	if kept > int64(n)*320 {
		t.Errorf("%d bytes a case kept after reading, want under 320", kept/int64(n))
	}
	for _, name := range []string{JUnitFile, MarkdownFile, HTMLFile, SummaryFile} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		testcases := strings.Count(string(data), "<testcase ")
		switch name {
		case JUnitFile:
			if testcases != n {
				t.Errorf("junit.xml has %d testcases, want %d", testcases, n)
			}
		case MarkdownFile, HTMLFile:
			if !strings.Contains(string(data), "Cases that did not pass") || strings.Count(string(data), "lookup/scripted#") > 3*n/1000+10 {
				t.Errorf("%s lists more than the failures (%d bytes)", name, len(data))
			}
		case SummaryFile:
			if len(data) > 64<<10 {
				t.Errorf("summary.json is %d bytes, want the groups and failures only", len(data))
			}
		}
	}
}

// BenchmarkReport5000 is the report phase of a run of 5,000 cases of a
// cheap scenario: records.jsonl read and aggregated in one pass, and
// summary.json, junit.xml, report.md and report.html written, as `hosteval
// report` does.
func BenchmarkReport5000(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "run")
	const n = 5000
	synthRun(b, dir, "run", n, 20, 1, 1000)
	b.ReportAllocs()
	for b.Loop() {
		s, err := Read(dir)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := WriteReports(dir, s, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "cases/s")
}

// BenchmarkCompareIdentical is the last row of issue 15's table: `hosteval
// compare` of two runs of 5,000 cases whose call latencies come from one
// distribution (each run read from its records.jsonl, as compare does).
// It reports the regressions found, which must be 0, and the estimated
// ratio new/old of call latency.
func BenchmarkCompareIdentical(b *testing.B) {
	oldDir, newDir := filepath.Join(b.TempDir(), "old"), filepath.Join(b.TempDir(), "new")
	synthRun(b, oldDir, "old", 5000, 20, 1, 0)
	synthRun(b, newDir, "new", 5000, 20, 2, 0)
	var c *Comparison
	for b.Loop() {
		old, err := Read(oldDir)
		if err != nil {
			b.Fatal(err)
		}
		cur, err := Read(newDir)
		if err != nil {
			b.Fatal(err)
		}
		c = Compare(old, cur, DefaultThresholds())
	}
	regressed := 0.0
	if c.Verdict.Regressed {
		regressed = 1
	}
	b.ReportMetric(regressed, "regressions")
	b.ReportMetric(c.Groups[0].P50.Effect.Est, "new/old")
}
