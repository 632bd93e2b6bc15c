package table

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// writeText is t's text layout by l, or the test's end.
func writeText(t *testing.T, tbl *Table, l Layout) string {
	t.Helper()
	var b bytes.Buffer
	if err := tbl.WriteTextWith(&b, l); err != nil {
		t.Fatalf("WriteTextWith(%s): %v", l, err)
	}
	return b.String()
}

// TestTextLayoutEdges: the tables at the edges of the layout, as
// tablewriter lays them out (an empty column is one column wide; a table
// without rows has no rule), and the hand-written layout writes the same.
func TestTextLayoutEdges(t *testing.T) {
	tests := []struct {
		name  string
		table *Table
		want  string
	}{
		{"empty column in the middle",
			&Table{Columns: []Column{{Name: "a"}, {Name: ""}, {Name: "c", Right: true}}, Rows: [][]Cell{{Text("x"), Text(""), Text("1")}}},
			"a     c\n-------\nx     1\n"},
		{"empty column first",
			&Table{Columns: []Column{{Name: ""}, {Name: "b"}}, Rows: [][]Cell{{Text(""), Text("y")}}},
			"   b\n----\n   y\n"},
		{"empty column last",
			&Table{Columns: []Column{{Name: "a"}, {Name: ""}}, Rows: [][]Cell{{Text("x")}}},
			"a\n----\nx\n"},
		{"no header names",
			&Table{Columns: []Column{{Name: ""}, {Name: ""}}, Rows: [][]Cell{{Text("p"), Text("q")}}},
			"\n----\np  q\n"},
		{"nothing in it",
			&Table{Columns: []Column{{Name: ""}, {Name: ""}}, Rows: [][]Cell{{Text(""), Text("")}}},
			"\n----\n\n"},
		{"no rows",
			&Table{Title: "T", Columns: []Column{{Name: "a"}, {Name: "bb", Right: true}}, Notes: []string{"n"}},
			"T\na  bb\nn\n"},
		{"empty and short rows",
			&Table{Columns: []Column{{Name: "a"}, {Name: "bb", Right: true}}, Rows: [][]Cell{{}, {Text("z")}, {Text("y"), Int(7), Text("extra")}}},
			"a  bb\n-----\n\nz\ny   7\n"},
		{"wide and combining characters",
			&Table{Columns: []Column{{Name: "name"}, {Name: "n", Right: true}}, Rows: [][]Cell{{Text("日本語"), Int(1)}, {Text("e\u0301"), Int(22)}, {Text("👩\u200d💻"), Int(3)}}},
			"name     n\n----------\n日本語   1\ne\u0301       22\n👩\u200d💻     3\n"}, // tablewriter counts a ZWJ sequence rune by rune: 2+0+2
		{"no columns",
			&Table{Title: "T", Rows: [][]Cell{{Text("x")}}, Notes: []string{"n"}},
			"T\nn\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, l := range []Layout{LayoutTablewriter, layoutHand, LayoutAuto} {
				if diff := cmp.Diff(tt.want, writeText(t, tt.table, l)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", l, diff)
				}
			}
		})
	}
}

// TestTextLayoutsAgree: every text golden, fitted or not, and a table
// long enough for tablewriter's chunks, come out of both layouts byte for
// byte; under LayoutAuto a table of more than FastRows rows is laid out
// by hand (tablewriter takes a second for it, the hand a few ms).
func TestTextLayoutsAgree(t *testing.T) {
	long := large(2*chunkRows + 7)
	tables := map[string]*Table{
		"sample": sample(), "sample at 80": sample().Fit(80, "-wide shows them"),
		"sample at 50": sample().Fit(50, "-wide shows them"), "hostile": hostile(),
		"hostile at 40": hostile().Fit(40, ""), "long": long, "long at 80": long.Fit(80, "-wide shows them"),
	}
	for name, tbl := range tables {
		if got, want := writeText(t, tbl, layoutHand), writeText(t, tbl, LayoutTablewriter); got != want {
			t.Errorf("%s: the hand-written layout differs from tablewriter's:\n%s", name, cmp.Diff(want, got))
		}
	}
	for _, tt := range []struct {
		rows int
		want bool
	}{{0, false}, {FastRows, false}, {FastRows + 1, true}} {
		if got := LayoutAuto.byHand(tt.rows); got != tt.want {
			t.Errorf("LayoutAuto.byHand(%d) = %v, want %v", tt.rows, got, tt.want)
		}
		if Layout("").byHand(tt.rows) != tt.want || LayoutTablewriter.byHand(tt.rows) || !layoutHand.byHand(tt.rows) {
			t.Errorf("%d rows: the zero Layout is not LayoutAuto, or a forced layout is not kept", tt.rows)
		}
	}
}

