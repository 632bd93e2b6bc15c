package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hosteval/hosteval/internal/tokens"
)

// BenchmarkMeasure measures a catalog of 60 tools of about 400 bytes each,
// the size of a large real server.
func BenchmarkMeasure(b *testing.B) {
	var entries []Entry
	for i := range 60 {
		name := fmt.Sprintf("gh__tool_%02d", i)
		def := fmt.Sprintf(`{"type":"function","function":{"name":%q,"description":"[gh] Tool number %d of the catalog, with <html> & a description of average length.","parameters":{%s"properties":{"owner":{"type":"string"},"repo":{"type":"string"}},"required":["owner","repo"],"type":"object"}}}`, name, i, defsBlock)
		entries = append(entries, Entry{Name: name, Server: "gh", Def: json.RawMessage(def)})
	}
	arr := array(entries)
	ctx := context.Background()
	for b.Loop() {
		if _, err := Measure(ctx, entries, arr, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(entries)*b.N)/b.Elapsed().Seconds(), "tools/s")
	b.ReportMetric(float64(len(arr)), "array-bytes")
}

// BenchmarkMeasure138 measures a real catalog of 138 tools, 73 KB: the npm
// reference servers, several times over (testdata/peers138.json).
func BenchmarkMeasure138(b *testing.B) {
	entries, arr := readArray(b, "peers138.json")
	ctx := context.Background()
	for b.Loop() {
		if _, err := Measure(ctx, entries, arr, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(entries)*b.N)/b.Elapsed().Seconds(), "tools/s")
}

// BenchmarkMarginals138 computes the 138 marginal costs alone: around each
// cut (what Measure does), and by recounting the array without each tool
// (what it did before, on one core).
func BenchmarkMarginals138(b *testing.B) {
	entries, arr := readArray(b, "peers138.json")
	defs := make([][]byte, len(entries))
	for i, e := range entries {
		defs[i] = e.Def
	}
	b.Run("incremental", func(b *testing.B) {
		tools := make([]Tool, len(defs))
		for b.Loop() {
			if err := marginals(context.Background(), defs, tokens.NewText(string(arr)), tools); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("recount", func(b *testing.B) {
		for b.Loop() {
			recount(entries)
		}
	})
}
