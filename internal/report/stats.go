package report

import (
	"cmp"
	"math"
	"slices"
)

// Latency summarises a sample of durations in milliseconds, vegeta style.
// Percentiles interpolate linearly between the closest ranks (the method
// numpy and R call type 7), so p50 of an even sample is the mean of its two
// middle values. All fields are zero for an empty sample.
type Latency struct {
	N    int     `json:"n"`
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// latencyOf summarises ms; it sorts ms in place.
func latencyOf(ms []float64) Latency {
	if len(ms) == 0 {
		return Latency{}
	}
	slices.Sort(ms)
	var sum float64
	for _, v := range ms {
		sum += v
	}
	return Latency{
		N:    len(ms),
		Min:  ms[0],
		Mean: sum / float64(len(ms)),
		P50:  quantile(ms, 0.50),
		P90:  quantile(ms, 0.90),
		P95:  quantile(ms, 0.95),
		P99:  quantile(ms, 0.99),
		Max:  ms[len(ms)-1],
	}
}

// quantile returns the q-quantile of sorted, interpolating linearly.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	h := q * float64(len(sorted)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

// FisherExact returns the two-sided p-value of Fisher's exact test for the
// 2x2 table [[a, b], [c, d]]: the probability, with the margins fixed, of a
// table at most as likely as the observed one. Tables whose probability is
// within a relative 1e-7 of the observed one count as equally likely, as R
// does, so that rounding does not drop a symmetric tail.
func FisherExact(a, b, c, d int) float64 {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		return math.NaN()
	}
	r1, r2, c1 := a+b, c+d, a+c
	n := r1 + r2
	if n == 0 {
		return 1
	}
	// log P(x) of the hypergeometric distribution, x the top-left cell.
	logC := func(n, k int) float64 {
		ln, _ := math.Lgamma(float64(n + 1))
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		return ln - lk - lnk
	}
	denom := logC(n, c1)
	logP := func(x int) float64 { return logC(r1, x) + logC(r2, c1-x) - denom }
	observed := logP(a)
	var p float64
	for x := max(0, c1-r2); x <= min(r1, c1); x++ {
		lp := logP(x)
		if lp <= observed+1e-7 {
			p += math.Exp(lp)
		}
	}
	return min(p, 1)
}

// mwuExactMax is the largest pooled sample for which MannWhitneyU computes
// the exact distribution; beyond it the normal approximation is accurate and
// the exact count would be slow.
const mwuExactMax = 50

// MannWhitneyU tests whether x and y come from the same distribution against
// the two-sided alternative that one tends to be larger. It returns U for x
// (the number of pairs in which x is larger, ties counting one half) and the
// p-value.
//
// For a pooled sample of up to 50 values the p-value is exact: the
// permutation distribution of the rank sum, conditional on the ties present
// (midranks), counted by dynamic programming; without ties this is the
// classical exact test. Larger samples use the normal approximation with tie
// correction and continuity correction (R's wilcox.test with correct=TRUE).
// An empty sample, or one in which every value is equal, gives p = 1.
func MannWhitneyU(x, y []float64) (u, p float64) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return 0, 1
	}
	ranks, ties := midranks(x, y)
	var r1 float64
	for _, r := range ranks[:n1] {
		r1 += r
	}
	u = r1 - float64(n1*(n1+1))/2
	if n1+n2 <= mwuExactMax {
		return u, mwuExactP(ranks, n1)
	}
	return u, mwuNormalP(u, n1, n2, ties)
}

