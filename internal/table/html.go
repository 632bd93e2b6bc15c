package table

import (
	"html/template"
	"io"
	"strings"
	"sync"
)

// WriteHTML lays t out as an HTML fragment: the title as <h3>, the table in
// a horizontally scrolling <div class="scroll">, and each note as
// <p class="notes">. Every text is escaped by html/template. A page that
// shows it styles these classes: "r" (right-aligned, on th and td), "bad"
// (a Bad cell), "note" (a KindNote cell) and "status-<text>" (a KindStatus
// cell, e.g. status-pass). A KindDelta cell's title says what stands
// behind the change ([Significance]).
func (t *Table) WriteHTML(w io.Writer) error {
	h := htmlTable{Title: t.Title, Columns: t.Columns, Notes: t.Notes}
	for _, row := range t.Rows {
		cells := make([]htmlCell, len(t.Columns))
		for i := range cells {
			if i >= len(row) {
				continue
			}
			c := row[i]
			var class []string
			if t.Columns[i].Right {
				class = append(class, "r")
			}
			switch c.Kind {
			case KindStatus:
				class = append(class, "status-"+c.Text)
			case KindNote:
				class = append(class, "note")
			case KindDelta:
				cells[i].Title = c.Sig.String()
			}
			if c.Bad {
				class = append(class, "bad")
			}
			cells[i].Text = c.Text
			cells[i].Class = strings.Join(class, " ")
		}
		h.Rows = append(h.Rows, cells)
	}
	return htmlTemplate().Execute(w, h)
}

type htmlTable struct {
	Title   string
	Columns []Column
	Rows    [][]htmlCell
	Notes   []string
}

type htmlCell struct {
	Text, Class, Title string
}

// htmlTemplate is parsed on first use: a process that writes no page
// (most commands) does not pay for it as it starts.
var htmlTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("table").Parse(`<h3>{{.Title}}</h3>
<div class="scroll"><table>
<thead><tr>{{range .Columns}}<th{{if .Right}} class="r"{{end}}>{{.Name}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}{{if .Title}} title="{{.Title}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{range .Notes}}<p class="notes">{{.}}</p>
{{end}}`))
})
