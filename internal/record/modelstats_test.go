package record

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMergedRunStats(t *testing.T) {
	var none *CacheStats
	if got := none.Add(nil); got != nil {
		t.Errorf("nil + nil = %+v, want nil", got)
	}
	got := none.Add(&CacheStats{Dir: "d", Hits: 1, Misses: 2}).Add(&CacheStats{Hits: 3, Errors: 1})
	if want := (&CacheStats{Dir: "d", Hits: 4, Misses: 2, Errors: 1}); !cmp.Equal(got, want) {
		t.Errorf("cache sum = %+v, want %+v", got, want)
	}
	eps := AddEndpoints([]EndpointStats{{Endpoint: "a", Requests: 1, WaitedMS: 0.1}},
		[]EndpointStats{{Endpoint: "b", Requests: 2}, {Endpoint: "a", Requests: 3, Throttled: 1, WaitedMS: 0.2}})
	want := []EndpointStats{{Endpoint: "a", Requests: 4, Throttled: 1, WaitedMS: 0.3}, {Endpoint: "b", Requests: 2}}
	if diff := cmp.Diff(want, eps); diff != "" {
		t.Errorf("endpoints (-want +got):\n%s", diff)
	}
}

func TestCutReasoning(t *testing.T) {
	long := strings.Repeat("é", MaxReasoningBytes) // 2 bytes a rune
	got := CutReasoning(long)
	if !strings.HasSuffix(got, "\n[cut: reasoning over 8 KiB]") || len(got) > MaxReasoningBytes+40 || !strings.HasPrefix(long, strings.TrimSuffix(got, "\n[cut: reasoning over 8 KiB]")) {
		t.Errorf("CutReasoning cut %d bytes to %d: %q...", len(long), len(got), got[len(got)-40:])
	}
	if got := CutReasoning("short"); got != "short" {
		t.Errorf("CutReasoning(short) = %q", got)
	}
	if got := RoundCost(0.1 + 0.2); got != 0.3 {
		t.Errorf("RoundCost(0.1+0.2) = %v", got)
	}
}
