package table

import (
	"io"
	"regexp"
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
	"<", `\<`,
)

// EscapeMarkdown makes s literal text on one line of Markdown: one line
// (OneLine), and Markdown's punctuation escaped with a backslash, so that
// no text from a model, a server or a scenario becomes a table cell
// border, emphasis, a link or HTML. Markdown is not HTML: an escaped "<"
// can open no tag, so ">" stays as it is ("->" reads "->" in the source
// too) but at the start, where it would open a quote, and "&" is escaped
// only where it could start an entity ("&amp;", "&#60;").
func EscapeMarkdown(s string) string {
	s = markdownReplacer.Replace(text.OneLine(s))
	if strings.Contains(s, "&") {
		s = entityStart.ReplaceAllString(s, `\&${1}`)
	}
	if strings.HasPrefix(s, ">") || strings.HasPrefix(s, "#") {
		s = `\` + s
	}
	return s
}

// entityStart matches an "&" that could start a character reference.
var entityStart = regexp.MustCompile(`&([A-Za-z0-9#])`)
