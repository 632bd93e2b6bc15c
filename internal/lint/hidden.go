package lint

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The hidden-text rules: characters a person reviewing a catalog does not
// see (in a terminal, an editor, a web page) and a model reads. Each reads
// every string and key of a tool and the server's instructions, and
// reports the first place in each text, with how many there are.

// hiddenKind is a class of characters a hidden-text rule reports.
type hiddenKind int

const (
	hiddenTag hiddenKind = iota
	hiddenZeroWidth
	hiddenBidi
	hiddenFormat
	hiddenControl
	hiddenKinds
)

// hiddenRun is where a text holds characters of one kind: n of them, the
// first run of them from byte from to byte to, its first character.
type hiddenRun struct {
	n, from, to int
	first       rune
}

// hiddenPicks say which characters are of each kind, given the text and
// the character's offset (a joiner between two emoji is no hidden one).
var hiddenPicks = [hiddenKinds]func(s string, i int, r rune) bool{
	hiddenTag: func(_ string, _ int, r rune) bool { return isTag(r) },
	hiddenZeroWidth: func(s string, i int, r rune) bool {
		if !slices.Contains(zeroWidth, r) {
			return false
		}
		// An emoji sequence (a family, a flag with its joiner) is text a
		// person sees.
		return !(r == 0x200d && pictographic(runeBefore(s, i)) && pictographic(runeAfter(s, i)))
	},
	hiddenBidi:    func(_ string, _ int, r rune) bool { return isBidi(r) },
	hiddenFormat:  otherFormat,
	hiddenControl: control,
}

// scanHidden reads a text once for every hidden-text rule (each used to
// read it on its own): where each kind of character is. A text of
// printable ASCII has none, and is not read (textAt.plain).
func scanHidden(s string) *[hiddenKinds]hiddenRun {
	var runs [hiddenKinds]hiddenRun
	for k := range runs {
		runs[k].from, runs[k].to = -1, -1
	}
	found := false
	for i, r := range s {
		if r < 0x80 && r >= 0x20 && r != 0x7f {
			continue // printable ASCII: of no kind
		}
		for k, pick := range hiddenPicks {
			if !pick(s, i, r) {
				continue
			}
			run := &runs[k]
			found = true
			run.n++
			if run.from < 0 {
				run.from, run.first = i, r
			}
			if run.to < 0 || run.to == i {
				run.to = i + utf8.RuneLen(r)
			}
		}
	}
	if !found {
		return nil
	}
	return &runs
}

// charRule reports, per text, the characters of a kind: where the first
// run of them is, and how many there are.
func charRule(p *run, kind hiddenKind, message func(n int, first rune, txt string, from, to int) string) {
	p.eachText(func(s *server, t *tool, txt *textAt) {
		if txt.hidden == nil || txt.hidden[kind].n == 0 {
			return
		}
		h := txt.hidden[kind]
		p.report(s, t, txt, h.from, quote(txt.text, h.from, h.to), message(h.n, h.first, txt.text, h.from, h.to))
	})
}

func checkTags(p *run) {
	charRule(p, hiddenTag, func(n int, _ rune, s string, _, _ int) string {
		var spelt strings.Builder
		for _, r := range s {
			if r >= 0xe0020 && r <= 0xe007e {
				spelt.WriteRune(r - 0xe0000)
			}
			if spelt.Len() > 200 {
				break
			}
		}
		msg := fmt.Sprintf("%s (U+E0000-E007F): invisible, and read by the model", plural(n, "Unicode tag character"))
		if spelt.Len() > 0 {
			msg += fmt.Sprintf("; they spell %q", cut(spelt.String(), 80))
		}
		return msg
	})
}

// zeroWidth are the characters that take no room: spaces, joiners and
// the word joiner, the byte order mark, the invisible operators.
var zeroWidth = []rune{0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0x180e, 0x2061, 0x2062, 0x2063, 0x2064, 0x034f}

