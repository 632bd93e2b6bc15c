package main

import (
	"strings"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/runner"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

func TestProgress(t *testing.T) {
	pass := &record.Record{CaseID: "a#0", Status: record.StatusPass, MS: 1500}
	fail := &record.Record{CaseID: "b#0", Status: record.StatusFail, MS: 20,
		Expectations: []record.Expectation{{Name: "answer_matches", Passed: false, Detail: `answer "no"`}}}
	t.Run("plain lines for CI", func(t *testing.T) {
		var out strings.Builder
		p := newProgress(&out, false, 0, 2, time.Now())
		p.done(pass, runner.Result{Ran: 1, Passed: 1})
		p.done(fail, runner.Result{Ran: 2, Passed: 1, Failed: 1})
		p.stop()
		want := "[1/2] PASS  a#0 (1.50s)\n[2/2] FAIL  b#0 (0.02s): answer_matches: answer \"no\"\n"
		if out.String() != want {
			t.Errorf("progress =\n%q\nwant\n%q", out.String(), want)
		}
	})
	t.Run("a line wider than the terminal goes on on the next", func(t *testing.T) {
		var out strings.Builder
		p := newProgress(&out, false, 24, 2, time.Now())
		p.done(fail, runner.Result{Ran: 2, Passed: 1, Failed: 1})
		want := "[2/2] FAIL  b#0 (0.02s):\n  answer_matches: answer\n  \"no\"\n"
		if out.String() != want {
			t.Errorf("progress =\n%q\nwant\n%q", out.String(), want)
		}
	})
	t.Run("one line rewritten on a terminal", func(t *testing.T) {
		var out fixturetest.Buffer
		p := newProgress(&out, true, 0, 2, time.Now())
		p.done(pass, runner.Result{Ran: 1, Passed: 1})
		p.done(fail, runner.Result{Ran: 2, Passed: 1, Failed: 1})
		p.stop()
		got := out.String()
		for _, want := range []string{
			"\r\033[K[1/2] 1 passed, 0 failed, 0 errors, ",
			"\r\033[K[2/2] 1 passed, 1 failed, 0 errors, ",
			"\r\033[KFAIL  b#0 (0.02s): answer_matches: answer \"no\"\n", // a failure stays on screen
			"\r\033[K[2/2] 1 passed, 1 failed, 0 errors, ",
			" elapsed, ETA ",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("progress %q does not contain %q", got, want)
			}
		}
		if strings.Contains(got, "PASS  a#0") {
			t.Errorf("a passing case was printed on the terminal: %q", got)
		}
		if !strings.HasSuffix(got, "\n") {
			t.Errorf("the progress line is not ended when the run ends: %q", got)
		}
	})
}
