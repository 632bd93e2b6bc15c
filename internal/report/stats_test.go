package report

import (
	"math"
	"slices"
	"testing"
)

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func TestFisherExact(t *testing.T) {
	tests := []struct {
		name       string
		a, b, c, d int
		want       float64
	}{
		// [[10,0],[3,7]]: margins 10/10 and 13/7; only the two extreme
		// tables (a=10 and a=3) are as unlikely as the observed one, each
		// C(10,3)/C(20,13) = 120/77520, so p = 240/77520.
		{"by hand", 10, 0, 3, 7, 240.0 / 77520},
		{"by hand, rows swapped", 3, 7, 10, 0, 240.0 / 77520},
		// Fisher's lady tasting tea: p = 34/70 (R: 0.4857).
		{"tea tasting", 3, 1, 1, 3, 34.0 / 70},
		// SciPy's fisher_exact documentation: 0.10256410256410257.
		{"scipy example", 6, 2, 1, 4, 0.10256410256410257},
		{"no difference", 5, 5, 5, 5, 1},
		{"all pass both", 4, 0, 4, 0, 1},
		{"empty", 0, 0, 0, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FisherExact(tt.a, tt.b, tt.c, tt.d)
			if !near(got, tt.want, 1e-12) {
				t.Errorf("FisherExact(%d, %d, %d, %d) = %.15g, want %.15g", tt.a, tt.b, tt.c, tt.d, got, tt.want)
			}
		})
	}
}

func TestMannWhitneyU(t *testing.T) {
	tests := []struct {
		name  string
		x, y  []float64
		wantU float64
		wantP float64
		tol   float64
	}{
		// SciPy's mannwhitneyu documentation (exact): U=17, p=1/9.
		{"scipy males/females", []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}, 17, 1.0 / 9, 1e-12},
		// R's ?wilcox.test example (no ties): W=35, one-sided p=0.1272,
		// so two-sided 0.2544.
		{"R wilcox.test example",
			[]float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46},
			[]float64{1.15, 0.88, 0.90, 0.74, 1.21}, 35, 0.2544, 5e-5},
		// Complete separation of 5 and 5: 2 of C(10,5)=252 arrangements.
		{"separated", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 2.0 / 252, 1e-12},
		{"separated, other way", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 25, 2.0 / 252, 1e-12},
		// With ties the exact p is the permutation distribution of the
		// midrank sum; 30 of 252 arrangements are as extreme (counted by
		// enumeration, see TestMannWhitneyUExactMatchesEnumeration).
		{"ties, exact", []float64{1, 2, 2, 3, 5}, []float64{2, 4, 5, 6, 6}, 4.5, 30.0 / 252, 1e-12},
		{"all equal", []float64{3, 3, 3}, []float64{3, 3}, 3, 1, 0},
		{"empty", nil, []float64{1, 2}, 0, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, p := MannWhitneyU(tt.x, tt.y)
			if u != tt.wantU {
				t.Errorf("U = %v, want %v", u, tt.wantU)
			}
			if !near(p, tt.wantP, tt.tol) {
				t.Errorf("p = %.15g, want %.15g (±%g)", p, tt.wantP, tt.tol)
			}
		})
	}
}

// TestMannWhitneyUNormal checks the normal approximation, used beyond 50
// pooled values, against its formula and SciPy's documented value.
func TestMannWhitneyUNormal(t *testing.T) {
	// SciPy documents method="asymptotic" for the males/females example
	// (tie and continuity corrections): p = 0.11134688653314041.
	x, y := []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}
	ranks, ties := midranks(x, y)
	var r1 float64
	for _, r := range ranks[:len(x)] {
		r1 += r
	}
	u := r1 - 15
	if got, want := mwuNormalP(u, len(x), len(y), ties), 0.11134688653314041; !near(got, want, 1e-12) {
		t.Errorf("normal p = %.17g, want %.17g", got, want)
	}

	// 30 against 30 values, separated: far beyond any doubt.
	var a, b []float64
	for i := range 30 {
		a = append(a, float64(i))
		b = append(b, float64(i+100))
	}
	if _, p := MannWhitneyU(a, b); p > 1e-9 {
		t.Errorf("separated 30+30: p = %g, want < 1e-9", p)
	}
	// Interleaved: no evidence of a shift.
	a, b = a[:0], b[:0]
	for i := range 30 {
		a = append(a, float64(2*i))
		b = append(b, float64(2*i+1))
	}
	if _, p := MannWhitneyU(a, b); p < 0.5 {
		t.Errorf("interleaved 30+30: p = %g, want > 0.5", p)
	}
}

