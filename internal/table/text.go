package table

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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

// WriteText lays t out for a terminal, benchstat style: the title, the
// header, a rule, the rows, then the notes. Every cell is one line
// (OneLine); columns are as wide as their widest cell. Fit it to a width
// first when the terminal's width matters.
func (t *Table) WriteText(w io.Writer) error {
	if t.Title != "" {
		if _, err := io.WriteString(w, OneLine(t.Title)+"\n"); err != nil {
			return err
		}
	}
	widths := t.widths()
	var line []byte
	writeLine := func(texts func(i int) string) error {
		line = line[:0]
		for i, c := range t.Columns {
			s := texts(i)
			pad := strings.Repeat(" ", widths[i]-Width(s))
			line = append(line, ' ')
			if c.Right {
				line = append(line, pad...)
				line = append(line, s...)
			} else {
				line = append(line, s...)
				line = append(line, pad...)
			}
			line = append(line, ' ')
		}
		line = append(line, '\n')
		_, err := w.Write(line)
		return err
	}
	if len(t.Columns) > 0 {
		if err := writeLine(func(i int) string { return OneLine(t.Columns[i].Name) }); err != nil {
			return err
		}
		rule := 0
		for _, n := range widths {
			rule += n + 2
		}
		if _, err := io.WriteString(w, strings.Repeat("-", rule)+"\n"); err != nil {
			return err
		}
		for _, row := range t.Rows {
			if err := writeLine(func(i int) string { return OneLine(cell(row, i).Text) }); err != nil {
				return err
			}
		}
	}
	for _, n := range t.Notes {
		if _, err := io.WriteString(w, OneLine(n)+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// widths are the columns' widths in the text layout: their widest cell.
func (t *Table) widths() []int {
	widths := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		widths[i] = Width(OneLine(c.Name))
	}
	for _, row := range t.Rows {
		for i := range widths {
			widths[i] = max(widths[i], Width(OneLine(cell(row, i).Text)))
		}
	}
	return widths
}

// minShrink is the narrowest Fit cuts a column to: enough to tell names
// apart by their beginnings.
const minShrink = 12

// Fit returns t laid out no wider than width terminal columns where it can
// be: it hides columns by Priority (highest first, rightmost of equals
// first) until the rest fit, and shows again those hidden columns that fit
// in the room left, lowest Priority first; then, if the columns that are
// never hidden are still too wide, it cuts the widest left-aligned one
// (Shorten) down to what fits, no narrower than its header or minShrink. A note names the hidden
// columns, followed by hint in parentheses when hint is not empty (the
// flag that shows them, say). A width of zero or less, or a table that
// fits, gives t itself.
func (t *Table) Fit(width int, hint string) *Table {
	if width <= 0 || len(t.Columns) == 0 {
		return t
	}
	widths := t.widths()
	total := 0
	for _, n := range widths {
		total += n + 2
	}
	if total <= width {
		return t
	}
	var order []int
	for i, c := range t.Columns {
		if c.Priority > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(t.Columns[b].Priority, t.Columns[a].Priority), cmp.Compare(b, a))
	})
	hidden := make([]bool, len(t.Columns))
	for _, i := range order {
		if total <= width {
			break
		}
		hidden[i] = true
		total -= widths[i] + 2
	}
	// Room left by a wide column may hold a narrower one hidden before
	// it: bring those back, the most wanted first.
	for _, i := range slices.Backward(order) {
		if hidden[i] && total+widths[i]+2 <= width {
			hidden[i] = false
			total += widths[i] + 2
		}
	}
	cut := -1 // the column cut to fit, if any
	if total > width {
		for i, c := range t.Columns {
			if !hidden[i] && !c.Right && (cut < 0 || widths[i] > widths[cut]) {
				cut = i
			}
		}
		if cut >= 0 {
			floor := max(Width(OneLine(t.Columns[cut].Name)), minShrink)
			to := max(widths[cut]-(total-width), floor)
			if to < widths[cut] {
				widths[cut] = to
			} else {
				cut = -1
			}
		}
	}
	fitted := &Table{Title: t.Title, Notes: slices.Clone(t.Notes)}
	var keep []int
	var names []string
	for i, c := range t.Columns {
		if hidden[i] {
			if c.Name != "" {
				names = append(names, c.Name)
			}
			continue
		}
		keep = append(keep, i)
		fitted.Columns = append(fitted.Columns, c)
	}
	fitted.Rows = make([][]Cell, len(t.Rows))
	for r, row := range t.Rows {
		out := make([]Cell, len(keep))
		for j, i := range keep {
			out[j] = cell(row, i)
			if i == cut {
				out[j].Text = cutToWidth(OneLine(out[j].Text), widths[i])
			}
		}
		fitted.Rows[r] = out
	}
	if n := len(t.Columns) - len(keep); n > 0 {
		note := fmt.Sprintf("hidden to fit %d columns: %s", width, strings.Join(names, ", "))
		if len(names) == 0 {
			note = fmt.Sprintf("hidden to fit %d columns: %d unnamed", width, n)
		}
		if hint != "" {
			note += " (" + hint + ")"
		}
		fitted.Notes = append(fitted.Notes, note)
	}
	return fitted
}

// cutToWidth shortens s until it takes at most w terminal columns.
func cutToWidth(s string, w int) string {
	if Width(s) <= w {
		return s
	}
	for n := min(utf8.RuneCountInString(s), w); n > 0; n-- {
		if c := Shorten(s, n); Width(c) <= w {
			return c
		}
	}
	return ""
}
