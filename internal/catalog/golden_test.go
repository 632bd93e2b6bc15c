package catalog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/internal/goldenfile"
	"github.com/hosteval/hosteval/internal/table/tabletest"
)

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

func TestGolden(t *testing.T) {
	entries, _ := fixture()
	c := measure(t, entries, Options{})
	compared := measure(t, changedFixture(), Options{Before: c})
	tests := []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"catalog.txt", func(b *bytes.Buffer) error { return c.WriteText(b, 0, "") }},
		{"catalog.md", func(b *bytes.Buffer) error { return c.WriteMarkdown(b) }},
		{"catalog.json", func(b *bytes.Buffer) error { return c.WriteJSON(b) }},
		{"compare.txt", func(b *bytes.Buffer) error { return compared.WriteText(b, 0, "") }},
		{"compare.json", func(b *bytes.Buffer) error { return compared.WriteJSON(b) }},
		{"compare.80.txt", func(b *bytes.Buffer) error { return compared.WriteText(b, 80, "-wide shows them") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, b.Bytes())
			if problems, _ := tabletest.Overflows(b.String(), 80); strings.HasSuffix(tt.name, ".80.txt") && len(problems) > 0 {
				t.Errorf("not fitted to 80 columns:\n%s", strings.Join(problems, "\n"))
			}
		})
	}
}

// TestGoldenReadable checks that the committed JSON golden still reads:
// the document other runs compare against must not silently change shape.
func TestGoldenReadable(t *testing.T) {
	for _, name := range []string{"catalog.json", "compare.json"} {
		f, err := os.Open(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		c, err := Read(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Compare != nil || len(c.Tools) != 4 {
			t.Errorf("%s: read %d tools, compare %v; want 4 tools and no comparison", name, len(c.Tools), c.Compare)
		}
	}
}

// TestColumnNamesDistinct: every column of the catalog's tables has a
// name of its own, so that a note on the columns hidden to fit a terminal
// says which went.
func TestColumnNamesDistinct(t *testing.T) {
	entries, _ := fixture()
	c := measure(t, entries, Options{})
	compared := measure(t, changedFixture(), Options{Before: c})
	for _, tbl := range compared.Tables() {
		seen := map[string]bool{}
		for _, col := range tbl.Columns {
			if col.Name == "" || seen[col.Name] {
				t.Errorf("table %q: column %q is unnamed or named twice", tbl.Title, col.Name)
			}
			seen[col.Name] = true
		}
	}
}
