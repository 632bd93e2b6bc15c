package host

import (
	"context"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/interleave"
)

// The host's overhead is measured against the floor: the raw SDK CallTool
// round trip over stdio to the same server. Compare the two with
// benchstat, or read the calls/s side by side.

// rawSDKSession connects the bare SDK to a cmdb process of its own.
func rawSDKSession(b *testing.B) *mcp.ClientSession {
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(fixture("cmdb").Command), TerminateDuration: 100 * time.Millisecond}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func BenchmarkCallRawSDK(b *testing.B) {
	ctx := context.Background()
	cs := rawSDKSession(b)
	params := &mcp.CallToolParams{Name: "get_asset", Arguments: map[string]any{"hostname": "jump-prod-02"}}
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

func BenchmarkCallHost(b *testing.B) {
	h, err := Start(context.Background(), Options{Servers: []ServerSpec{fixture("cmdb")}})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	req := CallRequest{Name: "cmdb__get_asset", Arguments: `{"hostname": "jump-prod-02"}`, TraceID: NewID(), Step: 1}
	for b.Loop() {
		if _, ev := h.Call(context.Background(), req); ev.Outcome != "ok" {
			b.Fatal(ev)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkCallHostVsSDK is the second row of issue 15's table: blocks of
// 200 get_asset calls through the host and through the bare SDK, each on
// its own cmdb process, in turns, so that the machine's load weighs on
// both alike. It reports the ratio host/sdk of time per call and each
// side's heap allocations per call (this process's: the host's checks, and
// both sides' SDK client).
func BenchmarkCallHostVsSDK(b *testing.B) {
	ctx := context.Background()
	cs := rawSDKSession(b)
	h, err := Start(ctx, Options{Servers: []ServerSpec{fixture("cmdb")}})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	const block = 200
	params := &mcp.CallToolParams{Name: "get_asset", Arguments: map[string]any{"hostname": "jump-prod-02"}}
	req := CallRequest{Name: "cmdb__get_asset", Arguments: `{"hostname": "jump-prod-02"}`, TraceID: NewID(), Step: 1}
	interleave.Measure(b, 1, "call",
		interleave.Side{Name: "host", Run: func() int {
			for range block {
				if _, ev := h.Call(ctx, req); ev.Outcome != "ok" {
					b.Fatal(ev)
				}
			}
			return block
		}},
		interleave.Side{Name: "sdk", Run: func() int {
			for range block {
				if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
			return block
		}},
	)
}

// BenchmarkCallFastVsSDKPaths is what the host's hand-written fast paths
// buy (docs/perf.md, "Hand-written fast paths"): blocks of 200 get_asset
// calls through two hosts, each on its own cmdb process, one on its fast
// paths and one on the go-sdk's code (Options.Paths sdk: the SDK's stdio
// transport, encoding/json for the raw readers and writers), in turns. It
// reports the ratio fast/sdk of time per call and each side's allocations.
func BenchmarkCallFastVsSDKPaths(b *testing.B) {
	ctx := context.Background()
	start := func(paths Paths) *Host {
		h, err := Start(ctx, Options{Servers: []ServerSpec{fixture("cmdb")}, Paths: paths})
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	fast, sdk := start(PathsFast), start(PathsSDK)
	defer fast.Close()
	defer sdk.Close()
	const block = 200
	req := CallRequest{Name: "cmdb__get_asset", Arguments: `{"hostname": "jump-prod-02"}`, TraceID: NewID(), Step: 1}
	calls := func(h *Host) func() int {
		return func() int {
			for range block {
				if _, ev := h.Call(ctx, req); ev.Outcome != "ok" {
					b.Fatal(ev)
				}
			}
			return block
		}
	}
	interleave.Measure(b, 1, "call", interleave.Side{Name: "fast", Run: calls(fast)}, interleave.Side{Name: "sdk", Run: calls(sdk)})
}

// BenchmarkCallHostVsSDKSameMeta is BenchmarkCallHostVsSDK with the bare
// SDK sending the _meta the host sends (session, trace, step, traceparent,
// a progress token): what the host's own work costs over what its calls
// must carry. The five entries cost the bare SDK 4-7% on their own (its
// encoding, and the server's decoding and logging of them).
func BenchmarkCallHostVsSDKSameMeta(b *testing.B) {
	ctx := context.Background()
	cs := rawSDKSession(b)
	h, err := Start(ctx, Options{Servers: []ServerSpec{fixture("cmdb")}})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	const block = 200
	params := &mcp.CallToolParams{Name: "get_asset", Arguments: map[string]any{"hostname": "jump-prod-02"}}
	req := CallRequest{Name: "cmdb__get_asset", Arguments: `{"hostname": "jump-prod-02"}`, TraceID: NewID(), Step: 1}
	token := 0
	interleave.Measure(b, 1, "call",
		interleave.Side{Name: "host", Run: func() int {
			for range block {
				if _, ev := h.Call(ctx, req); ev.Outcome != "ok" {
					b.Fatal(ev)
				}
			}
			return block
		}},
		interleave.Side{Name: "sdk", Run: func() int {
			for range block {
				token++
				params.Meta = h.callMeta(req.TraceID, req.Step, "bench-"+strconv.Itoa(token))
				if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
			return block
		}},
	)
}

// BenchmarkTurnThreeCalls is one scripted turn: three calls and an answer.
func BenchmarkTurnThreeCalls(b *testing.B) {
	h, err := Start(context.Background(), Options{Servers: []ServerSpec{fixture("cmdb")}})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	steps := `
- call: "cmdb__get_asset {hostname: jump-prod-02}"
- call: "cmdb__find_assets {service: customer-db, env: prod, limit: 2}"
- call: "cmdb__get_asset {hostname: customer-db-prod-01}"
- answer: done
`
	t := &testing.T{}
	for b.Loop() {
		b.StopTimer()
		m := script(t, steps)
		b.StartTimer()
		res, err := h.NewConversation(m, "").Ask(context.Background(), "q")
		if err != nil || len(res.Calls) != 3 {
			b.Fatal(err, res)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}