// pictographic approximates Extended_Pictographic: an emoji's joiner and
// variation selector sit between such characters.
func pictographic(r rune) bool {
	return unicode.Is(unicode.So, r) || unicode.Is(unicode.Sk, r) || (r >= 0x1f000 && r <= 0x1faff)
}

// runeBefore and runeAfter are the runes around byte i of s (0 at the ends).
func runeBefore(s string, i int) rune {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	if r == utf8.RuneError {
		return 0
	}
	return r
}

func runeAfter(s string, i int) rune {
	_, n := utf8.DecodeRuneInString(s[i:])
	r, _ := utf8.DecodeRuneInString(s[i+n:])
	if r == utf8.RuneError {
		return 0
	}
	return r
}

func checkZeroWidth(p *run) {
	charRule(p, hiddenZeroWidth, func(n int, first rune, _ string, _, _ int) string {
		return fmt.Sprintf("%s (the first %s): invisible, and read by the model", plural(n, "zero-width character"), codePoint(first))
	})
}

func isBidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

func checkBidi(p *run) {
	charRule(p, hiddenBidi, func(n int, first rune, _ string, _, _ int) string {
		return fmt.Sprintf("%s (the first %s): a person sees the text reordered, the model reads it as sent", plural(n, "bidirectional control"), codePoint(first))
	})
}

// otherFormat picks the format characters the rules above leave, and
// variation selectors that follow no pictograph or come in runs (data can
// be smuggled in them).
func otherFormat(s string, i int, r rune) bool {
	switch {
	case isTag(r) || isBidi(r) || slices.Contains(zeroWidth, r):
		return false
	case r >= 0xe0100 && r <= 0xe01ef:
		return true
	case r >= 0xfe00 && r <= 0xfe0f:
		prev := runeBefore(s, i)
		return !pictographic(prev) && !unicode.Is(unicode.Han, prev)
	}
	return r >= 0x80 && unicode.Is(unicode.Cf, r)
}

func checkFormat(p *run) {
	charRule(p, hiddenFormat, func(n int, first rune, _ string, _, _ int) string {
		return fmt.Sprintf("%s (the first %s): not shown, and read by the model", plural(n, "invisible format character"), codePoint(first))
	})
}

// control picks C0 and C1 control characters but tab, newline and
// carriage return, and DEL.
func control(_ string, _ int, r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || (r >= 0x7f && r <= 0x9f)
}

func checkANSI(p *run) {
	p.eachText(func(s *server, t *tool, txt *textAt) {
		if txt.hidden == nil || txt.hidden[hiddenControl].n == 0 {
			return
		}
		h := txt.hidden[hiddenControl]
		from, n, first := h.from, h.n, h.first
		to := from + utf8.RuneLen(first)
		msg := fmt.Sprintf("%s (the first %s)", plural(n, "control character"), codePoint(first))
		if seq := escapeSequence(txt.text[from:]); seq > 0 {
			to = from + seq
			msg = fmt.Sprintf("an ANSI escape sequence %s: a terminal obeys it (colours, moves the cursor, hides or rewrites text), the model reads it; %s in all", Visible(txt.text[from:to]), plural(n, "control character"))
		}
		p.report(s, t, txt, from, quote(txt.text, from, to), msg)
	})
}

// escapeSequence returns the length of the escape sequence s starts with
// (ESC [ ... final, ESC ] ... BEL or ST, C1 CSI ...), or 0.
func escapeSequence(s string) int {
	i := 0
	switch {
	case strings.HasPrefix(s, "\x1b["):
		i = 2
	case strings.HasPrefix(s, "\u009b"):
		i = 2
	case strings.HasPrefix(s, "\x1b]"):
		for j := 2; j < len(s) && j < 512; j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return min(len(s), 2)
	case strings.HasPrefix(s, "\x1b") && len(s) > 1 && s[1] >= 0x40 && s[1] <= 0x5f:
		return 2
	default:
		return 0
	}
	for ; i < len(s) && i < 64; i++ {
		if s[i] >= 0x40 && s[i] <= 0x7e {
			return i + 1
		}
		if s[i] < 0x20 || s[i] > 0x3f {
			return i
		}
	}
	return i
}

