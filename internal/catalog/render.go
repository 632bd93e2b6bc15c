package catalog

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/hosteval/hosteval/internal/table"
)

// Tables returns the catalog as table models: tools, servers, findings,
// and the comparison when there is one.
func (c *Catalog) Tables() []*table.Table {
	tables := []*table.Table{c.toolTable(), c.serverTable(), c.findingTable()}
	if c.Compare != nil {
		tables = append(tables, c.Compare.Table())
	}
	return tables
}

// WriteText renders the tables for a terminal, a blank line between them,
// each fitted to width columns (table.Table.Fit; 0: unlimited), the
// columns it hides named with hint.
func (c *Catalog) WriteText(w io.Writer, width int, hint string) error {
	for i, t := range c.Tables() {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := t.Fit(width, hint).WriteText(w); err != nil {
			return err
		}
	}
	return nil
}

// WriteMarkdown renders the tables as Markdown (a CI step summary).
func (c *Catalog) WriteMarkdown(w io.Writer) error {
	for _, t := range c.Tables() {
		if err := t.WriteMarkdown(w); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON writes the catalog as the versioned JSON document, indented.
func (c *Catalog) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// Read reads a document written by WriteJSON, for comparison. Its Compare
// is dropped: a comparison is always against the catalog read.
func Read(r io.Reader) (*Catalog, error) {
	var c Catalog
	if err := json.NewDecoder(r).Decode(&c); err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	if c.Kind != Kind {
		return nil, fmt.Errorf("read catalog: kind %q, want %q (the output of hosteval catalog -json)", c.Kind, Kind)
	}
	if c.Schema != Schema {
		return nil, fmt.Errorf("read catalog: schema %d, want %d", c.Schema, Schema)
	}
	if c.Form == "" {
		c.Form = FormSent // written before the form was recorded
	}
	if c.Encoding != Encoding {
		return nil, fmt.Errorf("read catalog: tokens counted with %q, want %q", c.Encoding, Encoding)
	}
	for i, t := range c.Tools {
		if t.Name == "" || t.SHA256 == "" {
			return nil, fmt.Errorf("read catalog: tool %d has no name or sha256", i)
		}
	}
	c.Compare = nil
	return &c, nil
}

func num(n int) table.Cell { return table.Int(n) }

func text(s string) table.Cell { return table.Text(s) }

func shareCell(s float64) table.Cell { return table.Percent(s) }

// delta is a signed change, compared exactly; growth is marked as worth
// attention.
func delta(n int) table.Cell {
	s := strconv.Itoa(n)
	if n > 0 {
		s = "+" + s
	}
	return table.Delta(s, float64(n), table.Exact, n > 0)
}

func splitCells(s Split) []table.Cell {
	return []table.Cell{num(s.Description.Tokens), num(s.Parameters.Tokens), num(s.Envelope.Tokens)}
}

func (c *Catalog) toolTable() *table.Table {
	t := &table.Table{
		Title: "Tools",
		Columns: []table.Column{
			// On a narrow terminal the split goes first, then the
			// server and the bytes: tokens are what a request pays.
			{Name: "tool"}, {Name: "server", Priority: 2}, {Name: "bytes", Right: true, Priority: 1}, {Name: "tokens", Right: true},
			{Name: "marginal", Right: true}, {Name: "desc", Right: true, Priority: 3},
			{Name: "schema", Right: true, Priority: 4}, {Name: "envelope", Right: true, Priority: 5},
		},
	}
	for _, tool := range c.Tools {
		row := []table.Cell{text(tool.Name), text(tool.Server), num(tool.Bytes), num(tool.Tokens), num(tool.MarginalTokens)}
		t.Rows = append(t.Rows, append(row, splitCells(tool.Split)...))
	}
	tot := c.Total
	t.Notes = []string{
		formNote(c.Form),
		fmt.Sprintf("%s offered: %d bytes, %d tokens (%s) sent with every model request", plural(tot.Tools, "tool"), tot.Bytes, tot.Tokens, c.Encoding),
		fmt.Sprintf("per turn of %d model requests: %d tokens, %d bytes", c.RequestsPerTurn, tot.TurnTokens, tot.TurnBytes),
		fmt.Sprintf("tokens: the definition alone (sum %d); marginal: the array's tokens minus the array's tokens without the tool (sum %d)", tot.DefTokens, tot.MarginalTokens),
		fmt.Sprintf("shared: %s, %s belong to no single tool: the brackets less the separator every marginal counts, and tokens merged across the borders between definitions", plural(tot.SharedTokens, "token"), plural(tot.SharedBytes, "byte")),
		"desc, schema, envelope: tokens of the description's text, of the parameters JSON, and of the rest of the definition",
	}
	return t
}

// formNote says which form of the catalog was counted.
func formNote(form string) string {
	if form == FormListed {
		return `counted as listed: the servers' own tool names and descriptions, each inputSchema as the server sent it (what a host that forwards the tools unchanged sends)`
	}
	return `counted as sent: the tools array hosteval sends, with server__tool names, "[server] " before each description, each inputSchema as the server sent it`
}

func (c *Catalog) serverTable() *table.Table {
	t := &table.Table{
		Title: "Servers",
		Columns: []table.Column{
			{Name: "server"}, {Name: "tools", Right: true}, {Name: "bytes", Right: true, Priority: 4}, {Name: "tokens", Right: true},
			{Name: "marginal", Right: true}, {Name: "share", Right: true}, {Name: "tokens/turn", Right: true, Priority: 3},
			{Name: "desc", Right: true, Priority: 5}, {Name: "schema", Right: true, Priority: 6}, {Name: "envelope", Right: true, Priority: 7},
		},
		Notes: []string{fmt.Sprintf("share: the server's marginal tokens over the array's; tokens/turn: its marginal tokens times %d requests", c.RequestsPerTurn)},
	}
	for _, s := range c.Servers {
		row := []table.Cell{text(s.Name), num(s.Tools), num(s.Bytes), num(s.Tokens), num(s.MarginalTokens),
			shareCell(share(s.MarginalTokens, c.Total.Tokens)), num(c.RequestsPerTurn * s.MarginalTokens)}
		t.Rows = append(t.Rows, append(row, splitCells(s.Split)...))
	}
	tot := c.Total
	row := []table.Cell{text("all"), num(tot.Tools), num(tot.DefBytes), num(tot.DefTokens), num(tot.MarginalTokens),
		shareCell(share(tot.MarginalTokens, tot.Tokens)), num(c.RequestsPerTurn * tot.MarginalTokens)}
	t.Rows = append(t.Rows, append(row, splitCells(tot.Split)...))
	return t
}

// maxListed is the most tools a finding lists in the text table.
const maxListed = 10

// listsTools says which findings list their tools in the text table; the
// others concern nearly every tool, and the JSON has them all.
func listsTools(kind string) bool {
	return kind == KindSchemaKeyword || kind == KindRepeatedDefs || kind == KindLongDescription
}

// label says in a few words what a finding's figures are.
func (c *Catalog) label(kind string) string {
	switch kind {
	case KindSchemaKeyword:
		return `saved by dropping "$schema"`
	case KindRepeatedDefs:
		return "saved by sharing repeated $defs"
	case KindHTMLEscaping:
		return `paid on top by a host that escapes <>& as \u003c`
	case KindLongDescription:
		return fmt.Sprintf("descriptions over %d tokens or %s of the catalog", c.LongTokens, table.FormatPercent(LongShare))
	case KindServerPrefix:
		return `cost of the host's "[server] " prefix`
	}
	return kind
}

func (c *Catalog) findingTable() *table.Table {
	t := &table.Table{
		Title: "Findings",
		Columns: []table.Column{
			// The detail is cut to what a narrow terminal leaves.
			{Name: "finding"}, {Name: "tool"}, {Name: "bytes", Right: true, Priority: 2}, {Name: "tokens", Right: true},
			{Name: "tokens/turn", Right: true, Priority: 1}, {Name: "share", Right: true}, {Name: "detail"},
		},
	}
	for _, f := range c.Findings {
		t.Rows = append(t.Rows, []table.Cell{
			text(f.Kind), text(plural(len(f.Tools), "tool")), num(f.Bytes), num(f.Tokens), num(f.TurnTokens), shareCell(f.Share), text(c.label(f.Kind)),
		})
		if listsTools(f.Kind) && len(f.Tools) > maxListed {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: %s, listed in the JSON output", f.Kind, plural(len(f.Tools), "tool")))
		} else if listsTools(f.Kind) {
			for _, ft := range f.Tools {
				detail := ft.Note
				if ft.SameAs != "" {
					detail = "same block as " + ft.SameAs
				}
				t.Rows = append(t.Rows, []table.Cell{text(""), text(ft.Name), num(ft.Bytes), num(ft.Tokens), text(""), text(""), text(detail)})
			}
		}
		for _, n := range f.Notes {
			t.Notes = append(t.Notes, f.Kind+": "+n)
		}
	}
	if len(c.Findings) == 0 {
		t.Notes = append(t.Notes, "no findings")
	}
	t.Notes = append(t.Notes, "bytes, tokens: at stake in the whole array per model request (tool rows: in the definition alone)")
	return t
}

// Table renders the comparison: one row per tool added, removed or
// changed, then the whole array.
func (cmp *Comparison) Table() *table.Table {
	t := &table.Table{
		Title: "Compared with before",
		Columns: []table.Column{
			{Name: "tool"}, {Name: "change"},
			// On a narrow terminal the bytes go first: tokens are what
			// a request pays.
			{Name: "bytes before", Right: true, Priority: 6}, {Name: "bytes after", Right: true, Priority: 5},
			{Name: "bytes delta", Right: true, Priority: 3},
			{Name: "tokens before", Right: true, Priority: 4}, {Name: "tokens after", Right: true}, {Name: "tokens delta", Right: true},
			{Name: "marginal delta", Right: true, Priority: 2},
		},
	}
	side := func(s *ToolSize, f func(ToolSize) int) table.Cell {
		if s == nil {
			return text("-")
		}
		return num(f(*s))
	}
	bytesOf := func(s ToolSize) int { return s.Bytes }
	tokensOf := func(s ToolSize) int { return s.Tokens }
	for _, tc := range cmp.Tools {
		t.Rows = append(t.Rows, []table.Cell{
			text(tc.Name), text(tc.Change),
			side(tc.Before, bytesOf), side(tc.After, bytesOf), delta(tc.BytesDelta),
			side(tc.Before, tokensOf), side(tc.After, tokensOf), delta(tc.TokensDelta),
			delta(tc.MarginalDelta),
		})
	}
	t.Rows = append(t.Rows, []table.Cell{
		text("tools array"), text(fmt.Sprintf("%d -> %d tools", cmp.Before.Tools, cmp.After.Tools)),
		num(cmp.Before.Bytes), num(cmp.After.Bytes), delta(cmp.Delta.Bytes),
		num(cmp.Before.Tokens), num(cmp.After.Tokens), delta(cmp.Delta.Tokens),
		text(""),
	})
	t.Notes = []string{
		fmt.Sprintf("%d unchanged, %d changed, %d added, %d removed", cmp.Unchanged, cmp.count(Changed), cmp.count(Added), cmp.count(Removed)),
		fmt.Sprintf("per turn of %d requests: %d -> %d tokens (%s)", cmp.RequestsPerTurn, cmp.Before.TurnTokens, cmp.After.TurnTokens, delta(cmp.Delta.TurnTokens).Text),
	}
	return t
}

func (cmp *Comparison) count(change string) int {
	n := 0
	for _, tc := range cmp.Tools {
		if tc.Change == change {
			n++
		}
	}
	return n
}
