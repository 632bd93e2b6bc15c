package table

import (
	"io"
	"strings"

	"github.com/hosteval/hosteval/internal/text"
)

// WriteMarkdown lays t out as a GitHub-flavoured Markdown table, with the
// title as a level-3 heading and the notes as lines under it. Every text is
// escaped (EscapeMarkdown), so that a name can neither break the table nor
// inject HTML; a Bad cell is bold.
func (t *Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	if t.Title != "" {
		b.WriteString("### " + EscapeMarkdown(t.Title) + "\n\n")
	}
	b.WriteString("|")
	for _, c := range t.Columns {
		b.WriteString(" " + EscapeMarkdown(c.Name) + " |")
	}
	b.WriteString("\n|")
	for _, c := range t.Columns {
		if c.Right {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, row := range t.Rows {
		b.WriteString("|")
		for i := range t.Columns {
			c := cell(row, i)
			text := EscapeMarkdown(c.Text)
			if c.Bad && text != "" {
				text = "**" + text + "**"
			}
			b.WriteString(" " + text + " |")
		}
		b.WriteString("\n")
	}
	if len(t.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.Notes {
			// Two trailing spaces: a line break, so that notes keep their lines.
			b.WriteString(EscapeMarkdown(n) + "  \n")
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

var markdownReplacer = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`,
	"<", "&lt;", ">", "&gt;", "&", "&amp;",
)

// EscapeMarkdown makes s literal text on one line of Markdown: one line
// (OneLine), Markdown's punctuation escaped, and <, > and & as entities,
// so that no text from a model, a server or a scenario becomes a table
// cell border, emphasis, a link or HTML.
func EscapeMarkdown(s string) string {
	return markdownReplacer.Replace(text.OneLine(s))
}
