package table

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/hosteval/hosteval/internal/text"
)

// WriteText lays t out for a terminal, benchstat style: the title, the
// header, a rule of dashes, the rows, then the notes, with two spaces
// between columns and none at the end of a line. Every text is made one
// harmless line first (text.OneLine); the columns themselves are laid out by
// tablewriter, each as wide as its widest cell, numbers right-aligned.
// Fit it to a width first when the terminal's width matters.
func (t *Table) WriteText(w io.Writer) error {
	var b bytes.Buffer
	if t.Title != "" {
		b.WriteString(text.OneLine(t.Title))
		b.WriteByte('\n')
	}
	if len(t.Columns) > 0 {
		if err := t.layout(&b); err != nil {
			return err
		}
	}
	for _, n := range t.Notes {
		b.WriteString(text.OneLine(n))
		b.WriteByte('\n')
	}
	_, err := w.Write(trimLines(b.Bytes()))
	return err
}

// chunkRows is how many rows one tablewriter table lays out: tablewriter
// keeps a context of its neighbours for every line (for merging cells),
// about 20 KB a row of 15 columns, so a table of 100,000 cases is laid out
// in chunks with the widths fixed, as one table.
const chunkRows = 512

// layout writes t's header, rule and rows through tablewriter, in chunks
// of chunkRows rows whose columns all have the widths of the whole table.
func (t *Table) layout(b *bytes.Buffer) error {
	align := make([]tw.Align, len(t.Columns))
	header := make([]any, len(t.Columns))
	for i, c := range t.Columns {
		align[i] = tw.AlignLeft
		if c.Right {
			align[i] = tw.AlignRight
		}
		header[i] = text.OneLine(c.Name)
	}
	widths := tw.NewMapper[int, int]()
	for i, w := range t.widths() {
		widths.Set(i, w)
	}
	cells := func() tw.CellConfig {
		return tw.CellConfig{
			// No wrapping, no truncation, no title-casing of headers:
			// the cells are laid out exactly as OneLine and Fit left them.
			Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone},
			Alignment:  tw.CellAlignment{PerColumn: align},
			Padding:    tw.CellPadding{Global: tw.PaddingNone},
		}
	}
	fail := func(err error) error { return fmt.Errorf("table %q: %w", text.OneLine(t.Title), err) }
	for start := 0; start == 0 || start < len(t.Rows); start += chunkRows {
		tbl := tablewriter.NewTable(b,
			tablewriter.WithRenderer(renderer.NewBlueprint(textRendition())),
			tablewriter.WithConfig(tablewriter.Config{
				Header:   cells(),
				Row:      cells(),
				Behavior: tw.Behavior{TrimSpace: tw.Off, TrimLine: tw.Off, TrimTab: tw.Off},
				Widths:   tw.CellWidth{PerColumn: widths},
			}))
		if start == 0 {
			tbl.Header(header...)
		}
		for _, r := range t.Rows[start:min(start+chunkRows, len(t.Rows))] {
			row := make([]string, len(t.Columns)) // tablewriter keeps it
			for i := range row {
				row[i] = text.OneLine(cell(r, i).Text)
			}
			if err := tbl.Append(row); err != nil {
				return fail(err)
			}
		}
		if err := tbl.Render(); err != nil {
			return fail(err)
		}
	}
	return nil
}

// textRendition is benchstat's borderless table: no frame, a rule of
// dashes under the header, two spaces between columns.
func textRendition() tw.Rendition {
	sym := tw.NewSymbolCustom("hosteval").
		WithRow("-").WithColumn(strings.Repeat(" ", colGap)).
		WithCenter("--").WithHeaderMid("--").
		WithHeaderLeft("").WithHeaderRight("").WithMidLeft("").WithMidRight("")
	return tw.Rendition{
		Borders: tw.Border{Left: tw.Off, Right: tw.Off, Top: tw.Off, Bottom: tw.Off},
		Symbols: sym,
		Settings: tw.Settings{
			Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.On, ShowHeader: tw.On},
			Lines:      tw.Lines{ShowTop: tw.Off, ShowBottom: tw.Off, ShowHeaderLine: tw.On, ShowFooterLine: tw.Off},
		},
	}
}

// colGap is the number of spaces between two columns of the text layout.
const colGap = 2

// trimLines drops the spaces at the end of every line of p, in place: a
// left-aligned last column is padded to its width, and a line that ends
// in spaces is noise in a terminal, a log and a diff.
func trimLines(p []byte) []byte {
	out := p[:0]
	for len(p) > 0 {
		line, rest, found := bytes.Cut(p, []byte{'\n'})
		out = append(out, bytes.TrimRight(line, " ")...)
		if found {
			out = append(out, '\n')
		}
		p = rest
	}
	return out
}

// DisplayWidth is the number of terminal columns s takes as the text
// layout measures it (tablewriter's measure), so that Fit, the layout and
// a test of a command's output agree. Unlike [text.Width] it follows the
// terminal's locale: under a CJK locale or RUNEWIDTH_EASTASIAN=1, East
// Asian ambiguous characters, such as the ellipsis Shorten adds, take two
// columns.
func DisplayWidth(s string) int { return twwidth.Width(s) }

// widths are the columns' widths in the text layout: their widest cell.
func (t *Table) widths() []int {
	widths := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		widths[i] = DisplayWidth(text.OneLine(c.Name))
	}
	for _, row := range t.Rows {
		for i := range widths {
			widths[i] = max(widths[i], DisplayWidth(text.OneLine(cell(row, i).Text)))
		}
	}
	return widths
}

