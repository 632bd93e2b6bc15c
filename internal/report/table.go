package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/table"
)

// Table, Column and Cell are the table model of internal/table, named here
// for the commands that build a table beside a report's.
type (
	Table  = table.Table
	Column = table.Column
	Cell   = table.Cell
)

// The cells of a report's tables, with what makes a figure bad here.

func textCell(s string) Cell { return table.Text(s) }

func intCell(n int) Cell { return table.Int(n) }

// badInt is an int cell marked Bad when it is not zero.
func badInt(n int) Cell {
	c := table.Int(n)
	c.Bad = n != 0
	return c
}

func floatCell(x float64) Cell { return table.Float(x, "") }

func msCell(x float64) Cell { return table.Fixed(x, 1, "ms") }

// latCell is a figure of l, or "-" when l has no calls: a case without
// calls has no latency, not a latency of zero.
func latCell(l Latency, x float64) Cell {
	if l.N == 0 {
		return textCell("-")
	}
	return msCell(x)
}

// pctCell is a pass rate, bad below 100%.
func pctCell(rate float64) Cell {
	c := table.Percent(rate)
	c.Bad = rate < 1
	return c
}

func statusCell(status string) Cell { return table.Status(status, status != record.StatusPass) }

func noteCell(s string) Cell { return table.Note(s) }

// fmtFloat prints up to two decimals and no trailing zeros: 3, 2.5, 0.33.
func fmtFloat(x float64) string { return table.FormatFloat(x) }

// fmtMS prints milliseconds with one decimal.
func fmtMS(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// fmtPct prints a rate in [0, 1] as a percentage with at most one decimal.
func fmtPct(rate float64) string { return table.FormatPercent(rate) }

// codesCell shows a protocol error count with its codes: "3 (-32603:2 -32602:1)".
func codesCell(n int, codes []CodeCount) Cell {
	c := badInt(n)
	if len(codes) > 0 {
		parts := make([]string, len(codes))
		for i, cc := range codes {
			parts[i] = fmt.Sprintf("%d:%d", cc.Code, cc.Count)
		}
		c.Text += " (" + strings.Join(parts, " ") + ")"
	}
	return c
}

func usageCell(u *record.Usage) Cell {
	if u == nil {
		return textCell("-")
	}
	return intCell(u.TotalTokens)
}
