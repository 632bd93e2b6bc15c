package shellwords

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{"node dist/index.js stdio", []string{"node", "dist/index.js", "stdio"}, ""},
		{"  a\t b  ", []string{"a", "b"}, ""},
		{`a 'b c' "d e"`, []string{"a", "b c", "d e"}, ""},
		{`a 'it''s' "say \"hi\"" x\ y`, []string{"a", "its", `say "hi"`, "x y"}, ""},
		{`a '' b`, []string{"a", "", "b"}, ""},
		{`'$HOME' "\\"`, []string{"$HOME", `\`}, ""},
		{"a\nb", []string{"a", "b"}, ""},
		{"", nil, ""},
		{`a 'b`, nil, "unterminated ' quote"},
		{`a "b`, nil, `unterminated " quote`},
		{`a \`, nil, "a backslash ends the command"},
	}
	for _, tt := range tests {
		got, err := Split(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("Split(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Split(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Split(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
