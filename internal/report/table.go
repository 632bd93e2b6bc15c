package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Kind says what a Cell holds, so that renderers can align and style it
// without parsing its text.
type Kind int

const (
	KindText   Kind = iota // a name or free text
	KindNumber             // a count, mean, size or duration (Value is set)
	KindStatus             // pass, fail or error
	KindDelta              // a change between two runs ("+12.0%", "~")
	KindNote               // a footnote such as "(p=0.003 n=10+10)"
)

// Cell is one typed cell of a Table. Text is what every renderer shows;
// Value is the number behind a KindNumber cell; Bad marks a figure worth
// the reader's attention (a failure, a regression).
type Cell struct {
	Kind  Kind
	Text  string
	Value float64
	Bad   bool
}

// Column is the header of one column of a Table.
type Column struct {
	Name string
	// Right aligns the column right (numbers, deltas).
	Right bool
}

// Table is a table model: built once from figures, then rendered as text,
// Markdown, CSV or HTML.
type Table struct {
	Title   string
	Columns []Column
	Rows    [][]Cell
	// Notes are printed under the table.
	Notes []string
}

func textCell(s string) Cell { return Cell{Kind: KindText, Text: s} }

func intCell(n int) Cell { return Cell{Kind: KindNumber, Text: strconv.Itoa(n), Value: float64(n)} }

// badInt is an int cell marked Bad when it is not zero.
func badInt(n int) Cell {
	c := intCell(n)
	c.Bad = n != 0
	return c
}

func floatCell(x float64) Cell { return Cell{Kind: KindNumber, Text: fmtFloat(x), Value: x} }

func msCell(x float64) Cell { return Cell{Kind: KindNumber, Text: fmtMS(x), Value: x} }

// latCell is a figure of l, or "-" when l has no calls: a case without
// calls has no latency, not a latency of zero.
func latCell(l Latency, x float64) Cell {
	if l.N == 0 {
		return textCell("-")
	}
	return msCell(x)
}

func pctCell(rate float64) Cell {
	return Cell{Kind: KindNumber, Text: fmtPct(rate), Value: rate, Bad: rate < 1}
}

func statusCell(status string) Cell {
	return Cell{Kind: KindStatus, Text: status, Bad: status != "pass"}
}

// fmtFloat prints up to two decimals and no trailing zeros: 3, 2.5, 0.33.
func fmtFloat(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	s := strconv.FormatFloat(x, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

// fmtMS prints milliseconds with one decimal.
func fmtMS(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// fmtPct prints a rate in [0, 1] as a percentage with at most one decimal.
func fmtPct(rate float64) string {
	s := strconv.FormatFloat(rate*100, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + "%"
}

// WriteText renders t for a terminal: the title, a borderless table
// (benchstat style), and the notes.
func (t *Table) WriteText(w io.Writer) error {
	if t.Title != "" {
		if _, err := fmt.Fprintf(w, "%s\n", t.Title); err != nil {
			return err
		}
	}
	headers := make([]any, len(t.Columns))
	aligns := make([]tw.Align, len(t.Columns))
	for i, c := range t.Columns {
		headers[i] = c.Name
		aligns[i] = tw.AlignLeft
		if c.Right {
			aligns[i] = tw.AlignRight
		}
	}
	tbl := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleASCII),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off, ShowHeader: tw.On},
				Lines:      tw.Lines{ShowHeaderLine: tw.On},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: aligns}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: aligns}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
	)
	tbl.Header(headers...)
	for _, row := range t.Rows {
		cells := make([]string, len(t.Columns))
		for i := range cells {
			if i < len(row) {
				cells[i] = oneLine(row[i].Text)
			}
		}
		if err := tbl.Append(cells); err != nil {
			return fmt.Errorf("render %q: %w", t.Title, err)
		}
	}
	if err := tbl.Render(); err != nil {
		return fmt.Errorf("render %q: %w", t.Title, err)
	}
	for _, n := range t.Notes {
		if _, err := fmt.Fprintf(w, "%s\n", n); err != nil {
			return err
		}
	}
	return nil
}

// WriteMarkdown renders t as a GitHub-flavoured Markdown table, with the
// title as a level-3 heading. Cell text is escaped so that names cannot
// break the table or inject HTML.
func (t *Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	if t.Title != "" {
		fmt.Fprintf(&b, "### %s\n\n", mdEscape(t.Title))
	}
	b.WriteString("|")
	for _, c := range t.Columns {
		fmt.Fprintf(&b, " %s |", mdEscape(c.Name))
	}
	b.WriteString("\n|")
	for _, c := range t.Columns {
		if c.Right {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, row := range t.Rows {
		b.WriteString("|")
		for i := range t.Columns {
			text := ""
			if i < len(row) {
				text = mdEscape(row[i].Text)
				if row[i].Bad {
					text = "**" + text + "**"
				}
			}
			fmt.Fprintf(&b, " %s |", text)
		}
		b.WriteString("\n")
	}
	if len(t.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.Notes {
			fmt.Fprintf(&b, "%s  \n", mdEscape(n))
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCSV renders t as CSV: a header row, then the rows' text.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	header := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		header[i] = c.Name
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, row := range t.Rows {
		rec := make([]string, len(t.Columns))
		for i := range rec {
			if i < len(row) {
				rec[i] = row[i].Text
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// oneLine keeps a cell on one line of a terminal table.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

var mdReplacer = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`,
	"<", "&lt;", ">", "&gt;", "&", "&amp;",
)

// mdEscape makes s literal text on one line of Markdown.
func mdEscape(s string) string {
	return mdReplacer.Replace(oneLine(s))
}
