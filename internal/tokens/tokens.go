// Package tokens counts o200k_base tokens, the encoding of gpt-oss and the
// GPT-4o family, exactly as OpenAI's tiktoken does (tests compare every
// count with tiktoken-go's, except on text its split cuts otherwise than
// the pattern: see splitFast), with the vocabulary embedded in the binary (no
// download); and it tells what cutting a span out of a text does to its
// count without counting the whole text again (Text).
//
// Nothing is loaded until the first count, and then almost nothing: the
// vocabulary is a table generated ahead of time from tiktoken-go's
// (o200k_base.vocab; go generate rewrites it, TestVocabularyFile checks it)
// with its hash index, read where it lies in the binary's read-only data.
// Building the codec decodes, copies and hashes nothing: it is ready in
// microseconds, where tiktoken-go's own takes tens of milliseconds and
// megabytes (BenchmarkCodecLoad; the figures, with their load and date, are
// in docs/perf.md). At microseconds, there is nothing to gain from loading
// in the background while servers start for the codec's sake; but the first
// count of a process also pays for the vocabulary's pages, read where they
// lie (about 3 MB, some 800 page faults), and for the splitter's first
// matches: 1-2 ms for a 9 KB catalog against about 0.5 ms warm. Warm does
// both, for a caller with time to spare (a run, while its servers start);
// without it the first count pays, and a process that counts nothing pays
// nothing.
// Counting splits the text as the pattern reads, by hand over the bytes
// (splitFast: about four times as fast as regexp2, and no allocation,
// where regexp2 allocated 40 bytes per byte counted; FuzzSplit holds it to
// regexp2's interpreter, which HOSTEVAL_TRANSPORT=sdk uses instead), then
// merges byte pairs over the table, with far fewer allocations than
// tiktoken-go's (BenchmarkCount, BenchmarkCountTiktoken).
//
// A text over MaxExact (1 MiB) is not counted but estimated, from an
// exact count of its first 64 KiB (Measure says which): a server's tool
// description of 50 MB took minutes and 1.9 GB to count, and the merges
// over one long piece cost 2-3 µs a byte (BenchmarkCount4MBDescription:
// 4 MB of prose 2.6 s and 227 MB exact, 59 ms and 3 MB estimated).
//
// The codec is built once per process and is immutable and safe for
// concurrent use after.
package tokens

import (
	"os"
	"runtime"
	"slices"
	"sort"
	"sync"
	"unicode"
	"unicode/utf8"
)

// libraryPathsEnv is host.PathsEnv, which this package cannot import.
const libraryPathsEnv = "HOSTEVAL_TRANSPORT"

// theCodec is the process's codec, built on first use.
var theCodec = sync.OnceValue(func() *codec {
	// HOSTEVAL_TRANSPORT=sdk runs every hand-written path on the code it
	// stands in for (host.PathsSDK): here, regexp2's split.
	c, err := newCodec(os.Getenv(libraryPathsEnv) == "sdk")
	if err != nil {
		// The vocabulary is compiled in and checked by a test: this cannot
		// fail unless the binary itself is broken.
		panic("tokens: o200k_base unavailable: " + err.Error())
	}
	return c
})

// Warm readies counting: it touches each page of the vocabulary and counts
// a short text with the kinds of pieces a tool definition has, so that the
// process's first real count pays for neither (see the package doc). It is
// safe to call at any time, from any goroutine, and counts nothing.
//
// It yields the processor every warmYieldBytes: a run of one conversation
// has one P (cmd/hosteval, runProcs), and the server's first answer, read
// while Warm runs, would otherwise wait for the whole of it (1-2 ms; the
// scheduler preempts a goroutine only after 10 ms).
func Warm() {
	theCodec()
	var sum byte
	for i := 0; i < len(vocabFile); i += pageBytes {
		sum += vocabFile[i]
		if i%warmYieldBytes == 0 {
			runtime.Gosched()
		}
	}
	runtime.KeepAlive(sum)
	countExact(warmText)
}

// warmYieldBytes is how much of the vocabulary Warm touches between two
// yields: 64 pages, some 0.1 ms.
const warmYieldBytes = 64 * pageBytes

