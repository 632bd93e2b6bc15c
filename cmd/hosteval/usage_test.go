package main

import (
	"context"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/internal/table/tabletest"
)

// TestUsageFits: the list of commands and every command's help (its
// text, examples and flags) fit an 80-column terminal, with no line
// ending in a space; a command added later is held to it too.
func TestUsageFits(t *testing.T) {
	runs := [][]string{{"help"}}
	for _, c := range commands() {
		runs = append(runs, []string{c.name, "-h"})
	}
	for _, args := range runs {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr strings.Builder
			e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
			if code := runEnv(context.Background(), e, args); code != exitOK {
				t.Fatalf("exit %d\n%s", code, stderr.String())
			}
			problems, checked := tabletest.Lines(stderr.String(), usageWidth)
			if checked < 3 {
				t.Fatalf("the help has %d lines:\n%s", checked, stderr.String())
			}
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
}

func TestWrapText(t *testing.T) {
	tests := []struct {
		s     string
		width int
		want  string
	}{
		{"a short one", 20, "        a short one\n"},
		{"the most one round of a tool call may take (default 2m0s)", 30,
			"        the most one round of\n        a tool call may take\n        (default 2m0s)\n"},
		{"how long to wait for the person (default 2m0s)", 36,
			"        how long to wait for the\n        person (default 2m0s)\n"},
		{"person (default 2m0s)", 24, "        person\n        (default 2m0s)\n"},
		{"prompt (default \"a long text of many words\")", 30,
			"        prompt (default \"a\n        long text of many\n        words\")\n"},
		{"see https://example.com/a/very/long/path/that/cannot/break now", 30,
			"        see\n        https://example.com/a/very/long/path/that/cannot/break\n        now\n"},
	}
	for _, tt := range tests {
		if got := wrapText(tt.s, flagIndent, tt.width); got != tt.want {
			t.Errorf("wrapText(%q, %d) =\n%q\nwant\n%q", tt.s, tt.width, got, tt.want)
		}
	}
}
