package table

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/hosteval/hosteval/internal/goldenfile"
)

func bad(c Cell) Cell {
	c.Bad = true
	return c
}

// sample has a cell of every kind, a short row, a wide character and notes.
func sample() *Table {
	return &Table{
		Title: "Figures per scenario",
		Columns: []Column{
			{Name: "scenario"}, {Name: "status"},
			{Name: "n", Right: true, Priority: 3}, {Name: "pass rate", Right: true, Priority: 1},
			{Name: "p95 ms", Right: true, Priority: 2}, {Name: "vs old", Right: true, Priority: 4},
			{Name: "", Priority: 5},
		},
		Rows: [][]Cell{
			{Text("lookup/scripted"), Status("pass", false), Int(12), Percent(1), Fixed(41.25, 1, "ms"), Delta("~", 0.4, Noise, false), Note("(p=0.574 n=12+12)")},
			{Text("tickets/b-verbose/openai:gpt-oss-120b"), bad(Status("fail", true)), Int(4), bad(Percent(2.0 / 3)), Fixed(812.04, 1, "ms"), Delta("+97.13%", 351.8, Significant, true), Note("(p=0.001 n=6+8)")},
			{Text("日本語-search"), Status("error", true), Int(1), Percent(0), Text("-"), Delta("?", 0, Untested, false), Note("(n=1+1)")},
			{Text("short row"), Status("pass", false)},
			{Text("tokens"), Status("pass", false), Float(2.5, ""), Percent(0.5), Float(1.0/3, "ms"), Delta("+11.11%", 52, Exact, true)},
		},
		Notes: []string{"~ = not significant at alpha 0.05", "? = too few cases to test"},
	}
}

// hostile is a table whose every text tries to break a layout.
func hostile() *Table {
	evil := "<script>alert(\"x\")</script> | `code` *b* _i_ [l](http://e) & \x1b[31mred\x1b[0m \u202eevil\nnext line"
	return &Table{
		Title:   "T " + evil,
		Columns: []Column{{Name: "name " + evil}, {Name: "n", Right: true}},
		Rows: [][]Cell{
			{Text(evil), bad(Int(1))},
			{Status("<b>fail</b>", true), Delta(evil, 1, Significant, true)},
		},
		Notes: []string{"note " + evil},
	}
}

func TestLayoutsGolden(t *testing.T) {
	tests := []struct {
		name  string
		table *Table
		write func(*Table, *bytes.Buffer) error
	}{
		{"sample.txt", sample(), func(t *Table, b *bytes.Buffer) error { return t.WriteText(b) }},
		{"sample.md", sample(), func(t *Table, b *bytes.Buffer) error { return t.WriteMarkdown(b) }},
		{"sample.html", sample(), func(t *Table, b *bytes.Buffer) error { return t.WriteHTML(b) }},
		{"sample.csv", sample(), func(t *Table, b *bytes.Buffer) error { return t.WriteCSV(b) }},
		{"sample.80.txt", sample(), func(t *Table, b *bytes.Buffer) error { return t.Fit(80, "-wide shows them").WriteText(b) }},
		{"sample.50.txt", sample(), func(t *Table, b *bytes.Buffer) error { return t.Fit(50, "-wide shows them").WriteText(b) }},
		{"hostile.txt", hostile(), func(t *Table, b *bytes.Buffer) error { return t.WriteText(b) }},
		{"hostile.md", hostile(), func(t *Table, b *bytes.Buffer) error { return t.WriteMarkdown(b) }},
		{"hostile.html", hostile(), func(t *Table, b *bytes.Buffer) error { return t.WriteHTML(b) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(tt.table, &b); err != nil {
				t.Fatal(err)
			}
			goldenfile.Check(t, filepath.Join("testdata", tt.name), b.Bytes())
		})
	}
}

// TestHostileText: no control character reaches the terminal, and every
// row stays one line.
func TestHostileText(t *testing.T) {
	var b bytes.Buffer
	if err := hostile().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\u202e\r") {
		t.Errorf("a control character reached the terminal:\n%q", out)
	}
	// title, header, rule, two rows, one note
	if got := strings.Count(out, "\n"); got != 6 {
		t.Errorf("%d lines, want 6:\n%s", got, out)
	}
	for _, want := range []string{`\x1b[31mred\x1b[0m`, `\u202eevil`} {
		if !strings.Contains(out, want) {
			t.Errorf("the escaped %s is missing:\n%s", want, out)
		}
	}
}

