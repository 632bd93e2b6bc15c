package table

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hosteval/hosteval/internal/text"
)

// WriteText lays t out for a terminal, benchstat style: the title, the
// header, a rule, the rows, then the notes. Every cell is one line
// (OneLine); columns are as wide as their widest cell. Fit it to a width
// first when the terminal's width matters.
func (t *Table) WriteText(w io.Writer) error {
	if t.Title != "" {
		if _, err := io.WriteString(w, text.OneLine(t.Title)+"\n"); err != nil {
			return err
		}
	}
	widths := t.widths()
	var line []byte
	writeLine := func(texts func(i int) string) error {
		line = line[:0]
		for i, c := range t.Columns {
			s := texts(i)
			pad := strings.Repeat(" ", widths[i]-text.Width(s))
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
		if err := writeLine(func(i int) string { return text.OneLine(t.Columns[i].Name) }); err != nil {
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
			if err := writeLine(func(i int) string { return text.OneLine(cell(row, i).Text) }); err != nil {
				return err
			}
		}
	}
	for _, n := range t.Notes {
		if _, err := io.WriteString(w, text.OneLine(n)+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// widths are the columns' widths in the text layout: their widest cell.
func (t *Table) widths() []int {
	widths := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		widths[i] = text.Width(text.OneLine(c.Name))
	}
	for _, row := range t.Rows {
		for i := range widths {
			widths[i] = max(widths[i], text.Width(text.OneLine(cell(row, i).Text)))
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
			floor := max(text.Width(text.OneLine(t.Columns[cut].Name)), minShrink)
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
				out[j].Text = cutToWidth(text.OneLine(out[j].Text), widths[i])
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
	if text.Width(s) <= w {
		return s
	}
	for n := min(utf8.RuneCountInString(s), w); n > 0; n-- {
		if c := text.Shorten(s, n); text.Width(c) <= w {
			return c
		}
	}
	return ""
}
