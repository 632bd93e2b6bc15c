package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/record"
)

// synthRoutingRun writes a run folder of route-only cases: rows dataset
// rows answered by each of two variants with the lexical router, shaped
// like the records of `mode: route` (one model request, the routing
// verdict, nothing sent). Variant a chooses a sibling on every 5th row
// and no tool on every 11th; b on every 7th.
func synthRoutingRun(tb testing.TB, dir string, rows int) {
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
	tools := []string{"cmdb__get_asset", "cmdb__find_assets", "tickets__open_ticket", "tickets__list_tickets", "support__search_knowledge", "support__get_ticket"}
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	n := 0
	for _, variant := range []string{"a", "b"} {
		for i := range rows {
			n++
			expected := []string{tools[i%len(tools)]}
			chosen := expected[0]
			switch {
			case variant == "a" && i%5 == 4, variant == "b" && i%7 == 6:
				chosen = tools[(i+1)%len(tools)]
			case variant == "a" && i%11 == 10:
				chosen = record.NoTool
			}
			if i%13 == 12 {
				expected = []string{}
			}
			correct := (len(expected) == 0 && chosen == record.NoTool) || (len(expected) > 0 && chosen == expected[0])
			status := record.StatusPass
			if !correct {
				status = record.StatusFail
			}
			row := fmt.Sprint(i + 1)
			rec := record.Record{
				Schema: record.SchemaVersion, RunID: "routing", CaseID: "routing/" + variant + "/lexical:" + row + "#0", Index: n,
				Scenario: "routing", File: "scenarios/routing.yaml", Line: 1, Variant: variant, Model: "lexical", Status: status,
				Started: start.Add(time.Duration(n) * time.Millisecond), MS: 0.4, SessionID: "ec74d9999f54a917e9d7d1ce382364af",
				Turns: []record.Turn{{Question: "who owns jump-prod-02 and what does it run?", TraceID: "4857760b2caa6148159d0410c9e7774d", Steps: 1, Requests: 1, MS: 0.3}},
				ModelRequests: []record.ModelRequest{{Operation: record.OpModelRequest, Time: start, SessionID: "s", TraceID: "t", Turn: 1, Index: 1,
					Model: "lexical", Messages: 1, ToolDefBytes: 2400, ToolDefTokens: 610, ToolCalls: 1}},
				Expectations: []record.Expectation{{Name: "route " + chosen, Line: 1, Passed: correct}},
				ToolDefs:     record.ToolDefs{Tools: 6, Bytes: 2400, Tokens: 610},
				Route: &record.Route{Row: row, Source: "scenarios/routing.csv:" + row, Mode: record.RouteOnly, Match: record.MatchFirst,
					Expected: expected, Proposed: []string{chosen}, Chosen: chosen, Correct: correct, Tags: []string{"cmdb", "set-" + fmt.Sprint(i%4)},
					Tools: 6, DefTokens: 610, Lexical: true, Ranks: []record.Rank{{Tool: chosen, Score: 7.25}, {Tool: tools[0], Score: 3.5}}},
			}
			data, err := json.Marshal(&rec)
			if err != nil {
				tb.Fatal(err)
			}
			w.Write(append(data, '\n'))
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
}

// TestReportRoutingFlatMemory: the reports of 20,000 routing cases (two
// variants of 10,000 rows) are read in one pass as every run's are. What
// stays is the compact row of each case and the pairing state of each
// row id, never a record: the heap peaks under 1 KB a case beyond a
// constant, and what stays is under 700 bytes a case (measured 630: the
// case's row, about 290 bytes with the slice's headroom as for every
// case, its route, 32, its row's outcome in its group for the pairing,
// about 120, and the case and row ids the records' decoding left).
func TestReportRoutingFlatMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a run of 20,000 cases")
	}
	rows := 10_000
	if raceEnabled {
		rows = 1_000
	}
	dir := filepath.Join(t.TempDir(), "routing")
	synthRoutingRun(t, dir, rows)
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
	n := 2 * rows
	t.Logf("%d routing cases: heap peak %d MB, %d bytes a case kept", n, top>>20, kept/int64(n))
	runtime.KeepAlive(s)

	r := s.Routing
	if r == nil || len(r.Groups) != 2 || len(r.Paired) != 1 || r.Paired[0].Rows != rows {
		t.Fatalf("routing = %+v, want two groups paired over %d rows", r, rows)
	}
	if limit := uint64(24<<20 + 1024*n); top > limit {
		t.Errorf("heap peaked at %d MB, want under %d MB", top>>20, limit>>20)
	}
	// A constant 256 KB besides: the maps' and tables' own, which a run
	// of 2,000 cases (under the race detector) does not amortise.
	if kept > int64(n)*700+256<<10 {
		t.Errorf("%d bytes a case kept after reading, want under 700", kept/int64(n))
	}
}

// BenchmarkReportRouting20000 is the report phase of 20,000 route-only
// cases (two variants of 10,000 rows): read, aggregated with the routing
// figures and the paired test, and every report file written.
func BenchmarkReportRouting20000(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "run")
	synthRoutingRun(b, dir, 10_000)
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
	b.ReportMetric(20_000*float64(b.N)/b.Elapsed().Seconds(), "cases/s")
}
