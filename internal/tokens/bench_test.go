package tokens

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tiktoken-go/tokenizer"
)

// loadEnv names the codec a child process loads (see TestMain).
const loadEnv = "HOSTEVAL_TOKENS_LOAD_CHILD"

func TestMain(m *testing.M) {
	if which := os.Getenv(loadEnv); which != "" {
		os.Exit(loadChild(which))
	}
	os.Exit(m.Run())
}

// loadFigures are what a fresh process paid to count its first text.
type loadFigures struct {
	NS, Bytes, Allocs, PeakRSSKiB int64
}

// loadChild loads a codec in this fresh process, counts one text, and
// prints what that cost as JSON.
func loadChild(which string) int {
	var catalog string
	if strings.HasPrefix(which, "catalog-") {
		// The first 9 KB of a real catalog: what a run's first count is.
		data, err := os.ReadFile("../catalog/testdata/peers138.json")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		catalog = string(data[:9000])
		if which == "catalog-warmed" {
			Warm()
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	switch which {
	case "catalog-cold", "catalog-warmed":
		Count(catalog)
	case "tiktoken-go":
		c, err := tokenizer.Get(tokenizer.O200kBase)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		c.Count("hello world")
	case "embedded":
		Count("hello world")
	case "none":
	default:
		fmt.Fprintln(os.Stderr, "unknown codec", which)
		return 1
	}
	ns := time.Since(start).Nanoseconds()
	runtime.ReadMemStats(&after)
	json.NewEncoder(os.Stdout).Encode(loadFigures{
		NS: ns, Bytes: int64(after.TotalAlloc - before.TotalAlloc), Allocs: int64(after.Mallocs - before.Mallocs),
		PeakRSSKiB: peakRSSKiB(),
	})
	return 0
}

// peakRSSKiB reads the process's peak resident set (Linux; 0 elsewhere).
func peakRSSKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkCodecLoad measures the ways to have an o200k_base codec ready:
//
//   - embedded: what Count builds on first use, the table read in place;
//   - map: a Go map built from the same table, which is the work of
//     tiktoken-go's own construction (its table is a map literal);
//   - process/...: a fresh process that loads a codec and counts one text:
//     tiktoken-go's, the embedded one, or none (the baseline), reporting
//     the load's time and allocations and the process's peak RSS, since
//     tiktoken-go builds its table only once per process.
func BenchmarkCodecLoad(b *testing.B) {
	b.Run("embedded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := newCodec(false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		v, err := parseVocab(vocabFile)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			m := make(map[string]uint32, v.n)
			for r := range uint32(v.n) {
				m[v.token(r)] = r
			}
		}
	})
	for _, which := range []string{"tiktoken-go", "embedded", "none"} {
		b.Run("process/"+which, func(b *testing.B) {
			exe, err := os.Executable()
			if err != nil {
				b.Fatal(err)
			}
			var sum loadFigures
			for b.Loop() {
				cmd := exec.Command(exe)
				cmd.Env = append(os.Environ(), loadEnv+"="+which)
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("child: %v", err)
				}
				var f loadFigures
				if err := json.Unmarshal(out, &f); err != nil {
					b.Fatalf("child said %q: %v", out, err)
				}
				sum.NS += f.NS
				sum.Bytes += f.Bytes
				sum.Allocs += f.Allocs
				sum.PeakRSSKiB += f.PeakRSSKiB
			}
			n := float64(b.N)
			b.ReportMetric(float64(sum.NS)/n, "load-ns")
			b.ReportMetric(float64(sum.Bytes)/n, "load-B")
			b.ReportMetric(float64(sum.Allocs)/n, "load-allocs")
			b.ReportMetric(float64(sum.PeakRSSKiB)/n, "peak-RSS-KiB")
		})
	}
}

// BenchmarkFirstCount measures a fresh process's first count of a 9 KB
// catalog, as a run's first model request makes it: cold, and after Warm
// (which a run calls while its servers start). first-count-ns is the
// count alone.
func BenchmarkFirstCount(b *testing.B) {
	for _, which := range []string{"cold", "warmed"} {
		b.Run(which, func(b *testing.B) {
			exe, err := os.Executable()
			if err != nil {
				b.Fatal(err)
			}
			var ns int64
			for b.Loop() {
				cmd := exec.Command(exe)
				cmd.Env = append(os.Environ(), loadEnv+"=catalog-"+which)
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("child: %v", err)
				}
				var f loadFigures
				if err := json.Unmarshal(out, &f); err != nil {
					b.Fatalf("child said %q: %v", out, err)
				}
				ns += f.NS
			}
			b.ReportMetric(float64(ns)/float64(b.N), "first-count-ns")
		})
	}
}

// peersArray is a real 138-tool array (../catalog/testdata).
func peersArray(b *testing.B) string {
	data, err := os.ReadFile("../catalog/testdata/peers138.json")
	if err != nil {
		b.Fatal(err)
	}
	return strings.TrimSuffix(string(data), "\n")
}

// BenchmarkCount counts a 138-tool array of 73 KB.
func BenchmarkCount(b *testing.B) {
	s := peersArray(b)
	Count(s)
	b.ReportAllocs()
	for b.Loop() {
		Count(s)
	}
	b.ReportMetric(float64(len(s))*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
}

// BenchmarkCountTiktoken is BenchmarkCount with tiktoken-go, for comparison.
func BenchmarkCountTiktoken(b *testing.B) {
	s := peersArray(b)
	lib, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		lib.Count(s)
	}
	b.ReportMetric(float64(len(s))*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
}

// BenchmarkTextWithout cuts each element out of the 138-tool array, as a
// catalog's marginal costs do, after counting the array once.
func BenchmarkTextWithout(b *testing.B) {
	s := peersArray(b)
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(s), &elems); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		text := NewText(s)
		at := 1
		for i, e := range elems {
			from, to := at-1, at+len(e)
			if i == 0 {
				from, to = at, at+len(e)+1
			}
			text.Without(from, to)
			at += len(e) + 1
		}
	}
}

// BenchmarkCount4MBDescription counts a tools array of one tool whose
// description is 4 MB of prose: estimated (Count, over MaxExact) and, for
// comparison, exact (what Count did before issue 23: 1 MB took 18 s and
// 4 MB 66 s of a busy machine, and a 50 MB one minutes and 1.9 GB).
func BenchmarkCount4MBDescription(b *testing.B) {
	var desc strings.Builder
	for desc.Len() < 4<<20 {
		desc.WriteString("Returns the full record of one host, its owner and its on-call notes; ask for less with a filter. ")
	}
	def, err := json.Marshal([]any{map[string]any{"type": "function", "function": map[string]any{
		"name": "chaos__verbose", "description": desc.String(), "parameters": map[string]any{"type": "object"}}}})
	if err != nil {
		b.Fatal(err)
	}
	s := string(def)
	for _, bb := range []struct {
		name  string
		count func(string) (int, bool)
	}{{"estimated", Measure}, {"exact", countExact}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bb.count(s)
			}
			b.ReportMetric(float64(len(s))*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
		})
	}
}