// TestMannWhitneyUExactMatchesEnumeration compares the dynamic programme
// with a brute-force enumeration of every split of the pooled sample.
func TestMannWhitneyUExactMatchesEnumeration(t *testing.T) {
	samples := [][2][]float64{
		{{1, 2, 2, 3, 5}, {2, 4, 5, 6, 6}},
		{{10, 10, 10, 12}, {10, 11, 12, 12, 13, 14}},
		{{5.5, 1.25, 3}, {2, 8, 8, 9, 1.25, 7, 3}},
		{{1}, {2, 3, 4}},
	}
	for _, s := range samples {
		x, y := s[0], s[1]
		ranks, _ := midranks(x, y)
		got := mwuExactP(ranks, len(x))
		want := enumerateP(ranks, len(x))
		if !near(got, want, 1e-12) {
			t.Errorf("x=%v y=%v: exact p = %.15g, enumeration %.15g", x, y, got, want)
		}
	}
}

func enumerateP(ranks []float64, n1 int) float64 {
	n := len(ranks)
	var observed, total float64
	for i, r := range ranks {
		total += r
		if i < n1 {
			observed += r
		}
	}
	mean := float64(n1) * float64(n+1) / 2
	var hit, all float64
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != n1 {
			continue
		}
		var sum float64
		for i := range n {
			if mask&(1<<i) != 0 {
				sum += ranks[i]
			}
		}
		all++
		if math.Abs(sum-mean) >= math.Abs(observed-mean)-1e-9 {
			hit++
		}
	}
	return hit / all
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func TestLatency(t *testing.T) {
	tests := []struct {
		name string
		ms   []float64
		want Latency
	}{
		{"empty", nil, Latency{}},
		{"one", []float64{7}, Latency{N: 1, Min: 7, Mean: 7, P50: 7, P90: 7, P95: 7, P99: 7, Max: 7}},
		// 1..10: p50 = 5.5; p90 = 9.1; p95 = 9.55; p99 = 9.91 (type 7).
		{"one to ten", []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1},
			Latency{N: 10, Min: 1, Mean: 5.5, P50: 5.5, P90: 9.1, P95: 9.55, P99: 9.91, Max: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := latencyOf(tt.ms)
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"n", float64(got.N), float64(tt.want.N)}, {"min", got.Min, tt.want.Min}, {"mean", got.Mean, tt.want.Mean},
				{"p50", got.P50, tt.want.P50}, {"p90", got.P90, tt.want.P90}, {"p95", got.P95, tt.want.P95},
				{"p99", got.P99, tt.want.P99}, {"max", got.Max, tt.want.Max},
			} {
				if !near(f.got, f.want, 1e-9) {
					t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
				}
			}
		})
	}
}

func TestHodgesLehmannRatio(t *testing.T) {
	// Small samples checked by enumerating every pair.
	x := []float64{10, 12, 11, 13, 9, 10.5}
	y := []float64{12, 14, 13.5, 15, 11, 12.5, 16}
	var diffs []float64
	for _, a := range x {
		for _, b := range y {
			diffs = append(diffs, math.Log(b)-math.Log(a))
		}
	}
	slices.Sort(diffs)
	// 42 pairs: the median is the mean of the 21st and 22nd.
	wantEst := math.Exp((diffs[20] + diffs[21]) / 2)
	// k = floor(21 - 1.959964*sqrt(6*7*14/12)) = floor(21 - 13.76) = 7.
	wantLo, wantHi := math.Exp(diffs[6]), math.Exp(diffs[42-7])
	got := HodgesLehmannRatio(x, y, 0.05)
	if !near(got.Est, wantEst, 1e-9) || !near(got.Lo, wantLo, 1e-9) || !near(got.Hi, wantHi, 1e-9) {
		t.Errorf("HodgesLehmannRatio = %+v, want {%g %g %g}", got, wantEst, wantLo, wantHi)
	}
	// y is x made 20% slower: the ratio is 1.2, within a narrow interval.
	var big, slower []float64
	for i := range 2000 {
		v := 5 + float64(i%97)*0.3
		big = append(big, v)
		slower = append(slower, v*1.2)
	}
	r := HodgesLehmannRatio(big, slower, 0.05)
	if !near(r.Est, 1.2, 1e-6) || r.Lo > 1.2 || r.Hi < 1.2 || r.Hi-r.Lo > 0.1 {
		t.Errorf("20%% slower: %+v, want 1.2 inside a narrow interval", r)
	}
	if r := HodgesLehmannRatio(nil, y, 0.05); !math.IsNaN(r.Est) {
		t.Errorf("empty sample: %+v, want NaN", r)
	}
}
