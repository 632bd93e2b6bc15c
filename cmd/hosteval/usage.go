package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/hosteval/hosteval/internal/text"
)

// usageWidth is the width every usage text fits: an 80-column terminal,
// the narrowest people read help in (testdata/script/output_fit.txtar).
const usageWidth = 80

// flagIndent is where a flag's description starts, as the flag package
// puts it with a tab at 8-column stops, written as spaces so that the
// width is the same on every terminal.
const flagIndent = "        "

// printFlags prints fs's flags as the flag package does (its names, value
// names, defaults and order), each description wrapped to usageWidth.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	var b strings.Builder
	out := fs.Output()
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(out)
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "    \t"):
			fmt.Fprint(w, wrapText(strings.TrimPrefix(line, "    \t"), flagIndent, usageWidth))
		case strings.HasPrefix(line, "  -") && strings.Contains(line, "\t"):
			// A one-letter flag with its description on the same line.
			name, desc, _ := strings.Cut(line, "\t")
			fmt.Fprintln(w, name)
			fmt.Fprint(w, wrapText(desc, flagIndent, usageWidth))
		default:
			fmt.Fprintln(w, line)
		}
	}
}

// wrapText breaks s into lines of at most width display columns, each
// starting with indent, between words; a word wider than the line (a
// path, a URL) stays whole on a line of its own, and so does a short
// closing "(default ...)", which a reader (and a grep) finds in one piece.
func wrapText(s, indent string, width int) string {
	const glue = "\x00" // a space that does not break
	if i := strings.LastIndex(s, " (default "); i >= 0 && strings.HasSuffix(s, ")") && len(s)-i < 30 {
		s = s[:i+1] + strings.ReplaceAll(s[i+1:], " ", glue)
	}
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(s) {
		switch {
		case line == indent:
			line += word
		case text.Width(line)+1+text.Width(word) <= width:
			line += " " + word
		default:
			b.WriteString(line + "\n")
			line = indent + word
		}
	}
	b.WriteString(line + "\n")
	return strings.ReplaceAll(b.String(), glue, " ")
}
