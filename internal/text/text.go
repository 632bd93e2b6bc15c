// Package text owns the text rules that host, scenario and table share:
// [Shorten], the one way a text is cut for a person or a model to read;
// [OneLine], which makes a text safe for one line of a terminal; and
// [Width], the number of terminal columns a text takes; [Wrap], which
// breaks a line to a terminal's width; and [Count], a number with its
// noun. It is a leaf: it imports the standard library
// only.
package text

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Shorten cuts s to at most n characters (runes, never half of one), the
// last of them an ellipsis when it cut: Shorten("abcdef", 4) is "abc…". It
// is the one way a text is cut for a person or a model to read, from a
// chart label to an error quoted in an expectation; n <= 0 gives "".
func Shorten(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n { // n bytes hold at most n runes
		return s
	}
	cut, count := 0, 0
	for i := range s {
		if count == n-1 {
			cut = i
		}
		if count == n {
			return s[:cut] + "…"
		}
		count++
	}
	return s
}

// OneLine makes s safe for one line of a terminal: runs of white space
// (newlines included) become one space, the ends are trimmed, and control
// characters, which a terminal would obey (an escape sequence, a bidi
// override that reorders what follows), are shown escaped as \x1b or
// \u202e. Bytes that are not UTF-8 become U+FFFD.
func OneLine(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case space:
			b.WriteByte(' ')
			space = false
		}
		switch {
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			b.WriteString(`\x`)
			b.WriteString(hex2(r))
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			b.WriteString(`\u`)
			b.WriteString(strconv.FormatInt(int64(r), 16))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hex2(r rune) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[r>>4&0xf], digits[r&0xf]})
}

// Width is the number of terminal columns s takes: two for East Asian wide
// and fullwidth characters and most emoji, none for combining marks and
// format characters (a zero-width joiner), one for the rest. It is an
// approximation of Unicode's East Asian Width that holds for the text of
// reports (names, figures, messages); a control character counts one,
// but OneLine has escaped those before anything is measured.
func Width(s string) int {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w
}

func runeWidth(r rune) int {
	switch {
	case r < 0x300:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case wide(r):
		return 2
	}
	return 1
}

// wideRanges are the East Asian wide and fullwidth blocks and the emoji
// blocks whose characters are shown two columns wide, in order.
var wideRanges = [...][2]rune{
	{0x1100, 0x115f}, {0x231a, 0x231b}, {0x2329, 0x232a}, {0x23e9, 0x23ec}, {0x23f0, 0x23f0},
	{0x23f3, 0x23f3}, {0x25fd, 0x25fe}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x267f, 0x267f},
	{0x2693, 0x2693}, {0x26a1, 0x26a1}, {0x26aa, 0x26ab}, {0x26bd, 0x26be}, {0x26c4, 0x26c5},
	{0x26ce, 0x26ce}, {0x26d4, 0x26d4}, {0x26ea, 0x26ea}, {0x26f2, 0x26f3}, {0x26f5, 0x26f5},
	{0x26fa, 0x26fa}, {0x26fd, 0x26fd}, {0x2705, 0x2705}, {0x270a, 0x270b}, {0x2728, 0x2728},
	{0x274c, 0x274c}, {0x274e, 0x274e}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
	{0x27b0, 0x27b0}, {0x27bf, 0x27bf}, {0x2b1b, 0x2b1c}, {0x2b50, 0x2b50}, {0x2b55, 0x2b55},
	{0x2e80, 0x303e}, {0x3041, 0x33ff}, {0x3400, 0x4dbf}, {0x4e00, 0x9fff}, {0xa000, 0xa4cf},
	{0xa960, 0xa97f}, {0xac00, 0xd7a3}, {0xf900, 0xfaff}, {0xfe10, 0xfe19}, {0xfe30, 0xfe6f},
	{0xff00, 0xff60}, {0xffe0, 0xffe6}, {0x16fe0, 0x16fe4}, {0x17000, 0x18cff}, {0x1b000, 0x1b2ff},
	{0x1f004, 0x1f004}, {0x1f0cf, 0x1f0cf}, {0x1f18e, 0x1f18e}, {0x1f191, 0x1f19a}, {0x1f200, 0x1f251},
	{0x1f300, 0x1f64f}, {0x1f680, 0x1f6ff}, {0x1f7e0, 0x1f7eb}, {0x1f900, 0x1f9ff}, {0x1fa70, 0x1faff},
	{0x20000, 0x2fffd}, {0x30000, 0x3fffd},
}

func wide(r rune) bool {
	_, found := slices.BinarySearchFunc(wideRanges[:], r, func(rg [2]rune, r rune) int {
		switch {
		case rg[1] < r:
			return -1
		case rg[0] > r:
			return 1
		}
		return 0
	})
	return found
}

// Count is n with its noun, singular for one and plural (an s added)
// otherwise: Count(1, "case") is "1 case", Count(3, "case") "3 cases".
func Count(n int, noun string) string {
	if n == 1 || n == -1 {
		return strconv.Itoa(n) + " " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Wrap breaks line into lines of at most width columns for a terminal:
// between words where it can (the spaces between words on a line kept as
// they are, those where it breaks dropped), the lines after the first starting with
// the first's leading spaces and two more (a hanging indent); a word
// wider than a line (a name, a JSON value) is cut where the line ends,
// so that nothing is wider than width. width <= 0, or a line that fits,
// gives the line as it is.
func Wrap(line string, width int) []string {
	if width <= 0 || Width(line) <= width {
		return []string{line}
	}
	body := strings.TrimLeft(line, " ")
	first := line[:len(line)-len(body)]
	next := first + "  "
	if Width(next) >= width/2 {
		next = "  " // an indent that leaves the text no room is no help
	}
	var out []string
	cur, prefix := first, first
	for _, word := range strings.Split(body, " ") {
		switch {
		case cur == prefix && word == "":
			continue // no spaces at the start of a line it broke
		case cur == prefix:
		case Width(cur)+1+Width(word) <= width:
			cur += " "
		default:
			out = append(out, strings.TrimRight(cur, " "))
			cur, prefix = next, next
			if word == "" {
				continue
			}
		}
		// A word too wide for what is left of the line is cut at the
		// line's end, and goes on on the next.
		for Width(cur)+Width(word) > width {
			room := width - Width(cur)
			if room <= 0 {
				out = append(out, strings.TrimRight(cur, " "))
				cur, prefix = next, next
				continue
			}
			head, rest := cutWidth(word, room)
			out = append(out, cur+head)
			cur, prefix, word = next, next, rest
		}
		cur += word
	}
	return append(out, cur)
}

// cutWidth splits s after at most n columns (at least one rune).
func cutWidth(s string, n int) (string, string) {
	w := 0
	for i, r := range s {
		if w+runeWidth(r) > n && i > 0 {
			return s[:i], s[i:]
		}
		w += runeWidth(r)
	}
	return s, ""
}