// midranks returns the ranks of x then y in the pooled sample, ties getting
// the mean of the ranks they span, and the tie term sum(t^3 - t).
func midranks(x, y []float64) (ranks []float64, ties float64) {
	n := len(x) + len(y)
	idx := make([]int, n)
	val := func(i int) float64 {
		if i < len(x) {
			return x[i]
		}
		return y[i-len(x)]
	}
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(val(a), val(b)) })
	ranks = make([]float64, n)
	for i := 0; i < n; {
		j := i
		for j < n && val(idx[j]) == val(idx[i]) {
			j++
		}
		r := float64(i+1+j) / 2
		for k := i; k < j; k++ {
			ranks[idx[k]] = r
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	return ranks, ties
}

// mwuExactP counts, among all ways to pick n1 of the pooled ranks, those
// whose rank sum is at least as far from its mean as the observed one.
// Ranks are doubled so that midranks are integers.
func mwuExactP(ranks []float64, n1 int) float64 {
	n := len(ranks)
	twice := make([]int, n)
	var observed, total int
	for i, r := range ranks {
		twice[i] = int(math.Round(2 * r))
		total += twice[i]
		if i < n1 {
			observed += twice[i]
		}
	}
	// ways[k][s]: subsets of size k of the ranks seen so far with doubled
	// sum s. Counts stay below C(50, 25) < 2^53, exact in a float64.
	ways := make([][]float64, n1+1)
	for k := range ways {
		ways[k] = make([]float64, total+1)
	}
	ways[0][0] = 1
	for i, r := range twice {
		for k := min(i+1, n1); k >= 1; k-- {
			prev, cur := ways[k-1], ways[k]
			for s := total - r; s >= 0; s-- {
				if prev[s] != 0 {
					cur[s+r] += prev[s]
				}
			}
		}
	}
	// Mean of the doubled rank sum: n1 * (n+1).
	mean := n1 * (n + 1)
	dist := abs(observed - mean)
	var hit, all float64
	for s, w := range ways[n1] {
		all += w
		if abs(s-mean) >= dist {
			hit += w
		}
	}
	return min(hit/all, 1)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func mwuNormalP(u float64, n1, n2 int, ties float64) float64 {
	fn1, fn2 := float64(n1), float64(n2)
	n := fn1 + fn2
	variance := fn1 * fn2 / 12 * ((n + 1) - ties/(n*(n-1)))
	if variance <= 0 {
		return 1
	}
	z := (math.Abs(u-fn1*fn2/2) - 0.5) / math.Sqrt(variance)
	if z <= 0 {
		return 1
	}
	return min(math.Erfc(z/math.Sqrt2), 1)
}

// Ratio is how much larger one sample's values are than another's, as a
// factor, with a confidence interval: Hodges-Lehmann on a log scale.
type Ratio struct {
	// Est is the estimate: e^(median of log y - log x over all pairs).
	Est float64 `json:"ratio"`
	// Lo and Hi bound it with confidence 1-alpha.
	Lo float64 `json:"ci_low"`
	Hi float64 `json:"ci_high"`
}

// minLogMS is the least latency taken on a log scale: latencies are
// recorded to a tenth of a millisecond, so a recorded 0 is under half of
// one.
const minLogMS = 0.05

// HodgesLehmannRatio estimates by what factor y's values differ from x's
// (new over old: 1.2 is 20% slower) and bounds it with confidence 1-alpha,
// as benchstat does for a difference of medians, on the logarithms so that
// the shift is a ratio. The estimate is e^d for d the median of the m*n
// differences log y_j - log x_i; the interval is the k-th smallest and
// k-th largest of those differences, k from the Mann-Whitney U
// distribution (its normal approximation, without tie correction), so
// that the interval excludes 1 about when the U test rejects at alpha.
// Unlike the ratio of two medians or two p95s, it uses every value of both
// samples, and its interval shrinks as they grow: two samples of one
// distribution give a ratio near 1 and an interval around it.
//
// The differences are not enumerated (a run's calls give billions of
// pairs): the k-th is found by bisection on its value, counting the pairs
// below a value in one merge-like pass over the sorted samples. Values
// under minLogMS count as minLogMS. An empty sample gives NaN.
func HodgesLehmannRatio(x, y []float64, alpha float64) Ratio {
	if len(x) == 0 || len(y) == 0 {
		return Ratio{math.NaN(), math.NaN(), math.NaN()}
	}
	lx, ly := sortedLogs(x), sortedLogs(y)
	m, n := float64(len(lx)), float64(len(ly))
	total := len(lx) * len(ly)
	var d float64
	if total%2 == 1 {
		d = kthDiff(lx, ly, total/2+1)
	} else {
		d = (kthDiff(lx, ly, total/2) + kthDiff(lx, ly, total/2+1)) / 2
	}
	z := normalQuantile(1 - alpha/2)
	k := int(math.Floor(m*n/2 - z*math.Sqrt(m*n*(m+n+1)/12)))
	k = max(k, 1)
	return Ratio{
		Est: math.Exp(d),
		Lo:  math.Exp(kthDiff(lx, ly, k)),
		Hi:  math.Exp(kthDiff(lx, ly, total-k+1)),
	}
}

func sortedLogs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, v := range xs {
		out[i] = math.Log(max(v, minLogMS))
	}
	slices.Sort(out)
	return out
}

// kthDiff returns the k-th smallest (1-based) of the differences y_j - x_i,
// for x and y sorted.
func kthDiff(x, y []float64, k int) float64 {
	lo := y[0] - x[len(x)-1] // the smallest difference
	hi := y[len(y)-1] - x[0] // the largest
	if countAtMost(x, y, lo) >= k {
		return lo
	}
	// Invariant: fewer than k differences are <= lo, at least k are <= hi.
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if countAtMost(x, y, mid) >= k {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// countAtMost counts the pairs with y_j - x_i <= d, x and y sorted.
func countAtMost(x, y []float64, d float64) int {
	// For each y_j, the x_i >= y_j - d; as y_j grows so does that bound.
	count, i := 0, 0
	for _, yj := range y {
		for i < len(x) && x[i] < yj-d {
			i++
		}
		count += len(x) - i
	}
	return count
}

// normalQuantile is the p-quantile of the standard normal distribution.
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
