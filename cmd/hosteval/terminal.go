package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/report"
	"github.com/hosteval/hosteval/internal/text"
)

// layoutFlags are the flags that shape the reports: -wide for the tables
// printed on stdout, and, for the commands that report a run's cases,
// -cases and -transcripts.
type layoutFlags struct {
	wide, cases, transcripts bool
}

func (l *layoutFlags) register(fs *flag.FlagSet, cases bool) {
	fs.BoolVar(&l.wide, "wide", false, "print every column of the tables, however wide the terminal")
	if cases {
		fs.BoolVar(&l.cases, "cases", false, "list every case, also in a run of more than "+strconv.Itoa(report.SmallRun)+" cases (else only those that did not pass)")
		fs.BoolVar(&l.transcripts, "transcripts", false, "write the transcript of every case under transcripts/ (else of those that did not pass)")
	}
}

// options are the report options for the tables printed on e.stdout; dir
// is the run folder, named in each failure's show command.
func (l *layoutFlags) options(e *env, dir string) report.Options {
	return report.Options{AllCases: l.cases, Dir: dir, AllTranscripts: l.transcripts, Width: l.width(e)}
}

// width is how wide the tables on e.stdout may be: the terminal's width,
// or 0 (unlimited) with -wide.
func (l *layoutFlags) width(e *env) int {
	if l.wide {
		return 0
	}
	return terminalWidth(e)
}

// wideHint is what the note naming the columns Fit hid adds.
const wideHint = "-wide shows them"

// terminalWidth is how wide the tables on stdout may be: $COLUMNS when it
// is a number, else the terminal's width when stdout is a terminal, else 0,
// unlimited. A CI log, a pipe or a file is read later in a viewer that
// scrolls sideways, and a column cut there could not be brought back
// without running again; so only a person at a terminal gets fitted tables.
func terminalWidth(e *env) int {
	if n, err := strconv.Atoi(strings.TrimSpace(e.getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	if f, ok := e.stdout.(*os.File); ok {
		return ttyWidth(f)
	}
	return 0
}

// lineFitter breaks each line written through it that is wider than
// width columns (text.Wrap: between words, indented under its start), so
// that what a command prints around its tables (failures, verdicts,
// notes) fits the terminal as the tables do. Close writes a last line
// that has no newline.
type lineFitter struct {
	w     io.Writer
	width int
	buf   []byte
}

// fitLines returns w wrapped in a lineFitter for width columns; with
// width 0 (a file, a pipe, -wide) lines pass as they are.
func fitLines(w io.Writer, width int) *lineFitter { return &lineFitter{w: w, width: width} }

func (f *lineFitter) Write(p []byte) (int, error) {
	if f.width <= 0 {
		return f.w.Write(p)
	}
	f.buf = append(f.buf, p...)
	for {
		i := bytes.IndexByte(f.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(f.buf[:i])
		f.buf = f.buf[i+1:]
		if err := f.writeLine(line + "\n"); err != nil {
			return 0, err
		}
	}
}

func (f *lineFitter) writeLine(line string) error {
	_, err := io.WriteString(f.w, strings.Join(text.Wrap(strings.TrimSuffix(line, "\n"), f.width), "\n")+line[len(strings.TrimSuffix(line, "\n")):])
	return err
}

// Close writes what is left of an unended line.
func (f *lineFitter) Close() error {
	if len(f.buf) == 0 {
		return nil
	}
	line := string(f.buf)
	f.buf = nil
	return f.writeLine(line)
}
