package text

import (
	"slices"
	"testing"
)

func TestShorten(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abcdef", 6, "abcdef"},
		{"abcdef", 7, "abcdef"},
		{"abcdef", 5, "abcd…"},
		{"abcdef", 1, "…"},
		{"abcdef", 0, ""},
		{"", 3, ""},
		{"héllo wörld", 11, "héllo wörld"}, // 11 runes, 13 bytes: not cut
		{"héllo wörld", 5, "héll…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"👍👍👍", 2, "👍…"},
	}
	for _, tt := range tests {
		if got := Shorten(tt.s, tt.n); got != tt.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  a \n\t b  ", "a b"},
		{"plain", "plain"},
		{"esc \x1b[2J clear", `esc \x1b[2J clear`},
		{"bell\a del\x7f c1\u009b", `bell\x07 del\x7f c1\x9b`},
		{"rtl \u202eoverride\u2066", `rtl \u202eoverride\u2066`},
		{"bad \xff byte", "bad \ufffd byte"},
		{"line\u2028sep", "line sep"},
		{"zwj 👩\u200d💻 kept", "zwj 👩\u200d💻 kept"},
	}
	for _, tt := range tests {
		if got := OneLine(tt.in); got != tt.want {
			t.Errorf("OneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWidth(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{"abc", 3},
		{"é", 1},
		{"e\u0301", 1}, // e and a combining acute accent
		{"日本語", 6},
		{"한국어", 6},
		{"ｆｕｌｌ", 8},
		{"👍", 2},
		{"✅ ok", 5},
		{"…", 1},
		{"a\u200bb", 2}, // zero-width space
	}
	for _, tt := range tests {
		if got := Width(tt.s); got != tt.want {
			t.Errorf("Width(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		n    int
		noun string
		want string
	}{
		{0, "case", "0 cases"},
		{1, "case", "1 case"},
		{2, "case", "2 cases"},
		{1, "scenario group", "1 scenario group"},
		{21, "scenario group", "21 scenario groups"},
		{-1, "token", "-1 token"},
	}
	for _, tt := range tests {
		if got := Count(tt.n, tt.noun); got != tt.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		name  string
		line  string
		width int
		want  []string
	}{
		{"fits", "a short line", 20, []string{"a short line"}},
		{"no width", "a line far wider than ten", 0, []string{"a line far wider than ten"}},
		{"between words, hanging indent", "  call get_asset on the cmdb server", 16,
			[]string{"  call get_asset", "    on the cmdb", "    server"}},
		{"a word too wide is cut", "id: abcdefghijklmnopqrstuvwxyz", 10,
			[]string{"id:", "  abcdefgh", "  ijklmnop", "  qrstuvwx", "  yz"}},
		{"the spaces between words kept", "FAIL  b#0 (0.02s): answer", 20, []string{"FAIL  b#0 (0.02s):", "  answer"}},
		{"no spaces where it breaks", "aaaa  bbbb    cccc", 10, []string{"aaaa  bbbb", "  cccc"}},
		{"wide characters count two", "日本語 日本語", 8, []string{"日本語", "  日本語"}},
		{"a deep indent falls back to two spaces", "        a b c d e f", 12, []string{"        a b", "  c d e f"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Wrap(tt.line, tt.width)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Wrap(%q, %d) = %q, want %q", tt.line, tt.width, got, tt.want)
			}
			for _, l := range got {
				if tt.width > 0 && Width(l) > tt.width {
					t.Errorf("line %q is %d columns wide", l, Width(l))
				}
			}
		})
	}
}
