package report

import (
	"math"
	"strconv"
)

// z95 is the 0.975 quantile of the standard normal distribution: the z of
// every 95% interval of the routing figures.
const z95 = 1.959963984540054

// Wilson returns the Wilson score interval at 95% of k successes in n
// trials: (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n), p = k/n.
// Unlike the Wald interval p ± z·sqrt(p(1-p)/n), it never leaves [0, 1]
// and does not collapse to a point at 0 or n successes, which a routing
// set of 20 rows that all pass would otherwise claim. n = 0 gives (0, 1).
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	fn := float64(n)
	p := float64(k) / fn
	z2 := z95 * z95
	centre := p + z2/(2*fn)
	spread := z95 * math.Sqrt(p*(1-p)/fn+z2/(4*fn*fn))
	den := 1 + z2/fn
	return max((centre-spread)/den, 0), min((centre+spread)/den, 1)
}

// SignTest returns the two-sided p-value of the exact sign test (binomial,
// p = 1/2) on b pairs that went one way and c that went the other, ties
// dropped before: 2·P(X <= min(b, c)) for X ~ Binomial(b+c, 1/2), at most
// 1. On pairs of pass/fail outcomes this is McNemar's exact test, b and c
// the discordant pairs. No discordant pair gives 1.
func SignTest(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	var p float64
	if n <= 1000 {
		// C(n, i)/2^n by the recurrence from 2^-n (exact in a float64
		// for small tables, so 2 and 6 give 0.25, not 0.25000000000000006).
		t := math.Ldexp(1, -n)
		for i := 0; i <= k; i++ {
			p += t
			t = t * float64(n-i) / float64(i+1)
		}
		return min(2*p, 1)
	}
	// Beyond, 2^-n underflows: sum the terms in logs.
	lgN, _ := math.Lgamma(float64(n + 1))
	for i := 0; i <= k; i++ {
		li, _ := math.Lgamma(float64(i + 1))
		lni, _ := math.Lgamma(float64(n - i + 1))
		p += math.Exp(lgN - li - lni - float64(n)*math.Ln2)
	}
	return min(2*p, 1)
}

// Interval is an estimate with its 95% interval and the method behind it.
type Interval struct {
	Est    float64 `json:"estimate"`
	Lo     float64 `json:"ci_low"`
	Hi     float64 `json:"ci_high"`
	Method string  `json:"method"`
}

// Methods of a paired difference's interval.
const (
	MethodTango = "tango-score"
	MethodWald  = "paired-wald"
)

// TangoPaired returns the difference of two paired proportions, side 2
// minus side 1, and its 95% interval by Tango's score method (Statistics
// in Medicine 1998, 17:891), which Fagerland, Lydersen and Laake (BMC
// Medical Research Methodology 2013, 13:91) recommend for paired
// proportions. Of n pairs, b passed on side 1 only and c on side 2 only
// (the discordant pairs); the estimate is (c-b)/n. The interval is every
// difference D whose score statistic
//
//	Z(D) = (c - b - n·D) / sqrt(n·(2·q + D·(1-D)))
//
// lies within ±1.96, q being the maximum-likelihood estimate of the share
// of side-2-only pairs under D: the root (sqrt(B²-4AC) - B)/(2A) of
// A·q² + B·q + C with A = 2n, B = -c - b + (2n - c + b)·D and
// C = -b·D·(1-D). Z falls as D grows, so each bound is found by bisection.
// Unlike the paired Wald interval (and Newcombe's hybrid score interval,
// which collapses to a point when the only pairs are ones that agree),
// it keeps a width when no pair is discordant: 10 rows that all agree
// give ±0.278, as Wilson's interval of 0 of 10 does.
func TangoPaired(b, c, n int) Interval {
	if n <= 0 {
		return Interval{Lo: -1, Hi: 1, Method: MethodTango}
	}
	est := float64(c-b) / float64(n)
	z := func(d float64) float64 { return tangoZ(b, c, n, d) }
	// Bisection between a point inside the interval and the end of the
	// range; an end whose Z is still within the bound is the bound.
	bound := func(from, to float64, beyond func(float64) bool) float64 {
		if !beyond(to) {
			return to
		}
		for range 100 {
			mid := from + (to-from)/2
			if beyond(mid) {
				to = mid
			} else {
				from = mid
			}
		}
		return from + (to-from)/2
	}
	lo := bound(est, -1, func(d float64) bool { return z(d) > z95 })
	hi := bound(est, 1, func(d float64) bool { return z(d) < -z95 })
	return Interval{Est: est, Lo: lo, Hi: hi, Method: MethodTango}
}

// tangoZ is Tango's score statistic at difference d (see TangoPaired);
// ±Inf where its variance vanishes and the difference is not d.
func tangoZ(b, c, n int, d float64) float64 {
	fn, fb, fc := float64(n), float64(b), float64(c)
	A := 2 * fn
	B := -fc - fb + (2*fn-fc+fb)*d
	C := -fb * d * (1 - d)
	q := (math.Sqrt(max(B*B-4*A*C, 0)) - B) / (2 * A)
	num := fc - fb - fn*d
	v := fn * (2*q + d*(1-d))
	if v <= 0 {
		switch {
		case num > 0:
			return math.Inf(1)
		case num < 0:
			return math.Inf(-1)
		}
		return 0
	}
	return num / math.Sqrt(v)
}

// PairedWald returns the mean of the per-row differences d (side 2 minus
// side 1, each a difference of two pass rates) with the interval
// mean ± z·s/sqrt(n), s the standard deviation of d with divisor n, cut to
// [-1, 1]. On pass/fail rows it is the textbook Wald interval of a paired
// difference, ((c-b)/n ± z·sqrt((b+c)/n - ((c-b)/n)²)/sqrt(n)); it is used
// when rows were repeated, where Newcombe's table does not apply.
func PairedWald(d []float64) Interval {
	n := float64(len(d))
	if n == 0 {
		return Interval{Lo: -1, Hi: 1, Method: MethodWald}
	}
	var sum float64
	for _, x := range d {
		sum += x
	}
	mean := sum / n
	var ss float64
	for _, x := range d {
		ss += (x - mean) * (x - mean)
	}
	se := math.Sqrt(ss/n) / math.Sqrt(n)
	return Interval{Est: mean, Lo: max(mean-z95*se, -1), Hi: min(mean+z95*se, 1), Method: MethodWald}
}

// FormatP prints a p-value as "p=" and three decimals (benchstat's
// precision), and one below 0.001 as "p<0.001", never "p=0.000".
func FormatP(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return "p=" + strconv.FormatFloat(p, 'f', 3, 64)
}
