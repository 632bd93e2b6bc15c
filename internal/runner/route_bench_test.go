package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hosteval/hosteval/servers/fixturetest"
)

// BenchmarkRouteOnly runs a route-only eval of 1,000 rows x 2 variants over
// catalog files with the lexical router, in this process: the runner's own
// cost of a routing case (no server, no process; records written and
// synced as in any run, logs of failed cases only). cmd/hosteval's
// BenchmarkRouteOnly20000Cases is the whole run with its reports.
func BenchmarkRouteOnly(b *testing.B) {
	dir := b.TempDir()
	cases := loadCases(b, fixturetest.RouteDataset(b, dir, filepath.Join("..", "..", "scenarios", "catalogs"), 1000))
	n := 0
	for b.Loop() {
		out := filepath.Join(dir, fmt.Sprintf("r%d", n))
		n++
		res, err := Run(context.Background(), cases, Options{Dir: out, Logs: LogsFailed, Share: true})
		if err != nil {
			b.Fatal(err)
		}
		if res.Passed != len(cases) {
			b.Fatalf("%d of %d cases passed", res.Passed, len(cases))
		}
		os.RemoveAll(out)
	}
	b.ReportMetric(float64(len(cases)*b.N)/b.Elapsed().Seconds(), "cases/s")
}