// TestHostileMarkdown: no raw HTML, no unescaped pipe, backtick or bracket,
// and every row keeps its cells.
func TestHostileMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := hostile().WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if strings.ContainsAny(md, "\x1b") {
		t.Errorf("raw ESC in the Markdown:\n%s", md)
	}
	unescaped := regexp.MustCompile("(^|[^\\\\])[`*_\\[\\]<]")
	pipes := regexp.MustCompile(`(^|[^\\])\|`)
	rows := 0
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		rows++
		if n := len(pipes.FindAllString(line, -1)); n != 3 {
			t.Errorf("row has %d cell borders, want 3: %q", n, line)
		}
		if m := unescaped.FindString(strings.ReplaceAll(line, "**", "")); m != "" {
			t.Errorf("unescaped %q in row %q", m, line)
		}
	}
	if rows != 4 { // header, alignment, two rows
		t.Errorf("%d table lines, want 4:\n%s", rows, md)
	}
}

func TestEscapeMarkdown(t *testing.T) {
	tests := []struct{ in, want string }{
		{"pass rate 100% -> 66.7%", "pass rate 100% -> 66.7%"},
		{"p<0.001", `p\<0.001`},
		{"<script>alert(1)</script>", `\<script>alert(1)\</script>`},
		{"<https://evil.example>", `\<https://evil.example>`},
		{"a & b", "a & b"},
		{"AT&T", `AT\&T`}, // "&T" could start "&Tab;"
		{"&amp; &#60; &lt", `\&amp; \&#60; \&lt`},
		{"> a quote", `\> a quote`},
		{"# a heading", `\# a heading`},
		{"a | b *c* _d_ `e` [f](g) \\", `a \| b \*c\* \_d\_ \` + "`" + `e\` + "`" + ` \[f\](g) \\`},
		{"two\nlines \x1b[2J", `two lines \\x1b\[2J`},
	}
	for _, tt := range tests {
		if got := EscapeMarkdown(tt.in); got != tt.want {
			t.Errorf("EscapeMarkdown(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHostileHTML(t *testing.T) {
	var b bytes.Buffer
	if err := hostile().WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, raw := range []string{"<script>", "<b>", `"x"`} {
		if strings.Contains(html, raw) {
			t.Errorf("%s reached the HTML unescaped:\n%s", raw, html)
		}
	}
	if !strings.Contains(html, `class="status-&lt;b&gt;fail&lt;/b&gt; bad"`) {
		t.Errorf("the status class is not escaped:\n%s", html)
	}
}

// TestTableRenderers: the three layouts of one small table, cell for cell.
func TestTableRenderers(t *testing.T) {
	tbl := &Table{
		Title:   "T",
		Columns: []Column{{Name: "name"}, {Name: "n", Right: true}},
		Rows: [][]Cell{
			{Text("a,b"), Int(1)},
			{Text("multi\nline"), bad(Int(2))},
			{Text("short")}, // a missing cell renders empty
		},
		Notes: []string{"note"},
	}
	var text bytes.Buffer
	if err := tbl.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	wantText := "T\n" +
		"name        n\n" +
		"-------------\n" +
		"a,b         1\n" +
		"multi line  2\n" +
		"short\n" +
		"note\n"
	if diff := cmp.Diff(wantText, text.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	var md bytes.Buffer
	if err := tbl.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	wantMD := "### T\n\n| name | n |\n| --- | ---: |\n| a,b | 1 |\n| multi line | **2** |\n| short |  |\n\nnote  \n\n"
	if diff := cmp.Diff(wantMD, md.String()); diff != "" {
		t.Errorf("markdown (-want +got):\n%s", diff)
	}
	var c bytes.Buffer
	if err := tbl.WriteCSV(&c); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	wantCSV := [][]string{{"name", "n"}, {"a,b", "1"}, {"multi\nline", "2"}, {"short", ""}}
	if diff := cmp.Diff(wantCSV, rows); diff != "" {
		t.Errorf("csv (-want +got):\n%s", diff)
	}
}

// widest is the width of the widest line of s.
func widest(s string) int {
	w := 0
	for _, line := range strings.Split(s, "\n") {
		w = max(w, DisplayWidth(line))
	}
	return w
}

// TestFitWidth: a table fitted to a terminal is never wider than it, down
// to the width its never-hidden columns need at their narrowest.
func TestFitWidth(t *testing.T) {
	long := &Table{
		Title: "Cases",
		Columns: []Column{
			{Name: "case"}, {Name: "status"},
			{Name: "steps", Right: true, Priority: 2}, {Name: "p95 ms", Right: true, Priority: 1},
			{Name: "detail", Priority: 3},
		},
		Rows: [][]Cell{
			{Text(strings.Repeat("a-very-long-scenario-name/", 4) + "openai:gpt-oss-120b#12"), Status("pass", false), Int(3), Fixed(12.5, 1, "ms"), Text(strings.Repeat("detail ", 20))},
			{Text("日本語のシナリオ名/" + strings.Repeat("長い", 30)), Status("fail", true), Int(4), Fixed(812.5, 1, "ms"), Text("x")},
		},
	}
	for _, tbl := range []*Table{sample(), long} {
		for width := 30; width <= 200; width++ {
			var b bytes.Buffer
			if err := tbl.Fit(width, "-wide shows them").WriteText(&b); err != nil {
				t.Fatal(err)
			}
			// Every line fits: the title, the rows, the rule and the
			// notes, wrapped.
			if w := widest(b.String()); w > width {
				t.Errorf("%s at %d columns: %d wide:\n%s", tbl.Title, width, w, b.String())
			}
		}
	}
}

func TestFitHidesByPriority(t *testing.T) {
	tests := []struct {
		width      int
		wantHeader string
		wantNote   []string
	}{
		{0, "scenario                               status    n  pass rate  p95 ms   vs old", nil},
		{200, "scenario                               status    n  pass rate  p95 ms   vs old", nil},
		{80, "scenario                               status    n  pass rate  p95 ms   vs old", []string{"hidden to fit 80 columns: 1 unnamed (-wide shows them)"}},
		// At 60 the 37-column names are cut to 36 (three fifths) before
		// a figure is hidden, which leaves room for n.
		{60, "scenario                              status    n  pass rate", []string{
			"hidden to fit 60 columns: p95 ms, vs old, 1 unnamed",
			"(-wide shows them)",
		}},
		{40, "scenario                  status  p95 ms", []string{
			"hidden to fit 40 columns: n, pass rate,",
			"vs old, 1 unnamed (-wide shows them)",
		}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := sample().Fit(tt.width, "-wide shows them").WriteText(&b); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if lines[1] != tt.wantHeader {
			t.Errorf("width %d: header\n%q\nwant\n%q", tt.width, lines[1], tt.wantHeader)
		}
		// The note follows the table's own two notes.
		last := slices.Index(lines, "? = too few cases to test")
		if diff := cmp.Diff(tt.wantNote, lines[last+1:], cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("width %d: note (-want +got):\n%s", tt.width, diff)
		}
		for _, line := range lines {
			if tt.width > 0 && DisplayWidth(line) > tt.width {
				t.Errorf("width %d: line %q is %d columns wide", tt.width, line, DisplayWidth(line))
			}
		}
	}
	// A table that fits is itself.
	if s := sample(); s.Fit(500, "") != s {
		t.Error("Fit copied a table that fits")
	}
}

// TestMain measures widths as a terminal outside East Asia does, whatever
// the locale of the machine that runs the tests, so that the golden files
// hold everywhere (tablewriter reads the locale once, at start).
func TestMain(m *testing.M) {
	twwidth.SetEastAsian(false)
	os.Exit(m.Run())
}

// TestFitEastAsian: under a CJK locale tablewriter counts East Asian
// ambiguous characters, such as the ellipsis of a cut name, two columns
// wide; Fit measures as the layout does, so the fitted table still fits.
func TestFitEastAsian(t *testing.T) {
	twwidth.SetEastAsian(true)
	defer twwidth.SetEastAsian(false)
	tbl := &Table{
		Columns: []Column{{Name: "name"}, {Name: "±", Right: true}},
		Rows:    [][]Cell{{Text(strings.Repeat("→", 30)), Text("±1")}},
	}
	var b bytes.Buffer
	if err := tbl.Fit(20, "").WriteText(&b); err != nil {
		t.Fatal(err)
	}
	// The name column is cut to 15 columns: six arrows and an ellipsis
	// take 14 (seven would take 16); then two spaces and "±1" (3).
	want := "name             ±\n" +
		"-------------------\n" +
		"→→→→→→…  ±1\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if w := DisplayWidth(line); w > 20 {
			t.Errorf("%q is %d columns wide, want at most 20", line, w)
		}
	}
}

// TestWriteTextChunks: a table of more rows than tablewriter lays out at
// once (LayoutTablewriter) is one table: one header, one rule, every row
// in order and as wide as the rule (the last column is right-aligned).
func TestWriteTextChunks(t *testing.T) {
	n := 2*chunkRows + 7
	tbl := large(n)
	var b bytes.Buffer
	if err := tbl.WriteTextWith(&b, LayoutTablewriter); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3+n {
		t.Fatalf("%d lines, want title, header, rule and %d rows", len(lines), n)
	}
	if !strings.HasPrefix(lines[1], "case ") || strings.Trim(lines[2], "-") != "" {
		t.Fatalf("header %q, rule %q", lines[1], lines[2])
	}
	for i, line := range lines[3:] {
		if !strings.HasPrefix(line, fmt.Sprintf("lookup/variant-%d/scripted#%d ", i%7, i)) || len(line) != len(lines[2]) {
			t.Fatalf("row %d: %q, want the row, %d columns wide", i, line, len(lines[2]))
		}
	}
}
