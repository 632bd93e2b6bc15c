package tokens

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// library counts with tiktoken-go, the reference wherever its split is
// the pattern's (splitsAsPattern).
func library(t testing.TB) func(string) int {
	t.Helper()
	lib, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	return func(s string) int {
		n, err := lib.Count(s)
		if err != nil {
			t.Fatalf("tiktoken-go: %v", err)
		}
		return n
	}
}

// splitsAsPattern reports whether tiktoken-go's generated matcher cuts s
// as the split pattern does: where it does not (splitFast says where),
// tiktoken-go's count is not the reference.
func splitsAsPattern(t testing.TB, s string) bool {
	t.Helper()
	s = validUTF8(s)
	return slices.EqualFunc(generatedPieces(t, s), libraryPieces(t, s), slices.Equal)
}

func TestCount(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{`{"type":"function"}`, 5},
		// Where tiktoken-go's split departs from the pattern: x, " \n  \n"
		// (one token of the vocabulary), " y"; tiktoken-go says 4.
		{"x \n  \n y", 3},
		// a, then DEL and b, not a token together: two; tiktoken-go drops
		// DEL and says 2.
		{"a\x7fb", 3},
	}
	for _, tt := range tests {
		if got := Count(tt.in); got != tt.want {
			t.Errorf("Count(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// samples are texts that exercise every alternative of the split pattern,
// long pieces (merged with the heap), and text that is not valid UTF-8.
var samples = []string{
	"hello world",
	"Hello, World! HELLO world's they're we've I'm you'll he'd SHE'LL IT'S",
	"  leading and trailing spaces   ",
	"tabs\tand\nnewlines\r\n\r\n\n  \n\t\t\nend",
	"line one\n\n\n    indented line\n",
	"numbers 1 12 123 1234 12345 3.14159 -42 1e10 0x1F",
	"punctuation!!! ??? ... --- /// \\\\ {}[]() <html> &amp; \"quoted\" 'single'",
	`{"type":"function","function":{"name":"cmdb__get_asset","description":"[cmdb] Look up one asset by hostname.","parameters":{"properties":{"hostname":{"type":"string"}},"required":["hostname"],"type":"object"}}}`,
	"日本語のテキストと中文文本,한국어 텍스트",
	"Ελληνικά και русский текст с ёлками, ﬁ ligature, Ǆ titlecase ǅ",
	"emoji 👍🏽 👨‍👩‍👧‍👦 🇫🇷 and combining e\u0301 a\u0308\u0323",
	"\u200b zero width \u00a0nbsp \u2028 line sep \u3000 ideographic space",
	strings.Repeat("a", 300),
	strings.Repeat("ab", 200) + strings.Repeat("Z", 150),
	"dGhpcyBpcyBhIGxvbmcgYmFzZTY0IHN0cmluZyB0aGF0IGhhcyBubyBicmVha3MgYXQgYWxsIGFuZCBnb2VzIG9uIGFuZCBvbiBhbmQgb24gYW5kIG9u",
	strings.Repeat("🙂", 60),
	strings.Repeat("  ", 100) + "x",
	strings.Repeat("!?", 80),
	"invalid \xff\xfe bytes \xe2\x82 and a lone \x80 continuation",
	"<|endoftext|> is just text here",
}

func TestCountMatchesTiktoken(t *testing.T) {
	want := library(t)
	texts := append([]string{}, samples...)
	// Real text: the repository's docs, code and scenarios.
	for _, pattern := range []string{"../../README.md", "../../docs/*.md", "*.go", "../catalog/testdata/*.json", "../../scenarios/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(b))
		}
	}
	if len(texts) < len(samples)+10 {
		t.Fatalf("only %d texts found", len(texts))
	}
	compared := 0
	for _, s := range texts {
		if !splitsAsPattern(t, s) {
			continue
		}
		compared++
		if got, want := Count(s), want(s); got != want {
			t.Errorf("Count(%.60q) = %d, tiktoken-go says %d", s, got, want)
		}
	}
	if compared < len(texts)*3/4 {
		t.Errorf("only %d of %d texts split alike by tiktoken-go and the pattern: too few compared", compared, len(texts))
	}
}

// TestCountRandom compares with tiktoken-go on random strings drawn from
// characters of every class the split pattern tells apart.
func TestCountRandom(t *testing.T) {
	want := library(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		s := randomText(rng, 1+rng.IntN(200))
		if !splitsAsPattern(t, s) {
			continue
		}
		if got, want := Count(s), want(s); got != want {
			t.Fatalf("Count(%q) = %d, tiktoken-go says %d", s, got, want)
		}
	}
}

// alphabet has characters of each class the split pattern tells apart:
// lower, upper, title-case and other letters, marks, digits and other
// numbers, whitespace of each kind, punctuation, apostrophes, slashes.
var alphabet = []rune("aeszAESZǅʰ中ߊ\u0301\u0308059²Ⅻ \t\n\r\u00a0\u3000\u2028.,:;!?\"{}[]<>&/\\'-_’👍")

func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		switch rng.IntN(10) {
		case 0:
			b.WriteString([]string{"'s", "'re", "'LL", "'d", "ſ", "the", " and", "},{", `":"`, "\\n"}[rng.IntN(10)])
		default:
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
	}
	return b.String()
}

func FuzzCount(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	want := library(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !splitsAsPattern(t, s) {
			return
		}
		if got, want := Count(s), want(s); got != want {
			t.Fatalf("Count(%q) = %d, tiktoken-go says %d", s, got, want)
		}
	})
}

