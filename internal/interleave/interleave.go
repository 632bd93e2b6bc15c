// Package interleave measures two ways of doing one thing in turns (A, B,
// then B, A, ...) within one benchmark, and reports their ratio as the
// median of the per-pair ratios. On a shared machine whose load comes and
// goes, a ratio of two benchmarks run one after the other measures the
// load as much as the code; a pair's two halves run moments apart and see
// alike load, so the median of per-pair ratios is steady where either
// side's own figure is not.
package interleave

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

// Side is one of the two ways: Run does its work once (a block of calls, a
// batch of cases) and returns how many units (calls, cases) it did.
type Side struct {
	Name string
	Run  func() int
}

// Result is what Measure found, per unit of work.
type Result struct {
	// Ratio is the median over pairs of A's time per unit over B's.
	Ratio float64
	// A and B are the median times per unit; AllocsA and AllocsB the
	// median heap allocations per unit (this process's only).
	A, B             time.Duration
	AllocsA, AllocsB float64
	Pairs            int
}

// Measure runs pairs of a and b, pairs of them per benchmark iteration,
// alternating which goes first, and reports on b: the ratio as "<a>/<b>",
// each side's time per unit as "<name>-ms/unit" and allocations per unit
// as "<name>-allocs/unit". unit names the units Run counts ("call", "case").
func Measure(b *testing.B, pairs int, unit string, a, base Side) Result {
	b.Helper()
	var ratios, ta, tb, aa, ab []float64
	n := 0
	for b.Loop() {
		for range pairs {
			first, second := &a, &base
			if n%2 == 1 {
				first, second = second, first
			}
			t1, m1, u1 := measure(first.Run)
			t2, m2, u2 := measure(second.Run)
			if n%2 == 1 {
				t1, t2, m1, m2, u1, u2 = t2, t1, m2, m1, u2, u1
			}
			if u1 == 0 || u2 == 0 {
				b.Fatalf("a side did no work: %s %d, %s %d", a.Name, u1, base.Name, u2)
			}
			pa, pb := t1/float64(u1), t2/float64(u2)
			ratios = append(ratios, pa/pb)
			ta, tb = append(ta, pa), append(tb, pb)
			aa, ab = append(aa, m1/float64(u1)), append(ab, m2/float64(u2))
			n++
		}
	}
	r := Result{
		Ratio: median(ratios),
		A:     time.Duration(median(ta)), B: time.Duration(median(tb)),
		AllocsA: median(aa), AllocsB: median(ab), Pairs: n,
	}
	b.ReportMetric(r.Ratio, a.Name+"/"+base.Name)
	b.ReportMetric(float64(r.A)/1e6, a.Name+"-ms/"+unit)
	b.ReportMetric(float64(r.B)/1e6, base.Name+"-ms/"+unit)
	b.ReportMetric(r.AllocsA, a.Name+"-allocs/"+unit)
	b.ReportMetric(r.AllocsB, base.Name+"-allocs/"+unit)
	return r
}

// measure runs f once: its wall time in ns, heap allocations, and units.
func measure(f func() int) (ns, allocs float64, units int) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	units = f()
	ns = float64(time.Since(start))
	runtime.ReadMemStats(&after)
	return ns, float64(after.Mallocs - before.Mallocs), units
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
