package table

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
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
// header, a rule of dashes (when there are rows), the rows, then the
// notes, with two spaces between columns and none at the end of a line.
// Every text is made one harmless line first (text.OneLine); the columns
// are laid out by tablewriter, each as wide as its widest cell, numbers
// right-aligned; a table of more than FastRows rows by the hand-written
// layout that writes the same bytes (WriteTextWith says who).
// Fit it to a width first when the terminal's width matters. The layout
// is read from HOSTEVAL_TABLE (LayoutEnv), "auto" when it is unset or
// not a layout (a command checks it when it starts: ParseLayout).
func (t *Table) WriteText(w io.Writer) error {
	l, err := ParseLayout(os.Getenv(LayoutEnv))
	if err != nil {
		l = LayoutAuto
	}
	return t.WriteTextWith(w, l)
}

// WriteTextWith is WriteText with the columns laid out as l says:
// LayoutAuto (or "") by tablewriter up to FastRows rows and by hand past
// them, LayoutTablewriter by tablewriter whatever the size.
func (t *Table) WriteTextWith(w io.Writer, l Layout) error {
	out := textOut{w: w}
	if t.Title != "" {
		out.line(text.OneLine(t.Title))
	}
	if len(t.Columns) > 0 {
		widths := t.widths()
		if l.byHand(len(t.Rows)) {
			t.layoutFast(&out, widths)
		} else if err := t.layout(&out, widths); err != nil {
			return err
		}
	}
	for _, n := range t.Notes {
		out.line(text.OneLine(n))
	}
	return out.flush()
}

// chunkRows is how many rows one tablewriter table lays out: tablewriter
// keeps a context of its neighbours for every line (for merging cells),
// about 20 KB a row of 15 columns, so a long table (LayoutTablewriter) is
// laid out in chunks with the widths fixed, as one table.
const chunkRows = 512

// layout writes t's header, rule and rows through tablewriter, in chunks
// of chunkRows rows whose columns all have the given widths.
func (t *Table) layout(out *textOut, widths []int) error {
	align := make([]tw.Align, len(t.Columns))
	header := make([]any, len(t.Columns))
	for i, c := range t.Columns {
		align[i] = tw.AlignLeft
		if c.Right {
			align[i] = tw.AlignRight
		}
		header[i] = text.OneLine(c.Name)
	}
	perColumn := tw.NewMapper[int, int]()
	for i, w := range widths {
		perColumn.Set(i, w)
	}
	cells := func() tw.CellConfig {
		return tw.CellConfig{
			// No title-casing of headers, and (below) no wrapping or
			// truncation: the cells are laid out exactly as OneLine and
			// Fit left them.
			Formatting: tw.CellFormatting{AutoFormat: tw.Off},
			Alignment:  tw.CellAlignment{PerColumn: align},
			Padding:    tw.CellPadding{Global: tw.PaddingNone},
		}
	}
	fail := func(err error) error { return fmt.Errorf("table %q: %w", text.OneLine(t.Title), err) }
	var b bytes.Buffer
	for start := 0; start == 0 || start < len(t.Rows); start += chunkRows {
		b.Reset()
		tbl := tablewriter.NewTable(&b,
			tablewriter.WithRenderer(renderer.NewBlueprint(textRendition())),
			tablewriter.WithConfig(tablewriter.Config{
				Header:   cells(),
				Row:      cells(),
				Behavior: tw.Behavior{TrimSpace: tw.Off, TrimLine: tw.Off, TrimTab: tw.Off},
				Widths:   tw.CellWidth{PerColumn: perColumn},
			}),
			// Set by their own options: WithConfig takes WrapNone, zero,
			// for "unset" and keeps the defaults, wrapping rows and
			// truncating headers. Its wrapping cuts the last rune of a
			// cell in two when it is not ASCII and measures the halves:
			// a cell ending in a combining mark was wrapped in a column
			// as wide as itself (FuzzTextLayouts).
			tablewriter.WithHeaderAutoWrap(tw.WrapNone),
			tablewriter.WithRowAutoWrap(tw.WrapNone))
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
		if out.lines(b.Bytes()); out.err != nil {
			return out.err
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

// DisplayWidth is the number of terminal columns s takes as the text
// layout measures it (tablewriter's measure), so that Fit, the layout and
// a test of a command's output agree. Unlike [text.Width] it follows the
// terminal's locale: under a CJK locale or RUNEWIDTH_EASTASIAN=1, East
// Asian ambiguous characters, such as the ellipsis Shorten adds, take two
// columns.
func DisplayWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' {
			// tablewriter's Width keeps the widths it measured in one
			// LRU cache of 8,192 strings for the whole process, behind a
			// mutex: a long table's cells, nearly all distinct, turn it
			// over without a hit. Its uncached measure is the same one.
			return twwidth.WidthNoCache(s)
		}
	}
	// Printable ASCII is one column a byte in any locale
	// (FuzzTextLayouts holds it to tablewriter's measure).
	return len(s)
}

// widths are the columns' widths in the text layout: their widest cell,
// and at least one column, as tablewriter lays out an empty column.
func (t *Table) widths() []int {
	widths := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		widths[i] = max(1, DisplayWidth(text.OneLine(c.Name)))
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
