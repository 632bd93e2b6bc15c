package report

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/table"
	"github.com/hosteval/hosteval/internal/text"
)

// Failure is a case that did not pass, as every report lists it: text,
// Markdown, HTML and JUnit read this model, and each escapes it in its own
// format.
type Failure struct {
	// Status is "fail" or "error".
	Status string `json:"status"`
	// Case is the case's name (scenario[/variant][/model]#repeat); CaseID
	// names it in the run folder.
	Case   string `json:"case"`
	CaseID string `json:"case_id"`
	// Where is the scenario's place: "file:line", "file", "line N" or "".
	Where string `json:"where,omitempty"`
	// Error says why an errored case could not run.
	Error string `json:"error,omitempty"`
	// Expectations are the expectations that did not hold.
	Expectations []record.Expectation `json:"expectations"`
	// Transcript is the stem of its transcript files in the run folder
	// (transcripts/NNNN-<case>), when they were written.
	Transcript string `json:"transcript,omitempty"`
}

// Failures lists the cases of s that did not pass, in case order: a copy
// of s.Failures, the caller's to change.
func Failures(s *Summary) []Failure { return slices.Clone(s.Failures) }

func failureOf(c *CaseStats) Failure {
	return Failure{
		Status: c.Status, Case: c.Name, CaseID: c.CaseID,
		Where: where(c.File, c.Line), Error: c.Error, Expectations: c.Failed,
	}
}

// where is "file:line", "file", "line N" or "".
func where(file string, line int) string {
	switch {
	case file != "" && line > 0:
		return file + ":" + strconv.Itoa(line)
	case file != "":
		return file
	case line > 0:
		return "line " + strconv.Itoa(line)
	}
	return ""
}

// expectationText is one failed expectation on one line of prose: its
// text, its line in the scenario file, and what was found.
func expectationText(e record.Expectation) string {
	var b strings.Builder
	b.WriteString(e.Name)
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// ShowCommand is the command that prints a case's transcript.
func ShowCommand(dir, caseID string) string {
	return "hosteval show " + shellQuote(dir) + " " + shellQuote(caseID)
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:#@%+=,-]+$`)

// shellQuote makes s one word of a POSIX shell, quoting it only when it
// must: a case ID such as "lookup/scripted#0" stays as it is.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) && s[0] != '#' && s[0] != '-' {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// failureLayout is how a format lays out the failures list: its heading,
// the line that names a case, the prefix of the lines under it, what ends
// the list, and how it escapes a text from a run.
type failureLayout struct {
	heading, caseLine, item, end string
	escape                       func(string) string
	// link links a transcript's stem, in a layout that can.
	link func(stem string) string
}

var (
	failuresText = failureLayout{
		heading: "\nFailures\n", caseLine: "%s %s", item: "    ",
		escape: text.OneLine,
	}
	failuresMarkdown = failureLayout{
		heading: "### Failures\n\n", caseLine: "- **%s** %s", item: "  - ", end: "\n",
		escape: table.EscapeMarkdown,
		link: func(stem string) string {
			return fmt.Sprintf("[%s.md](%s.md)", table.EscapeMarkdown(stem), markdownURL(stem))
		},
	}
)

// write lists fs, one block a case: the status and name with the
// scenario's place, why it errored, each failed expectation, and a link
// to its transcript file in a layout that links, else, when the run
// folder dir is known, the command that prints it. Write
// errors are left to an errWriter.
func (l failureLayout) write(w io.Writer, fs []Failure, dir string) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprint(w, l.heading)
	for _, f := range fs {
		fmt.Fprintf(w, l.caseLine, l.escape(strings.ToUpper(f.Status)), l.escape(f.Case))
		if f.Where != "" {
			fmt.Fprintf(w, " (%s)", l.escape(f.Where))
		}
		fmt.Fprint(w, "\n")
		if f.Error != "" {
			fmt.Fprintf(w, "%s%s\n", l.item, l.escape(f.Error))
		}
		for _, e := range f.Expectations {
			fmt.Fprintf(w, "%s%s\n", l.item, l.escape(expectationText(e)))
		}
		switch {
		case l.link != nil && f.Transcript != "":
			fmt.Fprintf(w, "%stranscript: %s\n", l.item, l.link(f.Transcript))
		case dir != "" && f.CaseID != "":
			fmt.Fprintf(w, "%stranscript: %s\n", l.item, l.escape(ShowCommand(dir, f.CaseID)))
		}
	}
	fmt.Fprint(w, l.end)
}