// The comment patterns are compiled on the first lint, not at every start
// of hosteval.
var (
	htmlComment     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<!--[\s\S]*?(?:-->|$)`) })
	markdownComment = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^[ \t]*\[(?://|#|comment|_)\]:[ \t]*(?:#|<>)[^\n]*`)
	})
)

func checkComments(p *run) {
	p.eachText(func(s *server, t *tool, txt *textAt) {
		if txt.kind == kindName || txt.kind == kindParam || txt.kind == kindKey {
			return
		}
		if !strings.Contains(txt.text, "<!--") && !strings.Contains(txt.text, "]:") {
			return
		}
		what := "an HTML comment"
		loc := htmlComment().FindStringIndex(txt.text)
		if m := markdownComment().FindStringIndex(txt.text); m != nil && (loc == nil || m[0] < loc[0]) {
			loc, what = m, "a Markdown comment"
		}
		if loc == nil {
			return
		}
		body := txt.text[loc[0]:loc[1]]
		p.report(s, t, txt, loc[0], quote(txt.text, loc[0], loc[1]),
			fmt.Sprintf("%s (%s): a page or editor that renders Markdown hides it, the model reads it", what, plural(utf8.RuneCountInString(body), "character")))
	})
}

// script names the writing system of a letter, for the scripts whose
// letters look like Latin ones; "" for what is not a letter (digits, _).
func script(r rune) string {
	switch {
	case r < 0x80:
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return "Latin"
		}
		return ""
	case !unicode.IsLetter(r):
		return ""
	case r >= 0xff21 && r <= 0xff5a:
		return "Fullwidth Latin"
	case unicode.Is(unicode.Latin, r):
		return "Latin"
	case unicode.Is(unicode.Greek, r):
		return "Greek"
	case unicode.Is(unicode.Cyrillic, r):
		return "Cyrillic"
	case unicode.Is(unicode.Armenian, r):
		return "Armenian"
	case unicode.Is(unicode.Cherokee, r):
		return "Cherokee"
	case unicode.Is(unicode.Han, r), unicode.Is(unicode.Hiragana, r), unicode.Is(unicode.Katakana, r), unicode.Is(unicode.Hangul, r):
		return "CJK"
	}
	for _, sc := range otherScripts {
		if unicode.Is(sc.table, r) {
			return sc.name
		}
	}
	return "other"
}

var otherScripts = []struct {
	name  string
	table *unicode.RangeTable
}{{"Arabic", unicode.Arabic}, {"Hebrew", unicode.Hebrew}, {"Devanagari", unicode.Devanagari}, {"Thai", unicode.Thai},
	{"Georgian", unicode.Georgian}, {"Coptic", unicode.Coptic}}

func checkMixedScript(p *run) {
	p.eachText(func(s *server, t *tool, txt *textAt) {
		if txt.plain || (txt.kind != kindName && txt.kind != kindParam) {
			return
		}
		counts := map[string]int{}
		var order []string
		for _, r := range txt.text {
			if sc := script(r); sc != "" {
				if counts[sc] == 0 {
					order = append(order, sc)
				}
				counts[sc]++
			}
		}
		if len(order) < 2 {
			return
		}
		// The script with the fewest letters is the one that looks like
		// another's.
		odd := slices.MinFunc(order, func(a, b string) int { return counts[a] - counts[b] })
		var at int
		var oddRune rune
		for i, r := range txt.text {
			if script(r) == odd {
				at, oddRune = i, r
				break
			}
		}
		what := "a name"
		if txt.kind == kindParam {
			what = "a parameter's name"
		}
		p.report(s, t, txt, at, quote(txt.text, at, at+utf8.RuneLen(oddRune)),
			fmt.Sprintf("%s mixing %s: %q (%s) is %s and may pass for another script's letter", what, strings.Join(order, " and "), string(oddRune), codePoint(oddRune), odd))
	})
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "s") {
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
