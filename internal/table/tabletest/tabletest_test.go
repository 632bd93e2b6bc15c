package tabletest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOverflows(t *testing.T) {
	out := "a prose line that is longer than twenty columns\n" +
		"\n" +
		"Title\n" +
		"name   n\n" +
		"--------\n" +
		"a      1\n" +
		"a row far too wide  2\n" +
		"a note that ends in a space \n" +
		"\n" +
		"another prose line longer than twenty\n" +
		"x\n" +
		"---\n" +
		"y\n"
	problems, checked := Overflows(out, 20)
	want := []string{
		"21 columns wide: a row far too wide  2",
		"28 columns wide: a note that ends in a space ",
		`ends in a space: "a note that ends in a space "`,
		"37 columns wide: another prose line longer than twenty",
	}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	// Title, header, rule, two rows, the note; then a table without a
	// blank line above it takes the line above its header as its title.
	if checked != 10 {
		t.Errorf("checked %d lines, want 10", checked)
	}
}

func TestLines(t *testing.T) {
	out := "a prose line that is longer than twenty columns\n" +
		"fits\n" +
		"ends in a space \n" +
		"é is one column: 20\n" +
		"日本 is two each: 20\n" +
		"日本 is two each: 21!\n"
	problems, checked := Lines(out, 20)
	want := []string{
		"line 1, 47 columns wide: a prose line that is longer than twenty columns",
		`line 3 ends in a space: "ends in a space "`,
		"line 6, 21 columns wide: 日本 is two each: 21!",
	}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if checked != 6 {
		t.Errorf("checked %d lines, want 6", checked)
	}
}
