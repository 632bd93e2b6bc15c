package lint

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// How much of a text a finding quotes: the offending part, cut to
// quoteMark runes, and up to quoteContext runes on either side.
const (
	quoteMark    = 48
	quoteContext = 32
)

// invisible reports whether r is shown as nothing, or as something other
// than itself, by most terminals, editors and web pages, while a model
// reads it: format characters (Cf: zero-width, joiners, bidi controls,
// tags, ...), variation selectors, and control characters.
func invisible(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n' && r != '\r'
	case r < 0x7f:
		return false
	case r <= 0x9f:
		return true
	case isVariationSelector(r):
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

func isVariationSelector(r rune) bool {
	return (r >= 0xfe00 && r <= 0xfe0f) || (r >= 0xe0100 && r <= 0xe01ef)
}

func isTag(r rune) bool { return r >= 0xe0000 && r <= 0xe007f }

// Visible returns s with every invisible and control character shown as
// <U+XXXX> (a newline as \n, a tab as \t), so that a finding quotes what a
// person could not see.
func Visible(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == utf8.RuneError:
			b.WriteString("<U+FFFD>")
		case invisible(r):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// quote returns the part of s from byte from to byte to, with context
// around it, made visible: the part cut to quoteMark runes, the context to
// quoteContext runes on either side, "…" where something was cut.
func quote(s string, from, to int) string {
	from, to = clampRune(s, from), clampRune(s, to)
	if to < from {
		to = from
	}
	before := s[:from]
	if n := utf8.RuneCountInString(before); n > quoteContext {
		before = "…" + before[runeOffset(before, n-quoteContext):]
	}
	mark := s[from:to]
	if n := utf8.RuneCountInString(mark); n > quoteMark {
		mark = mark[:runeOffset(mark, quoteMark)] + "…"
	}
	after := s[to:]
	if n := utf8.RuneCountInString(after); n > quoteContext {
		after = after[:runeOffset(after, quoteContext)] + "…"
	}
	return Visible(before + mark + after)
}

// quoteAll quotes a whole short text, or its start.
func quoteAll(s string) string { return quote(s, 0, min(len(s), quoteMark*2)) }

// runeOffset is the byte offset of the n'th rune of s.
func runeOffset(s string, n int) int {
	i := 0
	for k := range s {
		if i == n {
			return k
		}
		i++
	}
	return len(s)
}

// clampRune moves i back to the start of the rune it is in, within s.
func clampRune(s string, i int) int {
	if i <= 0 {
		return 0
	}
	if i >= len(s) {
		return len(s)
	}
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// codePoint names a character: U+200B.
func codePoint(r rune) string { return fmt.Sprintf("U+%04X", r) }

// cut shortens a text to n runes for a message, made visible.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return Visible(s)
	}
	return Visible(s[:runeOffset(s, n)]) + "…"
}
