package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/hosteval/hosteval/internal/table"

	"github.com/hosteval/hosteval/internal/text"
)

// TranscriptLinks say where a layout of a transcript links to: the
// case's log files, by their path relative to the run folder.
type TranscriptLinks struct {
	// Log returns the link to a log file of the run; nil links nothing.
	Log func(rel string) string
}

// RelativeLogs links logs from a file in the run folder's transcripts/.
var RelativeLogs = TranscriptLinks{Log: func(rel string) string { return "../" + rel }}

// WriteTranscriptMarkdown writes t as GitHub-flavoured Markdown: a
// section per turn, the calls as nested lists, every text from a model, a
// server or a scenario either escaped on one line or in a fenced block
// whose fence no text can close.
func WriteTranscriptMarkdown(w io.Writer, t *Transcript, links TranscriptLinks) error {
	ew := &errWriter{w: w}
	esc := table.EscapeMarkdown
	p := func(format string, args ...any) { fmt.Fprintf(ew, format+"\n", args...) }
	// fenced writes s as a fenced block indented under a list item.
	fenced := func(indent string, lang, s string) {
		fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
		p("%s%s%s", indent, fence, lang)
		for _, line := range strings.Split(safeLines(s), "\n") {
			p("%s%s", indent, line)
		}
		p("%s%s", indent, fence)
	}

	icon := "✅"
	if t.Status != "pass" {
		icon = "❌"
	}
	p("## %s %s: %s", icon, esc(t.Name), esc(strings.ToUpper(t.Status)))
	p("")
	p("%s", esc(t.meta()))
	p("")
	if t.Error != "" {
		p("> error: %s", esc(t.Error))
		p("")
	}
	for _, e := range t.Failed() {
		p("> ❌ %s", esc(expectationText(e)))
		p(">")
	}
	for _, s := range t.Servers {
		p("- server %s", esc(serverLine(s)))
	}
	p("- %s", esc(t.toolsLine()))
	for _, n := range t.Notes {
		p("- note: %s", esc(n))
	}
	p("")

	writeCall := func(c *TranscriptCall) {
		p("- **call** `%s` %s", esc(c.Name), outcomeMark(c.headline()))
		if args := c.arguments(); args != "" {
			fenced("  ", "json", args)
		}
		if c.Decision != "" {
			p("  - host: %s", esc(c.Decision))
		}
		if s := c.sent(); s != "" {
			p("  - sent: %s", esc(s))
		}
		for _, r := range c.RoundTrips {
			p("  - %s", esc(r.roundLine()))
			for i := range r.Asks {
				a := &r.Asks[i]
				p("    - %s:", esc(askLine(a)))
				if a.Message != "" {
					fenced("      ", "", a.Message)
				}
				if a.URL != "" {
					p("      %s", esc(a.URL))
				}
				p("    - **%s**", esc(answerLine(a)))
				if len(a.Content) > 0 {
					p("      content `%s`", esc(compactJSON(a.Content)))
				}
			}
		}
		if s := c.legacyAsks(); s != "" {
			p("  - %s", esc(s))
		}
		p("  - result, %s:", esc(c.resultLine()))
		fenced("    ", "", c.Kept)
		if c.CutNote != "" {
			p("    ✂️ **cut here**: %s", esc(c.CutNote))
		}
		if len(c.ServerLog) > 0 {
			p("  - server log:")
			for _, l := range c.ServerLog {
				p("    - %s", esc(logText(l)))
			}
		}
		if len(c.Wire) > 0 {
			p("  - <details><summary>wire: %s</summary>", esc(text.Count(len(c.Wire), "message")))
			p("")
			var b strings.Builder
			for _, wl := range c.Wire {
				fmt.Fprintf(&b, "%s\n%s\n", wireHead(wl), wl.brief())
			}
			fenced("    ", "", strings.TrimSuffix(b.String(), "\n"))
			p("    </details>")
		}
	}

	for _, turn := range t.Turns {
		p("### Turn %d", turn.N)
		p("")
		p("**User**")
		p("")
		fenced("", "", turn.Question)
		p("")
		for ri := range turn.Requests {
			r := &turn.Requests[ri]
			p("**%s**", esc(requestLine(r)))
			p("")
			if r.Error != "" {
				p("> error: %s", esc(r.Error))
				p("")
			}
			for ci := range r.Calls {
				writeCall(&r.Calls[ci])
			}
			if len(r.Calls) > 0 {
				p("")
			}
		}
		if turn.Error != "" {
			p("> error: %s", esc(turn.Error))
			p("")
		}
		if turn.Stopped {
			p("> stopped: the turn reached max_steps")
			p("")
		}
		if turn.Truncated != "" {
			p("> truncated: the endpoint cut the answer short (finish_reason %s); it is not a whole answer", esc(turn.Truncated))
			p("")
		}
		p("**Answer**")
		p("")
		fenced("", "", turn.Answer)
		p("")
	}
	if len(t.Checks) > 0 {
		p("### Checks after the conversation")
		p("")
		for i := range t.Checks {
			writeCall(&t.Checks[i])
		}
		p("")
	}
	p("### Expectations: %s", esc(t.expectationsLine()))
	p("")
	for _, e := range t.Expectations {
		mark := "✅"
		if !e.Passed {
			mark = "❌"
		}
		p("- %s %s", mark, esc(expectationText(e)))
	}
	p("")
	if len(t.ServerLines) > 0 {
		p("<details><summary>Server log lines of no call</summary>")
		p("")
		for _, l := range t.ServerLines {
			p("- %s", esc(logText(l)))
		}
		p("")
		p("</details>")
		p("")
	}
	if len(t.Logs) > 0 {
		p("### Logs")
		p("")
		for _, name := range t.logNames() {
			rel := t.Logs[name]
			if links.Log != nil {
				p("- %s: [%s](%s)", esc(name), esc(rel), markdownURL(links.Log(rel)))
			} else {
				p("- %s: %s", esc(name), esc(rel))
			}
		}
		p("")
	}
	return ew.err
}

// outcomeMark shows an outcome as words with a mark: ✅ for ok, ❌ else.
func outcomeMark(outcome string) string {
	if outcome == "ok" {
		return "✅ ok"
	}
	return "❌ " + table.EscapeMarkdown(outcome)
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// markdownURL makes a link target safe inside (): spaces and parentheses
// escaped.
func markdownURL(u string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E").Replace(u)
}
