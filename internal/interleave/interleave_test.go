package interleave

import (
	"strings"
	"testing"
)

// TestMeasureTakesTurns: the two sides alternate which goes first, pair
// after pair, and every pair counts.
func TestMeasureTakesTurns(t *testing.T) {
	var order strings.Builder
	var res Result
	testing.Benchmark(func(b *testing.B) {
		order.Reset()
		res = Measure(b, 3, "unit",
			Side{Name: "a", Run: func() int { order.WriteString("a"); return 2 }},
			Side{Name: "b", Run: func() int { order.WriteString("b"); return 1 }},
		)
	})
	got := order.String()
	if res.Pairs == 0 || len(got) != 2*res.Pairs {
		t.Fatalf("%d pairs, order %q", res.Pairs, got)
	}
	for i := 0; i < len(got); i += 2 {
		want := "ab"
		if (i/2)%2 == 1 {
			want = "ba"
		}
		if got[i:i+2] != want {
			t.Fatalf("pair %d ran %q, want %q (order %q)", i/2, got[i:i+2], want, got)
		}
	}
	if res.Ratio <= 0 || res.A <= 0 || res.B <= 0 {
		t.Errorf("result %+v, want positive figures", res)
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		if got := median(tt.xs); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
}
