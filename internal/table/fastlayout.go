package table

import (
	"bytes"
	"fmt"
	"io"

	"github.com/hosteval/hosteval/internal/text"
)

// Layout says who lays out the columns of the text layout: tablewriter,
// the layout of record, or the hand-written layout in this file, which
// writes the same bytes (FuzzTextLayouts holds the two equal) 15-20 times
// faster with a hundredth of the memory (docs/perf.md, "The table
// layout"). tablewriter builds a context of the neighbouring cells for
// every line and measures every padded cell through one cache shared by
// the process: 0.3 ms and 20 KB a row of 15 columns, a minute for the
// cases table of a run of 100,000 cases.
type Layout string

const (
	// LayoutAuto is tablewriter up to FastRows rows and the hand-written
	// layout past them. The zero Layout is LayoutAuto.
	LayoutAuto Layout = "auto"
	// LayoutTablewriter is tablewriter for every table: the switch back
	// to the library (HOSTEVAL_TABLE=tablewriter).
	LayoutTablewriter Layout = "tablewriter"
	// layoutHand is the hand-written layout for every table, for the
	// tests that hold it to tablewriter's.
	layoutHand Layout = "fast"
)

// FastRows is the most rows tablewriter lays out under LayoutAuto: the
// tables a person reads in a terminal are shorter, and a longer one (the
// cases table of report -cases) is laid out by hand.
const FastRows = 1000

// LayoutEnv is the environment variable a command reads its Layout from,
// once, when it starts: "auto" (or unset) or "tablewriter".
const LayoutEnv = "HOSTEVAL_TABLE"

// ParseLayout reads a Layout as LayoutEnv spells it; "" is LayoutAuto.
func ParseLayout(s string) (Layout, error) {
	switch l := Layout(s); l {
	case "", LayoutAuto:
		return LayoutAuto, nil
	case LayoutTablewriter:
		return l, nil
	}
	return "", fmt.Errorf("%s=%q: want %q or %q", LayoutEnv, s, LayoutAuto, LayoutTablewriter)
}

// byHand reports whether a table of rows rows is laid out by hand.
func (l Layout) byHand(rows int) bool {
	switch l {
	case layoutHand:
		return true
	case LayoutTablewriter:
		return false
	}
	return rows > FastRows
}

// layoutFast writes what layout writes through tablewriter: the header,
// a rule of dashes as wide as the line when there are rows, then the
// rows; each cell padded to its column's width by DisplayWidth, on the
// left when the column is right-aligned, two spaces between columns.
func (t *Table) layoutFast(out *textOut, widths []int) {
	for i, c := range t.Columns {
		out.cell(i, text.OneLine(c.Name), widths[i], c.Right)
	}
	out.endLine()
	if len(t.Rows) == 0 {
		// tablewriter draws the header's rule above the first row only.
		return
	}
	out.repeat('-', lineWidth(widths))
	out.endLine()
	for _, row := range t.Rows {
		if out.err != nil {
			return
		}
		for i, c := range t.Columns {
			out.cell(i, text.OneLine(cell(row, i).Text), widths[i], c.Right)
		}
		out.endLine()
	}
}

// textOut gathers the lines of the text layout and writes them to w
// about flushBytes at a time, with no spaces at the end of a line: a
// left-aligned last column is padded to its width, and a line that ends
// in spaces is noise in a terminal, a log and a diff. After a failed
// write it writes nothing more and flush returns the error.
type textOut struct {
	w   io.Writer
	buf []byte
	err error
}

// flushBytes is about how much textOut holds before it writes: a table of
// 100,000 rows is never held whole, and stdout gets few writes.
const flushBytes = 32 << 10

// line adds s, one line, and ends it.
func (o *textOut) line(s string) {
	o.buf = append(o.buf, s...)
	o.endLine()
}

// lines adds p, whole lines, each ended.
func (o *textOut) lines(p []byte) {
	for len(p) > 0 {
		line, rest, found := bytes.Cut(p, []byte{'\n'})
		o.buf = append(o.buf, line...)
		if !found {
			// Not a whole line: kept as it is until the next one ends it.
			o.buf = bytes.TrimRight(o.buf, " ")
			break
		}
		o.endLine()
		p = rest
	}
}

// cell adds column i's cell s to the line, padded to width.
func (o *textOut) cell(i int, s string, width int, right bool) {
	if i > 0 {
		o.repeat(' ', colGap)
	}
	pad := width - DisplayWidth(s)
	if right {
		o.repeat(' ', pad)
	}
	o.buf = append(o.buf, s...)
	if !right {
		o.repeat(' ', pad)
	}
}

// repeat adds n bytes c.
func (o *textOut) repeat(c byte, n int) {
	for range n {
		o.buf = append(o.buf, c)
	}
}

// endLine drops the spaces at the end of the line and ends it. The line
// before ends in a newline, which stops the trimming.
func (o *textOut) endLine() {
	o.buf = append(bytes.TrimRight(o.buf, " "), '\n')
	if len(o.buf) >= flushBytes {
		o.write()
	}
}

// write hands what is gathered to w.
func (o *textOut) write() {
	if o.err == nil {
		_, o.err = o.w.Write(o.buf)
	}
	o.buf = o.buf[:0]
}

// flush writes what is left and returns the first error of any write.
func (o *textOut) flush() error {
	if len(o.buf) > 0 {
		o.write()
	}
	return o.err
}
