package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hosteval/hosteval/internal/table"
	"github.com/hosteval/hosteval/internal/text"
)

// WriteJSON writes the report as its JSON document, indented.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadReport reads a document written by WriteJSON.
func ReadReport(data []byte) (*Report, error) {
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("read lint report: %w", err)
	}
	if r.Kind != Kind || r.Schema != Schema {
		return nil, fmt.Errorf("read lint report: kind %q schema %d, want %q %d", r.Kind, r.Schema, Kind, Schema)
	}
	return &r, nil
}

// Table is the findings as a table: number, severity, rule and place.
func (r *Report) Table() *table.Table {
	t := &table.Table{
		Title:   "Findings",
		Columns: []table.Column{{Name: "#", Right: true}, {Name: "severity"}, {Name: "rule"}, {Name: "where"}},
	}
	for i, f := range r.Findings {
		t.Rows = append(t.Rows, []table.Cell{table.Int(i + 1), table.Status(string(f.Severity), f.Severity == Error), table.Text(f.Rule), table.Text(f.Where())})
	}
	return t
}

// Summary is the report's last line: the counts and the verdict.
func (r *Report) Summary() string {
	parts := []string{plural(r.Counts.Errors, "error"), plural(r.Counts.Warnings, "warning"), plural(r.Counts.Notes, "note")}
	s := strings.Join(parts, ", ")
	if r.Counts.Suppressed > 0 {
		s += fmt.Sprintf(" (%d suppressed)", r.Counts.Suppressed)
	}
	tools := 0
	for _, srv := range r.Servers {
		tools += srv.Tools
	}
	s += fmt.Sprintf(" in %s and %s", plural(len(r.Servers), "server"), plural(tools, "tool"))
	switch {
	case r.FailOn == None:
		s += ": -fail-on none"
	case r.Failed:
		s += fmt.Sprintf(": fails at -fail-on %s", r.FailOn)
	case len(r.Unreached) > 0:
		// What was not seen may hold anything: no pass.
		s += fmt.Sprintf(": incomplete at -fail-on %s", r.FailOn)
	default:
		s += fmt.Sprintf(": passes at -fail-on %s", r.FailOn)
	}
	if n := len(r.Unreached); n > 0 {
		names := make([]string, n)
		for i, u := range r.Unreached {
			names[i] = u.Server
		}
		s += fmt.Sprintf("; %s not reached, not linted (%s)", plural(n, "server"), strings.Join(names, ", "))
	}
	return s
}

// TextOptions say how WriteText lays a report out.
type TextOptions struct {
	// Width is the terminal's width in columns (0: as wide as it is).
	Width int
	// Notes shows notes in full too; by default they are in the table
	// only, and said to be.
	Notes bool
}

// WriteText writes the report for a person: the findings' table fitted to
// the width, each finding in full (its text quoted, its message, its fix, a
// diff: notes only with opts.Notes), the suppressed findings with their
// reasons, suppressions that matched nothing, the servers not reached,
// and the summary.
func (r *Report) WriteText(w io.Writer, opts TextOptions) error {
	width := opts.Width
	var b bytes.Buffer
	if len(r.Findings) > 0 {
		if err := r.Table().Fit(width, "").WriteText(&b); err != nil {
			return err
		}
		b.WriteByte('\n')
		hidden := 0
		for i, f := range r.Findings {
			if f.Severity == Note && !opts.Notes {
				hidden++
				continue
			}
			writeFinding(&b, "#"+strconv.Itoa(i+1), &f, width)
		}
		if hidden > 0 {
			writeWrapped(&b, fmt.Sprintf("(%s in the table only: -notes shows them in full)", plural(hidden, "note")), width, "", "  ")
		}
	} else {
		b.WriteString("No findings.\n")
	}
	if len(r.Suppressed) > 0 {
		fmt.Fprintf(&b, "\nSuppressed (%d)\n", len(r.Suppressed))
		for _, f := range r.Suppressed {
			writeWrapped(&b, fmt.Sprintf("%s %s: %s", f.Rule, f.Where(), f.Message), width, "  ", "    ")
			reason := "reason: " + f.Suppression.Reason
			if f.Suppression.Source != "" {
				reason += " (" + f.Suppression.Source + ")"
			}
			writeWrapped(&b, reason, width, "    ", "    ")
		}
	}
	for _, s := range r.Unused {
		where := ""
		if s.Source != "" {
			where = " (" + s.Source + ")"
		}
		writeWrapped(&b, fmt.Sprintf("warning: the suppression of %s%s matched no finding", s.String(), where), width, "", "  ")
	}
	for _, u := range r.Unreached {
		writeWrapped(&b, fmt.Sprintf("error: server %s was not linted: %s", u.Server, u.Error), width, "", "  ")
	}
	if r.Pins != nil {
		line := fmt.Sprintf("pins: %s checked against %s", plural(len(r.Pins.Checked), "server"), r.Pins.File)
		if len(r.Pins.NotLinted) > 0 {
			line += fmt.Sprintf("; pinned but not linted: %s", strings.Join(r.Pins.NotLinted, ", "))
		}
		writeWrapped(&b, line, width, "", "  ")
	}
	b.WriteByte('\n')
	writeWrapped(&b, r.Summary(), width, "", "  ")
	_, err := w.Write(b.Bytes())
	return err
}

func writeFinding(b *bytes.Buffer, label string, f *Finding, width int) {
	head := fmt.Sprintf("%s %s %s: %s", label, f.Severity, f.Rule, f.Where())
	if f.Pointer != "" {
		head += " (" + f.Pointer + ")"
	}
	writeWrapped(b, head, width, "", "   ")
	if f.Text != "" {
		writeWrapped(b, "“"+f.Text+"”", width, "   ", "   ")
	}
	writeWrapped(b, f.Message, width, "   ", "   ")
	for _, d := range f.Diff {
		writeWrapped(b, d, width, "     ", "       ")
	}
	writeWrapped(b, "fix: "+f.Fix, width, "   ", "   ")
}

// writeWrapped writes s made one safe line (text.OneLine), wrapped at
// spaces to width columns: first before the first line, indent before the
// others. A word wider than the room is cut into pieces.
func writeWrapped(b *bytes.Buffer, s string, width int, first, indent string) {
	s = text.OneLine(s)
	if width <= 0 {
		b.WriteString(first + s + "\n")
		return
	}
	prefix := first
	line, lineW := "", 0
	flush := func() {
		b.WriteString(prefix + line + "\n")
		prefix, line, lineW = indent, "", 0
	}
	for _, word := range strings.Fields(s) {
		for word != "" {
			room := width - table.DisplayWidth(prefix)
			if room < 8 {
				room = 8
			}
			ww := table.DisplayWidth(word)
			if line != "" && lineW+1+ww <= room {
				line += " " + word
				lineW += 1 + ww
				word = ""
				continue
			}
			if line != "" {
				flush()
				continue
			}
			if ww <= room {
				line, lineW, word = word, ww, ""
				continue
			}
			// A word longer than a line: as much as fits, then the rest.
			n := 0
			for i := range word {
				if table.DisplayWidth(word[:i]) > room {
					break
				}
				n = i
			}
			if n == 0 {
				_, n = utf8.DecodeRuneInString(word)
			}
			line, lineW = word[:n], table.DisplayWidth(word[:n])
			word = word[n:]
			flush()
		}
	}
	if line != "" || prefix == first {
		flush()
	}
}