func TestCache(t *testing.T) {
	var nilCache *Cache
	c := NewCache()
	for range 2 {
		for _, s := range []string{"hello world", `{"type":"function"}`} {
			if got, want := c.Count(s), Count(s); got != want {
				t.Errorf("Cache.Count(%q) = %d, want %d", s, got, want)
			}
			if got, want := nilCache.Count(s), Count(s); got != want {
				t.Errorf("nil Cache.Count(%q) = %d, want %d", s, got, want)
			}
		}
	}
	if c.Len() != 2 || nilCache.Len() != 0 {
		t.Errorf("cache holds %d texts, nil cache %d; want 2, 0", c.Len(), nilCache.Len())
	}
}

func TestValidUTF8(t *testing.T) {
	if got := validUTF8("ok é"); got != "ok é" {
		t.Errorf("validUTF8 changed valid text: %q", got)
	}
	got := validUTF8("a\xffb\xe2\x82")
	if want := "a\uFFFDb\uFFFD\uFFFD"; got != want || !utf8.ValidString(got) {
		t.Errorf("validUTF8 = %q, want %q", got, want)
	}
}

// scaled is n tokens of a sample of sample bytes scaled to size bytes.
func scaled(n, size, sample int) int { return int(float64(n) * float64(size) / float64(sample)) }

// TestCountBounded: a text over MaxExact is estimated, from an exact count
// of its first 64 KiB scaled to its length, whatever it holds: counting is
// bounded in memory (and so in time) by the sample, not by the text. A
// text at the limit is still exact.
func TestCountBounded(t *testing.T) {
	atLimit := strings.Repeat("hello world ", MaxExact/12)
	// Two tokens a "hello world ", and the last space a piece of its own.
	if n, est := Measure(atLimit); est || n != 2*(MaxExact/12)+1 {
		t.Errorf("a text of %d bytes: %d tokens, estimated %v; want %d, exact", len(atLimit), n, est, 2*(MaxExact/12)+1)
	}
	tests := []struct {
		name string
		text string
		want int // hand-computed from the sample's exact count
	}{
		// "x" merges into tokens of 8: 64 KiB is 8192 tokens.
		{"one long piece", strings.Repeat("x", 50<<20), 50 << 20 / 8},
		// "hello world " is 2 tokens in 12 bytes: the sample cuts the
		// 5462nd "hello world " after "hell" ("hell" is one token).
		{"words", strings.Repeat("hello world ", (50<<20)/12), scaled(2*5461+1, 12*((50<<20)/12), 64<<10)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n int
			var est bool
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			n, est = Measure(tt.text)
			runtime.ReadMemStats(&after)
			if !est || n != tt.want {
				t.Errorf("Measure of %d MiB: %d tokens, estimated %v; want %d, estimated", len(tt.text)>>20, n, est, tt.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
				t.Errorf("Measure of %d MiB allocated %d KiB, want at most 4 MiB (the sample's)", len(tt.text)>>20, alloc>>10)
			}
			text := NewText(tt.text)
			if !text.Estimated() || text.Count() != tt.want {
				t.Errorf("NewText: %d tokens, estimated %v; want %d, estimated", text.Count(), text.Estimated(), tt.want)
			}
			// Cutting a tenth out takes a tenth of the estimate.
			if got, want := text.Without(0, len(tt.text)/10), int(float64(tt.want)*float64(len(tt.text)-len(tt.text)/10)/float64(len(tt.text))); got != want {
				t.Errorf("Without a tenth: %d, want %d", got, want)
			}
		})
	}
	var c Cache
	c.m = map[string]int{}
	if n, est := c.Measure(strings.Repeat("x", MaxExact+8)); !est || n != (MaxExact+8)/8 || c.Len() != 0 {
		t.Errorf("Cache.Measure over the limit: %d, %v, %d kept; want %d, estimated, none kept", n, est, c.Len(), (MaxExact+8)/8)
	}
}

// TestWarm: Warm may run while others count (a run warms as its cases
// may already count: go test -race holds it to that), and counts nothing
// wrong; its text counts as tiktoken-go counts it.
func TestWarm(t *testing.T) {
	want := library(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Warm()
	}()
	for _, s := range samples {
		if got, want := Count(s), want(s); got != want {
			t.Errorf("Count(%.60q) = %d while warming, tiktoken-go says %d", s, got, want)
		}
	}
	<-done
	Warm()
	if got, want := Count(warmText), want(warmText); got != want {
		t.Errorf("Count(warmText) = %d, tiktoken-go says %d", got, want)
	}
}

// TestWarmYields: on one P (a run of one conversation, cmd/hosteval), a
// goroutine made runnable as Warm starts runs before Warm ends: the
// server's first answer, read then, does not wait for the whole warm-up.
// The goroutine that calls Warm made the other one just before, and runs
// on; only a yield of Warm's lets the other in before Warm returns.
func TestWarmYields(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var warmed, ranFirst atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		other := make(chan struct{})
		go func() {
			defer close(other)
			ranFirst.Store(!warmed.Load())
		}()
		Warm()
		warmed.Store(true)
		<-other
	}()
	<-done
	if !ranFirst.Load() {
		t.Error("with one P, a goroutine made runnable as Warm started ran only after it: Warm does not yield")
	}
}