// pageBytes is the smallest page size of the platforms hosteval runs on:
// touching a byte every pageBytes touches every page.
const pageBytes = 4096

// warmText has what a tool definition's JSON has: punctuation runs,
// words with and without capitals, digits, spaces and a line break.
const warmText = `[{"type":"function","function":{"name":"srv__get_item","description":"[srv] Looks up ONE item by its ID, e.g. 42.\n","parameters":{"type":"object","properties":{"id":{"type":"integer","minimum":1}},"required":["id"]}}}]`

// Count returns the number of o200k_base tokens in s: exact up to
// MaxExact bytes, estimated past them (see Measure).
func Count(s string) int {
	n, _ := Measure(s)
	return n
}

// MaxExact is the longest text counted exactly. Counting is about linear
// in the text but slow, and worse on one long piece (a run of letters,
// spaces or punctuation without a break: byte-pair merges over the whole
// run, 2-3 µs a byte and 30 bytes of memory): a 50 MB tool description
// took minutes and 1.9 GB (issue 23). A longer text is estimated.
const MaxExact = 1 << 20

// sampleBytes is how much of a text over MaxExact is counted exactly to
// estimate the rest.
const sampleBytes = 64 << 10

// Measure returns the number of o200k_base tokens in s, and whether it is
// an estimate: a text over MaxExact bytes is estimated from its first
// 64 KiB, counted exactly and scaled to its length, so that counting is
// linear in the text and bounded in time and memory whatever a server
// sends. A count is an estimate also when the splitter gives up.
func Measure(s string) (n int, estimated bool) {
	if len(s) > MaxExact {
		return estimateLong(s), true
	}
	return countExact(s)
}

// countExact counts s exactly, however long it is (estimated only when the
// splitter gives up).
func countExact(s string) (n int, estimated bool) {
	c := theCodec()
	s = validUTF8(s)
	if err := c.eachPiece(s, func(start, end int) { n += c.count(s[start:end]) }); err != nil {
		return estimate(s), true
	}
	return n, false
}

// estimateLong estimates the tokens of a text over MaxExact: its first
// sampleBytes (cut on a character's start) counted exactly, scaled to its
// whole length.
func estimateLong(s string) int {
	cut := sampleBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if cut == 0 {
		return estimate(s)
	}
	n, _ := Measure(s[:cut])
	return int(float64(n) * float64(len(s)) / float64(cut))
}

// estimate stands in for a count when the splitter gives up (a match that
// backtracks more than regexp2 allows, in text of tens of kilobytes without
// a break): the usual four bytes a token is more useful to a report than a
// zero.
func estimate(s string) int { return (len(s) + 3) / 4 }

// Cache remembers the counts of texts seen before. A batch run renders the
// same tool definitions for every case; counting them once instead of in
// every case is a third of what a case with shared servers costs. A nil
// *Cache counts without remembering. It is safe for concurrent use.
//
// A text over MaxExact is not kept: its estimate is cheap, and a key of
// tens of megabytes would be kept with it.
type Cache struct {
	mu sync.Mutex
	m  map[string]int
}

// maxCached bounds a Cache: past it, the cache starts over (a run has a few
// catalogs, not thousands).
const maxCached = 4096

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{m: map[string]int{}} }

// Len returns how many texts the cache remembers.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Count returns the number of o200k_base tokens in s, as Count does.
func (c *Cache) Count(s string) int {
	n, _ := c.Measure(s)
	return n
}

// Measure returns the number of o200k_base tokens in s and whether it is
// an estimate, as Measure does.
func (c *Cache) Measure(s string) (int, bool) {
	if c == nil || len(s) > MaxExact {
		return Measure(s)
	}
	c.mu.Lock()
	n, ok := c.m[s]
	c.mu.Unlock()
	if ok {
		return n, false
	}
	n, estimated := Measure(s)
	if estimated {
		// The splitter gave up: a cheap estimate, not worth a key.
		return n, true
	}
	c.mu.Lock()
	if len(c.m) >= maxCached {
		clear(c.m)
	}
	c.m[s] = n
	c.mu.Unlock()
	return n, false
}

