package tokens

import (
	"unicode"
	"unicode/utf8"
)

// splitFast cuts s into the pieces splitPattern cuts it into, as OpenAI's
// tiktoken reads the pattern, calling piece with each one's [start, end)
// byte offsets, in order. It stands in for regexp2's interpreter on the
// pattern (FuzzSplit holds the two equal), written over the string's
// bytes: no []rune copy of the text, no match objects, ASCII classified
// without tables.
//
// tiktoken-go's generated matcher for the pattern (codec/regexp.gen.go,
// which regexp2 runs in the interpreter's place when the pattern is
// compiled as written) departs from it in two places, which this does
// not follow (TestSplitDepartures): `\s*[\r\n]+` backtracks there to the
// first line break of a run of spaces, not the last, so that "x \n  \n y"
// is x, " \n", "  \n", " y" rather than x, " \n  \n", " y"; and its ASCII
// tables leave DEL (U+007F) out of both negated classes, so that DEL is in
// no piece ("a\x7fb" is a, b rather than a, "\x7fb"). tiktoken-go's counts
// differ from OpenAI's there; hosteval's do not.
//
// The branches are tried in order at each position, as the pattern's
// atomic alternation is:
//
//	0: [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+('s|'t|'re|'ve|'m|'ll|'d)?
//	1: [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*('s|'t|'re|'ve|'m|'ll|'d)?
//	2: \p{N}{1,3}
//	3:  ?[^\s\p{L}\p{N}]+[\r\n/]*
//	4: \s*[\r\n]+
//	5: \s+(?!\S)
//	6: \s+
func splitFast(s string, piece func(start, end int)) {
	for i := 0; i < len(s); {
		end := matchAt(s, i)
		if end < 0 {
			// No branch matches: the matcher would move on a character.
			// Not reached with this pattern, whose classes hold every
			// character between them (DEL too, unlike tiktoken-go's).
			_, w := decode(s, i)
			i += w
			continue
		}
		piece(i, end)
		i = end
	}
}

// matchAt returns the end of the piece that starts at i, or -1 when no
// branch matches there.
func matchAt(s string, i int) int {
	r0, w0 := decode(s, i)
	// Branches 0 and 1, each with the optional prefix tried first, then
	// without it. Without it, an ASCII character that could be the
	// prefix is no letter, and neither can match; a combining mark (M)
	// can be the prefix and a letter of either class too.
	prefixed := inPrefix(r0)
	for _, letters := range [2]func(string, int) int{lettersLower, lettersUpper} {
		if prefixed {
			if end := letters(s, i+w0); end >= 0 {
				return contraction(s, end)
			}
			if r0 < utf8.RuneSelf {
				continue
			}
		}
		if end := letters(s, i); end >= 0 {
			return contraction(s, end)
		}
	}
	// Branch 2: one to three numbers.
	if isNumber(r0) {
		end := i + w0
		for n := 1; n < 3 && end < len(s); n++ {
			r, w := decode(s, end)
			if !isNumber(r) {
				break
			}
			end += w
		}
		return end
	}
	// Branch 3: an optional space (atomic), then punctuation, then line
	// breaks and slashes.
	j := i
	if r0 == ' ' {
		j++
	}
	if end := run(s, j, inPunct); end > j {
		for end < len(s) && (s[end] == '\r' || s[end] == '\n' || s[end] == '/') {
			end++
		}
		return end
	}
	// Branches 4-6: a run of spaces.
	spaces := run(s, i, isSpace)
	if spaces == i {
		return -1
	}
	// \s* gives back a character at a time until [\r\n]+ matches: at the
	// run's last line break, which [\r\n]+ cannot pass (the run's next
	// character is no line break). ASCII bytes of UTF-8 are whole
	// characters.
	for k := spaces - 1; k >= i; k-- {
		if s[k] == '\r' || s[k] == '\n' {
			return k + 1
		}
	}
	if spaces == len(s) {
		return spaces
	}
	// The run but its last space, when that leaves one: (?!\S) holds
	// before a space.
	_, w := utf8.DecodeLastRuneInString(s[i:spaces])
	if spaces-w > i {
		return spaces - w
	}
	return spaces
}

// lettersLower matches U*L+ at i (branch 0 but its contraction): the end,
// or -1. U* is greedy and gives back a character at a time until L+
// matches; as the character after the U run is no L, the L+ that matches
// after giving back is the rightmost L of the run, alone.
func lettersLower(s string, i int) int {
	u := run(s, i, isUpperish)
	if l := run(s, u, isLowerish); l > u {
		return l
	}
	for k := u; k > i; {
		r, w := utf8.DecodeLastRuneInString(s[i:k])
		if isLowerish(r) {
			return k
		}
		k -= w
	}
	return -1
}

// lettersUpper matches U+L* at i (branch 1 but its contraction): the end,
// or -1.
func lettersUpper(s string, i int) int {
	u := run(s, i, isUpperish)
	if u == i {
		return -1
	}
	return run(s, u, isLowerish)
}

// contraction extends a match ending at end by one of 's 't 're 've 'm 'll
// 'd, in either case (and ſ for s, which folds to it), if one follows.
func contraction(s string, end int) int {
	if end+1 >= len(s) || s[end] != '\'' {
		return end
	}
	switch c := s[end+1]; c {
	case 's', 'S', 't', 'T', 'm', 'M', 'd', 'D':
		return end + 2
	case 'r', 'R', 'v', 'V':
		if end+2 < len(s) && s[end+2]|0x20 == 'e' {
			return end + 3
		}
	case 'l', 'L':
		if end+2 < len(s) && s[end+2]|0x20 == 'l' {
			return end + 3
		}
	case 0xC5: // ſ is C5 BF
		if end+2 < len(s) && s[end+2] == 0xBF {
			return end + 3
		}
	}
	return end
}

// run returns the end of the run of characters from i that are in class.
func run(s string, i int, in func(rune) bool) int {
	for i < len(s) {
		r, w := decode(s, i)
		if !in(r) {
			break
		}
		i += w
	}
	return i
}

func decode(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// inPrefix is [^\r\n\p{L}\p{N}].
func inPrefix(r rune) bool {
	if r < utf8.RuneSelf {
		return r != '\r' && r != '\n' && !asciiAlnum(r)
	}
	return !unicode.In(r, unicode.L, unicode.N)
}

// inPunct is [^\s\p{L}\p{N}].
func inPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return !asciiSpace(r) && !asciiAlnum(r)
	}
	return !unicode.IsSpace(r) && !unicode.In(r, unicode.L, unicode.N)
}

// asciiAlnum is \p{L} or \p{N} below U+0080: the ASCII letters and digits.
func asciiAlnum(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

// asciiSpace is unicode.IsSpace below U+0080.
func asciiSpace(r rune) bool {
	return r == ' ' || '\t' <= r && r <= '\r'
}

// isUpperish is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
func isUpperish(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
}

// isLowerish is [\p{Ll}\p{Lm}\p{Lo}\p{M}].
func isLowerish(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.In(r, unicode.N)
}

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiSpace(r)
	}
	return unicode.IsSpace(r)
}
