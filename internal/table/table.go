// Package table owns the table model every report is built from (a [Table]
// of typed [Cell]s under [Column]s) and its layouts: text for a terminal
// ([Table.WriteText], fitted to a width by [Table.Fit]), GitHub-flavoured
// Markdown ([Table.WriteMarkdown]), an HTML fragment ([Table.WriteHTML]) and
// CSV ([Table.WriteCSV]), and [EscapeMarkdown]. The text rules the layouts
// rest on ([text.Shorten], [text.OneLine], [text.Width]) are package text's,
// shared with host and scenario.
//
// A report builds its tables once from figures, then hands them to
// whichever layouts it needs; no layout parses a cell's text, it reads the
// cell's kind.
//
// # The text layout
//
// The terminal layout is tablewriter's (github.com/olekukonko/tablewriter,
// its Blueprint renderer with per-column alignment), set to benchstat's
// borderless table: a title line, a header, a rule of dashes, one line per
// row with two spaces between columns and none at the end, then the notes.
// What stays here is what tablewriter does not know: the cell model, the
// fitting to a terminal's width ([Table.Fit] hides columns by priority and
// names them, cuts the widest name, wraps long notes), and the escaping.
// Every text is made harmless before it reaches tablewriter: control
// characters (a terminal escape sequence in a tool's error, a bidi
// override) are shown as \x1b or \u202e ([text.OneLine]), never sent to the
// terminal. Widths are display widths as tablewriter measures them (East
// Asian wide characters and emoji take two columns, combining marks none),
// so that what Fit measures is what the layout lays out.
//
// Markdown, HTML and CSV stay ours: tablewriter's Markdown and HTML
// renderers have no place for a cell's kind (a bad figure in bold, a
// status class, a delta's title), and encoding/csv is the standard's.
package table

import (
	"encoding/csv"
	"io"
	"math"
	"strconv"
	"strings"
)

// Kind says what a Cell holds, so that a layout can align and style it
// without parsing its text.
type Kind int

const (
	KindText    Kind = iota // a name or free text
	KindNumber              // a count, mean, size or duration: Value, in Unit
	KindPercent             // a rate: Value in [0, 1], Text as a percentage
	KindDelta               // a change between two runs: Value, and Sig says how sure
	KindNote                // a footnote such as "(p=0.003 n=10+10)"
	KindStatus              // pass, fail or error
)

// Significance says what stands behind a KindDelta cell.
type Significance int

const (
	// Exact: the figures were compared exactly (a scripted model makes
	// them deterministic); no test was needed.
	Exact Significance = iota
	// Significant: a test found the change significant.
	Significant
	// Noise: a test found the change within noise (the text is usually "~").
	Noise
	// Untested: too few samples to test; the figures claim nothing.
	Untested
)

// String is how a reader is told what stands behind a change.
func (s Significance) String() string {
	switch s {
	case Significant:
		return "significant"
	case Noise:
		return "within noise: not significant"
	case Untested:
		return "too few samples to test"
	}
	return "compared exactly"
}

// Cell is one typed cell of a Table. Text is what every layout shows;
// Value and Unit are the figure behind a number, percent or delta, for
// readers of the model that sort or chart; Bad marks a figure worth the
// reader's attention (a failure, a regression).
type Cell struct {
	Kind  Kind
	Text  string
	Value float64
	// Unit of Value ("ms", "B", "tokens"); "" for counts and rates. The
	// column's name usually says it, so layouts do not repeat it.
	Unit string
	// Sig is what stands behind a KindDelta cell.
	Sig Significance
	Bad bool
}

// Column is the header of one column of a Table.
type Column struct {
	Name string
	// Right aligns the column right (numbers, deltas).
	Right bool
	// Priority orders the columns Fit hides when a table is too wide: the
	// highest first, the rightmost of equals first. Zero is never hidden.
	Priority int
}

// Table is a table model: built once from figures, then laid out as text,
// Markdown, HTML or CSV.
type Table struct {
	Title   string
	Columns []Column
	Rows    [][]Cell
	// Notes are printed under the table.
	Notes []string
}

// Text is a text cell.
func Text(s string) Cell { return Cell{Kind: KindText, Text: s} }

// Note is a footnote cell.
func Note(s string) Cell { return Cell{Kind: KindNote, Text: s} }

// Status is a status cell ("pass", "fail", "error"); bad marks it.
func Status(s string, bad bool) Cell { return Cell{Kind: KindStatus, Text: s, Bad: bad} }

// Int is a count.
func Int(n int) Cell { return Cell{Kind: KindNumber, Text: strconv.Itoa(n), Value: float64(n)} }

// Float is a figure printed by FormatFloat.
func Float(x float64, unit string) Cell {
	return Cell{Kind: KindNumber, Text: FormatFloat(x), Value: x, Unit: unit}
}

// Fixed is a figure printed with a fixed number of decimals (milliseconds
// with one, say), so that a column of them lines up.
func Fixed(x float64, decimals int, unit string) Cell {
	return Cell{Kind: KindNumber, Text: strconv.FormatFloat(x, 'f', decimals, 64), Value: x, Unit: unit}
}

// Percent is a rate in [0, 1] printed by FormatPercent.
func Percent(rate float64) Cell {
	return Cell{Kind: KindPercent, Text: FormatPercent(rate), Value: rate}
}

// Delta is a change between two runs: text as the reader sees it ("+12%",
// "~"), value the change itself, sig what stands behind it, bad set when it
// is a change for the worse.
func Delta(text string, value float64, sig Significance, bad bool) Cell {
	return Cell{Kind: KindDelta, Text: text, Value: value, Sig: sig, Bad: bad}
}

// FormatFloat prints up to two decimals and no trailing zeros: 3, 2.5,
// 0.33; "-" for a value that is not a number.
func FormatFloat(x float64) string {
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

// FormatPercent prints a rate in [0, 1] as a percentage with at most one
// decimal: 50%, 66.7%.
func FormatPercent(rate float64) string {
	s := strconv.FormatFloat(rate*100, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + "%"
}

// cell is row's cell i, empty when the row is short.
func cell(row []Cell, i int) Cell {
	if i < len(row) {
		return row[i]
	}
	return Cell{}
}

// WriteCSV lays t out as CSV: a header row, then the rows' text as it is
// (CSV quotes what it must, newlines included).
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	header := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		header[i] = c.Name
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(t.Columns))
	for _, row := range t.Rows {
		for i := range rec {
			rec[i] = cell(row, i).Text
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