// Text is a text counted once, that then tells the count of the text with
// a span cut out (Without) by re-tokenising only around the cut.
//
// Why that is exact: o200k_base cuts a text into pieces with a pattern,
// then merges bytes within each piece, never across; so the count is the
// sum over pieces. Cutting s[from:to] leaves the pieces before the cut as
// they were if the pattern, matching each of them, read nothing at or past
// from (reach, below, bounds what it reads); and once the splitter, going
// on from there over the new text, ends a piece where s has a piece
// boundary after the cut, the rest is s's pieces again, since a match
// depends only on the text from its start on (the pattern has no
// look-behind). Tests compare Without with Count of the cut text.
//
// A Text is immutable, and safe for concurrent use.
type Text struct {
	s string
	// starts are the pieces' start offsets and cum[i] the tokens of the
	// first i pieces; reach[i] bounds what the pattern read to match the
	// first i+1 pieces (a running maximum).
	starts []int
	cum    []int
	reach  []int
	// slow is set when s is not valid UTF-8 or the splitter gave up:
	// Without then counts the whole cut text.
	slow bool
	// estimated is set for a text over MaxExact (or one the splitter gave
	// up on): Count is an estimate, and Without estimates the cut text
	// from it, in proportion to the bytes left.
	estimated bool
}

// NewText counts s and remembers its pieces.
func NewText(s string) *Text {
	c := theCodec()
	t := &Text{s: s}
	if len(s) > MaxExact {
		t.slow, t.estimated = true, true
		t.cum = []int{estimateLong(s)}
		return t
	}
	if !utf8.ValidString(s) {
		t.slow = true
		t.cum = []int{Count(s)}
		return t
	}
	spans, err := c.pieces(s)
	if err != nil || !tiled(spans, len(s)) {
		t.slow, t.estimated = true, true
		t.cum = []int{estimate(s)}
		return t
	}
	t.starts = make([]int, len(spans))
	t.cum = make([]int, len(spans)+1)
	t.reach = make([]int, len(spans))
	r := newReacher(s)
	farthest := 0
	for i, sp := range spans {
		t.starts[i] = sp[0]
		t.cum[i+1] = t.cum[i] + c.count(s[sp[0]:sp[1]])
		farthest = max(farthest, r.reach(sp[0]))
		t.reach[i] = farthest
	}
	return t
}

// tiled reports whether spans cover s end to end, each starting where the
// one before ended (they always do: every character starts a match).
func tiled(spans [][]int, n int) bool {
	at := 0
	for _, sp := range spans {
		if sp[0] != at {
			return false
		}
		at = sp[1]
	}
	return at == n
}

// Count returns the tokens of the whole text.
func (t *Text) Count() int { return t.cum[len(t.cum)-1] }

// Estimated reports whether Count, and Without, are estimates: the text
// is over MaxExact bytes, or the splitter gave up on it.
func (t *Text) Estimated() bool { return t.estimated }

// Without returns the tokens of the text with s[from:to] cut out: exactly
// Count(s[:from] + s[to:]). It panics when the span is not within the text.
func (t *Text) Without(from, to int) int {
	if from < 0 || to < from || to > len(t.s) {
		panic("tokens: Without: span out of range")
	}
	if from == to {
		return t.Count()
	}
	if t.estimated {
		// In proportion: cutting each of many definitions out of a text
		// of tens of megabytes must not copy it each time.
		return int(float64(t.Count()) * float64(len(t.s)-(to-from)) / float64(len(t.s)))
	}
	if t.slow {
		return Count(t.s[:from] + t.s[to:])
	}
	// Pieces [0, keep) were matched reading only s[:from]: the cut text has
	// them too, and the splitter goes on from starts[keep].
	keep := sort.Search(len(t.reach), func(i int) bool { return t.reach[i] > from })
	p := len(t.s)
	if keep < len(t.starts) {
		p = t.starts[keep]
	}
	if p > from {
		// A piece that ends past from was matched reading only s[:from]:
		// impossible if reach is right. Stay exact.
		return Count(t.s[:from] + t.s[to:])
	}
	// Re-tokenise the cut text from p, in a window long enough to meet a
	// piece boundary of s after the cut (rarely more than a few pieces).
	for window := 64; ; window *= 2 {
		n, ok := t.resync(p, from, to, window)
		if ok {
			return t.cum[keep] + n
		}
	}
}

