package main

import (
	"context"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/report"
)

var showCommand = command{
	name:    "show",
	summary: "print the transcript of one case of a run",
	usage:   showUsage,
	run:     runShow,
}

const showUsage = `usage: hosteval show [flags] DIR CASE

Prints the transcript of one case of the run folder DIR: every turn in
order, each model request with the tool calls it proposed, what the host
decided about each call and what it sent, each round of a call with the
server's question and the person's answer, the result as the model received
it (where the budget cut it), the final answer, the expectations, and the
servers' log lines joined under each call (and the wire trace, when the run
kept one with -wire). CASE is a case ID, its number in the run (7, 0007), or
the start of one case ID. Every failure in a run's report names the command.

examples:
  hosteval show results/latest 'ticket-declined#0'
  hosteval show results/latest 4
  hosteval show -format markdown results/latest ticket-dec > transcript.md`

func runShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "show", showUsage)
	format := fs.String("format", "text", "how to print it: text, markdown or html")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("want a run folder and a case, got %d arguments", fs.NArg())
	}
	write, ok := map[string]func(t *report.Transcript) error{
		"text": func(t *report.Transcript) error { return report.WriteTranscriptText(e.stdout, t, terminalWidth(e)) },
		"markdown": func(t *report.Transcript) error {
			return report.WriteTranscriptMarkdown(e.stdout, t, report.TranscriptLinks{})
		},
		"html": func(t *report.Transcript) error {
			return report.WriteTranscriptHTML(e.stdout, t, report.TranscriptLinks{})
		},
	}[*format]
	if !ok {
		return usagef("-format: want text, markdown or html, not %q", *format)
	}
	dir := fs.Arg(0)
	run, err := record.ReadRun(dir)
	if err != nil {
		return usageError{err}
	}
	rec, _, err := report.FindCase(run, fs.Arg(1))
	if err != nil {
		return usageError{err}
	}
	t, err := report.LoadTranscript(dir, run.ID(), rec)
	if err != nil {
		return err
	}
	return write(t)
}