// TextWidth is the width of t's text layout: the widest of its lines.
func (t *Table) TextWidth() int {
	n := DisplayWidth(text.OneLine(t.Title))
	if len(t.Columns) > 0 {
		n = max(n, lineWidth(t.widths()))
	}
	for _, note := range t.Notes {
		n = max(n, DisplayWidth(text.OneLine(note)))
	}
	return n
}

// lineWidth is the width of a line of the text layout whose columns are
// widths wide.
func lineWidth(widths []int) int {
	n := 0
	for _, w := range widths {
		n += w
	}
	return n + colGap*max(len(widths)-1, 0)
}

// minShrink is the narrowest Fit cuts a column to: enough to tell names
// apart by their beginnings.
const minShrink = 12

// Fit returns t laid out no wider than width terminal columns where it can
// be: it cuts a name wider than three fifths of width to that (the widest
// left-aligned column never hidden, with text.Shorten), then hides columns
// by Priority (highest first, rightmost of equals first) until the rest
// fit, and shows again those hidden columns that fit in the room left,
// lowest Priority first; then, if the columns left are still too wide, it
// cuts the widest left-aligned one down to what fits, no narrower than its
// header or minShrink.
// A note names the hidden columns, followed by hint in parentheses when
// hint is not empty (the flag that shows them, say). Notes wider than
// width are wrapped at spaces, and a title is cut to it. A width of zero
// or less, or a table that fits, gives t itself.
func (t *Table) Fit(width int, hint string) *Table {
	if width <= 0 || t.TextWidth() <= width {
		return t
	}
	full := t.widths()
	widths := slices.Clone(full)
	total := lineWidth(widths)
	// A name far wider than its share of the terminal is cut to that
	// share before any figure is hidden: the end of a very long name
	// tells less than the figures beside it.
	if c := t.widestLeft(widths, nil); c >= 0 {
		share := max(width*3/5, t.floor(c))
		if widths[c] > share {
			to := max(widths[c]-(total-width), share)
			total -= widths[c] - to
			widths[c] = to
		}
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
		total -= widths[i] + colGap
	}
	// Room left by a wide column may hold a narrower one hidden before
	// it: bring those back, the most wanted first.
	for _, i := range slices.Backward(order) {
		if hidden[i] && total+widths[i]+colGap <= width {
			hidden[i] = false
			total += widths[i] + colGap
		}
	}
	if total > width {
		if c := t.widestLeft(widths, hidden); c >= 0 {
			to := max(widths[c]-(total-width), t.floor(c))
			if to < widths[c] {
				total -= widths[c] - to
				widths[c] = to
			}
		}
	}
	fitted := &Table{Title: t.Title}
	if DisplayWidth(text.OneLine(t.Title)) > width {
		fitted.Title = cutToWidth(text.OneLine(t.Title), width)
	}
	for _, n := range t.Notes {
		fitted.Notes = append(fitted.Notes, wrap(text.OneLine(n), width)...)
	}
	var keep []int
	var names []string
	unnamed := 0
	for i, c := range t.Columns {
		if hidden[i] {
			if name := text.OneLine(c.Name); name != "" {
				names = append(names, name)
			} else {
				unnamed++
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
			if widths[i] < full[i] {
				out[j].Text = cutToWidth(text.OneLine(out[j].Text), widths[i])
			}
		}
		fitted.Rows[r] = out
	}
	if len(names)+unnamed > 0 {
		if unnamed > 0 {
			names = append(names, fmt.Sprintf("%d unnamed", unnamed))
		}
		// Wrapped between names, never inside one ("vs old").
		tokens := []string{fmt.Sprintf("hidden to fit %d columns:", width)}
		for i, name := range names {
			if i < len(names)-1 {
				name += ","
			}
			tokens = append(tokens, name)
		}
		if hint != "" {
			tokens = append(tokens, "("+hint+")")
		}
		fitted.Notes = append(fitted.Notes, wrapTokens(tokens, width)...)
	}
	return fitted
}

// widestLeft is the widest left-aligned column (a name, free text) that
// is not hidden, and never hidden when hidden is nil: the one Fit cuts;
// -1 when there is none.
func (t *Table) widestLeft(widths []int, hidden []bool) int {
	cut := -1
	for i, c := range t.Columns {
		if c.Right || (hidden == nil && c.Priority > 0) || (hidden != nil && hidden[i]) {
			continue
		}
		if cut < 0 || widths[i] > widths[cut] {
			cut = i
		}
	}
	return cut
}

// floor is the narrowest Fit cuts column i to: its header, or minShrink.
func (t *Table) floor(i int) int {
	return max(DisplayWidth(text.OneLine(t.Columns[i].Name)), minShrink)
}

// cutToWidth shortens s until it takes at most w terminal columns.
func cutToWidth(s string, w int) string {
	if DisplayWidth(s) <= w {
		return s
	}
	for n := min(utf8.RuneCountInString(s), w); n > 0; n-- {
		if c := text.Shorten(s, n); DisplayWidth(c) <= w {
			return c
		}
	}
	return ""
}

// wrap breaks s at spaces into lines of at most w terminal columns; a
// word wider than w is cut to it.
func wrap(s string, w int) []string {
	if DisplayWidth(s) <= w {
		return []string{s}
	}
	return wrapTokens(strings.Fields(s), w)
}

// wrapTokens lays tokens out on lines of at most w terminal columns, one
// space between two tokens on a line; a token wider than w is cut to it.
func wrapTokens(tokens []string, w int) []string {
	var lines []string
	line, lineW := "", 0
	for _, tok := range tokens {
		tok = cutToWidth(tok, w)
		tw := DisplayWidth(tok)
		if line != "" && lineW+1+tw > w {
			lines = append(lines, line)
			line, lineW = "", 0
		}
		if line != "" {
			line += " "
			lineW++
		}
		line += tok
		lineW += tw
	}
	return append(lines, line)
}