// resync splits the cut text from p, whose first from-p bytes are s[p:from]
// and the rest s[to:], over a window that ends window bytes after the cut,
// and returns the tokens from p to the end of the cut text. It reports false
// when the window was too short to meet a piece boundary of s.
func (t *Text) resync(p, from, to, window int) (int, bool) {
	c := theCodec()
	end := min(len(t.s), to+window)
	for end < len(t.s) && !utf8.RuneStart(t.s[end]) {
		end++
	}
	w := t.s[p:from] + t.s[to:end]
	whole := end == len(t.s) // the window is the rest of the cut text
	spans, err := c.pieces(w)
	if err != nil {
		return Count(t.s[p:from] + t.s[to:]), true
	}
	r := newReacher(w)
	n := 0
	for _, sp := range spans {
		if !whole && r.reach(sp[0]) >= len(w) {
			return 0, false // this piece could change past the window's end
		}
		n += c.count(w[sp[0]:sp[1]])
		if at := p + sp[1]; at >= from {
			// at is a piece boundary of the cut text; in s, that is at+to-from.
			if i, ok := t.boundary(at + to - from); ok {
				return n + t.Count() - t.cum[i], true
			}
		}
	}
	if whole {
		return n, true
	}
	return 0, false
}

// boundary returns the index of the piece of s that starts at offset at
// (len(starts) for the end of s), if one does.
func (t *Text) boundary(at int) (int, bool) {
	if at == len(t.s) {
		return len(t.starts), true
	}
	return slices.BinarySearch(t.starts, at)
}

// reacher bounds what the split pattern reads to match a piece that starts
// at a given offset. Its alternatives read: an optional first character;
// then a run of letters and marks (the two letter alternatives, then at most
// three characters of a contraction such as "'re"), or up to three digits,
// or a run of characters that are neither letters nor digits (punctuation,
// then newlines and slashes; or whitespace, then one character of
// look-ahead). Backtracking re-reads what was read. So every character read
// lies before the end of the longest such run from the second character,
// plus three characters. Runs are found with two cursors that only move
// forward, as the pieces' starts do.
type reacher struct {
	s string
	// letters is where the run of letters and marks from the last asked
	// position ends; others the run of characters that are neither letters
	// nor digits.
	letters, others int
}

func newReacher(s string) *reacher { return &reacher{s: s} }

// reach returns an offset such that matching a piece at start reads only
// characters before it (len(s) when the text ends first). Calls must come
// with starts in increasing order.
func (r *reacher) reach(start int) int {
	second := r.next(start, 1)
	r.letters = r.run(max(r.letters, second), isLetterOrMark)
	r.others = r.run(max(r.others, second), isNeitherLetterNorDigit)
	return r.next(max(r.letters, r.others), 3)
}

// run returns where the run of characters for which in holds, from at on,
// ends.
func (r *reacher) run(at int, in func(rune) bool) int {
	for at < len(r.s) {
		c, size := utf8.DecodeRuneInString(r.s[at:])
		if !in(c) {
			break
		}
		at += size
	}
	return at
}

// next returns the offset n characters after at, or len(s).
func (r *reacher) next(at, n int) int {
	for ; n > 0 && at < len(r.s); n-- {
		_, size := utf8.DecodeRuneInString(r.s[at:])
		at += size
	}
	return at
}

func isLetterOrMark(c rune) bool {
	if c < utf8.RuneSelf {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	return unicode.IsLetter(c) || unicode.IsMark(c)
}

func isNeitherLetterNorDigit(c rune) bool {
	if c < utf8.RuneSelf {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9')
	}
	return !unicode.IsLetter(c) && !unicode.IsNumber(c)
}
