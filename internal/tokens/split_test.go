package tokens

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	// Registers tiktoken-go's generated matcher for the pattern with regexp2.
	_ "github.com/tiktoken-go/tokenizer/codec"

	"github.com/hosteval/hosteval/internal/longtest"
)

// libraryPieces is regexp2's interpreter on the split pattern: what
// splitFast stands in for.
func libraryPieces(t testing.TB, s string) [][]int {
	t.Helper()
	return findPieces(t, testInterpreted(), s)
}

// The two references, compiled once per test binary: a fuzz target and
// splitsAsPattern ask for them on every input.
var (
	testInterpreted = sync.OnceValue(interpretedSplit)
	testGenerated   = sync.OnceValue(func() *regexp2.Regexp { return regexp2.MustCompile(splitPattern, regexp2.None) })
)

// generatedPieces is tiktoken-go's generated matcher on the pattern (the
// codec package registers it with regexp2 for the pattern as written).
func generatedPieces(t testing.TB, s string) [][]int {
	t.Helper()
	return findPieces(t, testGenerated(), s)
}

func findPieces(t testing.TB, re *regexp2.Regexp, s string) [][]int {
	t.Helper()
	spans, err := re.FindAllStringIndex(s, -1)
	if err != nil {
		t.Fatalf("regexp2: %v", err)
	}
	if spans == nil {
		spans = [][]int{}
	}
	return spans
}

func fastPieces(s string) [][]int {
	spans := [][]int{}
	splitFast(s, func(start, end int) { spans = append(spans, []int{start, end}) })
	return spans
}

// samePieces fails t at the first piece where splitFast and the library
// part ways.
func samePieces(t testing.TB, s string) {
	t.Helper()
	want, got := libraryPieces(t, s), fastPieces(s)
	if slices.EqualFunc(got, want, slices.Equal) {
		return
	}
	for i := range min(len(got), len(want)) {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("in %q: piece %d is %q %v, the library's %q %v", around(s, got[i][0]), i, s[got[i][0]:got[i][1]], got[i], s[want[i][0]:want[i][1]], want[i])
		}
	}
	t.Fatalf("%q: %d pieces, the library's %d", around(s, 0), len(got), len(want))
}

// around is the text near byte i, for a failure's message: the texts of
// TestSplitFastEveryRune are hundreds of kilobytes.
func around(s string, i int) string {
	from, to := max(0, i-24), min(len(s), i+24)
	return strings.ToValidUTF8(s[from:to], "?")
}

// TestSplitFast: the pieces of texts that reach each branch, and each of
// the matcher's departures from the pattern, are the library's; the
// pieces are also written out for a reader (what the library cuts is the
// contract, these are its examples).
func TestSplitFast(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"Hello world", []string{"Hello", " world"}},
		{"HTTPServer's", []string{"HTTPServer's"}},
		{"ABC def", []string{"ABC", " def"}},
		{"we'LL they'Re i'ſ", []string{"we'LL", " they'Re", " i'ſ"}},
		{"12345 x", []string{"123", "45", " x"}},
		{"a  b", []string{"a", " ", " b"}},
		{" !!/\n/x", []string{" !!/\n/", "x"}},
		{"x \n  \n y", []string{"x", " \n  \n", " y"}},
		{"x\t!", []string{"x", "\t", "!"}},
		{"a\x7fb", []string{"a", "\x7fb"}},
		{"\x7f\x7f!", []string{"\x7f\x7f!"}},
		{"\u0301 x", []string{"\u0301", " x"}},
		{"e\u0301t\u00e9 ", []string{"e\u0301t\u00e9", " "}},
		{"tail  ", []string{"tail", "  "}},
		{"日本語 テキスト", []string{"日本語", " テキスト"}},
		{`{"type":"object"}`, []string{`{"`, "type", `":"`, "object", `"}`}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			samePieces(t, tc.text)
			var got []string
			splitFast(tc.text, func(start, end int) { got = append(got, tc.text[start:end]) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("pieces %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSplitDepartures: where tiktoken-go's generated matcher departs from
// the pattern, splitFast follows the pattern (regexp2's interpreter, and
// OpenAI's tiktoken), not tiktoken-go. Should a tiktoken-go release match
// the pattern, this fails: the caveats in splitFast's comment and in
// TestCountMatchesTiktoken can then go.
func TestSplitDepartures(t *testing.T) {
	for _, tc := range []struct {
		text, why string
	}{
		{"x \n  \n y", "the generated matcher backtracks to the first line break of a run of spaces"},
		{"a\x7fb", "the generated matcher's ASCII tables leave DEL out of both negated classes"},
	} {
		generated, pattern := generatedPieces(t, tc.text), libraryPieces(t, tc.text)
		if slices.EqualFunc(generated, pattern, slices.Equal) {
			t.Errorf("%q: tiktoken-go's generated matcher now cuts it as the pattern does (%s no longer holds)", tc.text, tc.why)
		}
		samePieces(t, tc.text)
	}
}

// splitContexts are the places a piece can start, end or be cut around a
// character R.
var splitContexts = []string{"R", "aR", "AR ", " RR", "'R", "x'R", "1R2", "R\n", "\nR", " R!", "éRb", "\u0301R", "R \n", "R'll"}

// TestSplitFastEveryRune: every character, in one of splitContexts (each
// in turn), is cut as the library cuts it; with the long tests, every
// character of the planes that have any assigned (0-3, and 14's tags and
// selectors) in every context. The other planes' characters are all of
// one class, unassigned or private use, and each is seen in one context.
func TestSplitFastEveryRune(t *testing.T) {
	sweep := func(c int, from, to rune) {
		for lo := from; lo < to; lo += 0x8000 {
			var b strings.Builder
			for r := lo; r < min(lo+0x8000, to); r++ {
				if !utf8.ValidRune(r) {
					continue
				}
				b.WriteString(strings.ReplaceAll(splitContexts[(int(r)+c)%len(splitContexts)], "R", string(r)))
				b.WriteByte('|')
			}
			samePieces(t, b.String())
		}
	}
	sweep(0, 0, utf8.MaxRune+1)
	if !longtest.On() {
		return
	}
	for c := 1; c < len(splitContexts); c++ {
		sweep(c, 0, 0x40000)
		sweep(c, 0xE0000, 0xE1000)
	}
}

// FuzzSplit holds splitFast to the library on any text (made valid UTF-8,
// as counting makes it).
func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"Hello world", "we'LL they'Re i'ſ", "x \n  \n y", "a\x7fb", "\u0301 x", "12345",
		" !!/\n/x", "tail  ", "日本語 テキスト", `[{"type":"function","function":{"name":"srv__get_item"}}]`,
		"\u3000\u00a0\u0085\n", "Ǆǅǆ ʰʱ", "'s'S'T'M'D'RE're've'VE'll'LL", "A\u0300\u0301b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		samePieces(t, validUTF8(s))
	})
}