func TestParseLayout(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{"", "auto", ""},
		{"auto", "auto", ""},
		{"tablewriter", "tablewriter", ""},
		{"fast", "", `HOSTEVAL_TABLE="fast": want "auto" or "tablewriter"`},
		{"Tablewriter", "", `HOSTEVAL_TABLE="Tablewriter": want "auto" or "tablewriter"`},
	}
	for _, tt := range tests {
		got, err := ParseLayout(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseLayout(%q): error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("ParseLayout(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// failingWriter takes n bytes, then fails every write.
type failingWriter struct{ n int }

var errFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errFull
	}
	w.n -= len(p)
	return len(p), nil
}

// TestWriteTextWriteError: a failed write is returned, by both layouts,
// and nothing is written after it.
func TestWriteTextWriteError(t *testing.T) {
	for _, l := range []Layout{LayoutTablewriter, layoutHand} {
		w := &failingWriter{n: flushBytes + 100}
		if err := large(1100).WriteTextWith(w, l); !errors.Is(err, errFull) {
			t.Errorf("%s: error %v, want %v", l, err, errFull)
		}
	}
}

// hostileTexts are what a cell of a fuzzed table may also be: escapes,
// bidi overrides, wide, ambiguous and zero-width characters, invalid
// UTF-8, runs of spaces, Markdown and HTML.
var hostileTexts = []string{
	"", " ", "  a  b  ", "\t\n\r", "\x1b[31mred\x1b[0m", "\x1b]8;;http://e\x07link\x1b]8;;\x07", "\u202eevil",
	"日本語", "ｆｕｌｌ", "…±→", "👩\u200d💻", "e\u0301", "\u200b", "\xff\xfe", "a|b", "<b>x</b>", "-", "12.5",
}

// fuzzTable is a table made from seed and pool: up to 7 columns, up to 40
// rows (some short, some long), names and cells cut from pool or taken
// from hostileTexts, right-aligned columns and priorities at random.
func fuzzTable(seed uint64, pool string) *Table {
	r := rand.New(rand.NewPCG(seed, seed>>32))
	text := func() string {
		if pool == "" || r.IntN(3) == 0 {
			return hostileTexts[r.IntN(len(hostileTexts))]
		}
		i := r.IntN(len(pool))
		return pool[i : i+r.IntN(min(len(pool)-i, 40)+1)]
	}
	tbl := &Table{Title: text(), Notes: []string{text()}}
	for range r.IntN(8) {
		tbl.Columns = append(tbl.Columns, Column{Name: text(), Right: r.IntN(2) == 0, Priority: r.IntN(4)})
	}
	for range r.IntN(41) {
		row := make([]Cell, r.IntN(len(tbl.Columns)+2))
		for i := range row {
			row[i] = Text(text())
		}
		tbl.Rows = append(tbl.Rows, row)
	}
	return tbl
}

// FuzzTextLayouts holds the hand-written text layout to tablewriter's on
// random tables of hostile text, fitted to a random width or not, outside
// and inside East Asia: byte for byte, and no line wider than TextWidth
// says (what Fit measures). It holds DisplayWidth to tablewriter's own
// measure too.
func FuzzTextLayouts(f *testing.F) {
	f.Add(uint64(1), "lookup/scripted pass 12 100% 41.2", uint8(0), false)
	f.Add(uint64(7), "tickets/b-verbose/openai:gpt-oss-120b  fail\n4 66.7%", uint8(50), false)
	f.Add(uint64(42), "日本語-search error \x1b[2J \u202e 1 0%", uint8(30), true)
	f.Add(uint64(99), "", uint8(12), false)
	f.Add(uint64(1<<40+3), "a  b\tc\u00a0d \xff ｆｕｌｌ e\u0301", uint8(80), true)
	f.Fuzz(func(t *testing.T, seed uint64, pool string, width uint8, eastAsian bool) {
		if eastAsian {
			twwidth.SetEastAsian(true)
			defer twwidth.SetEastAsian(false)
		}
		tbl := fuzzTable(seed, pool)
		if width > 0 {
			tbl = tbl.Fit(int(width), "-wide shows them")
		}
		want := writeText(t, tbl, LayoutTablewriter)
		if got := writeText(t, tbl, layoutHand); got != want {
			t.Fatalf("the hand-written layout differs from tablewriter's:\n%s", cmp.Diff(want, got))
		}
		textWidth := tbl.TextWidth()
		for _, line := range strings.Split(want, "\n") {
			if w := DisplayWidth(line); w > textWidth {
				t.Errorf("line %q is %d columns wide, TextWidth %d", line, w, textWidth)
			}
		}
		for _, s := range append([]string{pool, want}, hostileTexts...) {
			if got, want := DisplayWidth(s), twwidth.Width(s); got != want {
				t.Errorf("DisplayWidth(%q) = %d, tablewriter's %d", s, got, want)
			}
		}
	})
}
