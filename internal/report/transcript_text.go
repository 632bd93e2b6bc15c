package report

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
)

// The words every layout of a transcript shares, so that a terminal, a
// pull request and a page say the same thing.

// headline is "tool_error, 82 B to the model" and the like.
func (c *TranscriptCall) headline() string {
	s := c.Outcome
	if c.ErrorCode != nil {
		s += " " + strconv.Itoa(*c.ErrorCode)
	}
	return s
}

// sent says what the host sent for a call, or "" when it sent nothing.
func (c *TranscriptCall) sent() string {
	if c.Call.Rounds == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s to %s", c.Tool, c.Server)
	if c.Protocol != "" {
		fmt.Fprintf(&b, " over %s", c.Protocol)
	}
	fmt.Fprintf(&b, "; %s, %s in the host (server %s, person %s)", text.Count(c.Call.Rounds, "round"), fmtDur(c.MS), fmtDur(c.ServerMS), fmtDur(c.PersonMS))
	if p := c.Progress; p != nil {
		fmt.Fprintf(&b, "; %s of progress, the last %s", text.Count(p.Count, "notification"), strconv.FormatFloat(p.Progress, 'g', -1, 64))
		if p.Total != nil {
			b.WriteString(" of " + strconv.FormatFloat(*p.Total, 'g', -1, 64))
		}
		if p.Message != "" {
			fmt.Fprintf(&b, " (%s)", p.Message)
		}
		if p.Extended > 0 {
			fmt.Fprintf(&b, ", which gave the round more time %s", text.Count(p.Extended, "time"))
		}
	}
	return b.String()
}

// resultLine says how big the result the model received was, and where
// the budget cut it.
func (c *TranscriptCall) resultLine() string {
	s := fmt.Sprintf("%s to the model", fmtSize(c.ResultBytes))
	if c.Clipped {
		s += fmt.Sprintf(", cut by the result budget from %s", fmtSize(c.RawBytes))
	}
	if c.RecordCut {
		s += fmt.Sprintf("; the record keeps its first %s", fmtSize(len(c.Result)))
	}
	return s
}

// arguments is the call's arguments as JSON: as sent, else as the model
// proposed them.
func (c *TranscriptCall) arguments() string {
	if c.Arguments != nil {
		return compactJSON(c.Arguments)
	}
	if c.Proposed != "" {
		return c.Proposed
	}
	if c.Outcome == record.OutcomeUnknownTool || c.Outcome == record.OutcomeBadArguments || c.Outcome == record.OutcomeDenied {
		return ""
	}
	return "{}"
}

// roundLine heads a round: "round 2: 2.5 ms at the server".
func (r TranscriptRound) roundLine() string {
	if r.ServerMS < 0 {
		return fmt.Sprintf("round %d", r.N)
	}
	return fmt.Sprintf("round %d: %s at the server", r.N, fmtDur(r.ServerMS))
}

// askLine heads a server's question: who asks, how, and for what.
func askLine(a *record.Ask) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s asks the person", a.Server)
	var how []string
	if a.Key != "" {
		how = append(how, "key "+a.Key)
	}
	if a.Mode != "" && a.Mode != "form" {
		how = append(how, a.Mode+" mode")
	}
	if len(a.Fields) > 0 {
		how = append(how, "fields "+strings.Join(a.Fields, ", "))
	}
	if len(how) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(how, "; "))
	}
	return b.String()
}

// answerLine says what went back, and who decided it.
func answerLine(a *record.Ask) string {
	s := "person: " + a.Action
	switch {
	case a.Rule != "":
		s += " (canned answer " + a.Rule + ")"
	case a.Reason != "":
		s += " (" + a.Reason + ")"
	}
	if a.PersonMS > 0 {
		s += ", after " + fmtDur(a.PersonMS)
	}
	return s
}

// legacyAsks describes the questions of a record written before each was
// recorded: only their count and keys are known.
func (c *TranscriptCall) legacyAsks() string {
	if len(c.Asks) > 0 || c.Elicitations == 0 {
		return ""
	}
	s := fmt.Sprintf("%s put to the person, %d declined", text.Count(c.Elicitations, "question"), c.Declined)
	if len(c.InputKeys) > 0 {
		s += " (keys " + strings.Join(c.InputKeys, ", ") + ")"
	}
	return s + "; this record predates the questions' text"
}

// requestLine describes a model request.
func requestLine(r *TranscriptRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model request %d: %s, %s of tool definitions (%s tokens)", r.Index, text.Count(r.Messages, "message"), fmtSize(r.ToolDefBytes), strconv.Itoa(r.ToolDefTokens))
	if r.MS > 0 {
		fmt.Fprintf(&b, ", %s", fmtDur(r.MS))
	}
	if u := r.Usage; u != nil {
		fmt.Fprintf(&b, ", usage %d prompt + %d completion = %d tokens", u.PromptTokens, u.CompletionTokens, u.TotalTokens)
	}
	if r.Cost > 0 {
		fmt.Fprintf(&b, ", cost %s", strconv.FormatFloat(r.Cost, 'g', 4, 64))
	}
	if r.Replayed != "" {
		fmt.Fprintf(&b, ", replayed from the %s (usage and time as recorded)", r.Replayed)
	}
	if r.Attempts > 1 {
		fmt.Fprintf(&b, ", %d attempts", r.Attempts)
	}
	if r.WaitedMS >= 1 {
		fmt.Fprintf(&b, ", waited %s (backoff, Retry-After, limits)", fmtDur(r.WaitedMS))
	}
	for _, ch := range r.ToolChanges {
		fmt.Fprintf(&b, "; %s", toolChangeText(ch))
	}
	switch {
	case r.Outcome == record.OutcomeModelError:
		b.WriteString(" → the model's malformed output (model_error)")
	case r.Outcome == record.OutcomeTruncated:
		fmt.Fprintf(&b, " → an answer cut short by the endpoint (truncated, finish_reason %s)", r.FinishReason)
	case r.Error != "":
	case r.ToolCalls > 0:
		fmt.Fprintf(&b, " → %s", text.Count(r.ToolCalls, "tool call"))
	default:
		b.WriteString(" → an answer")
	}
	return b.String()
}

// toolChangeText says how a server's tools changed before a request.
func toolChangeText(ch record.ToolChange) string {
	var parts []string
	for _, x := range []struct {
		what  string
		names []string
	}{{"added", ch.Added}, {"removed", ch.Removed}, {"changed", ch.Changed}} {
		if len(x.names) > 0 {
			parts = append(parts, x.what+" "+strings.Join(x.names, ", "))
		}
	}
	return fmt.Sprintf("the tools of %s changed before it (%s): %s offered now, %s (%d tokens)",
		ch.Server, strings.Join(parts, "; "), text.Count(ch.Tools, "tool"), fmtSize(ch.ToolDefBytes), ch.ToolDefTokens)
}

// serverLine describes one server connection.
func serverLine(s record.Server) string {
	var b strings.Builder
	b.WriteString(s.Name)
	switch {
	case s.Protocol != "":
		b.WriteString(" " + s.Protocol)
	case s.Offered != "":
		b.WriteString(" offered " + s.Offered)
	}
	var notes []string
	if s.Mode != "" && s.Mode != "auto" {
		notes = append(notes, s.Mode+" mode")
	}
	if s.Shared {
		notes = append(notes, "shared")
	}
	if s.Restarted {
		notes = append(notes, "restarted as legacy")
	}
	if s.VersionFailure {
		notes = append(notes, "no common revision")
	}
	if n := s.Reinitialized; n > 0 {
		notes = append(notes, text.Count(n, "new session")+" after the server ended one")
	}
	if s.Error != "" {
		notes = append(notes, "error: "+s.Error)
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, ", ") + ")")
	}
	return b.String()
}

// logText is one server log line.
func logText(l LogLine) string {
	var b strings.Builder
	if !l.Time.IsZero() {
		b.WriteString(l.Time.UTC().Format("15:04:05.000") + " ")
	}
	if l.Server != "" {
		b.WriteString(l.Server + " ")
	}
	if l.Method != "" {
		b.WriteString(l.Method)
		if l.Tool != "" {
			b.WriteString(" " + l.Tool)
		}
		if l.Outcome != "" {
			b.WriteString(": " + l.Outcome)
		}
		if l.ErrorCode != 0 {
			fmt.Fprintf(&b, " %d", l.ErrorCode)
		}
		fmt.Fprintf(&b, " (%s)", fmtDur(l.MS))
	}
	if l.Text != "" {
		b.WriteString(l.Text)
	}
	return strings.TrimSpace(b.String())
}

// wireHead is the head of one wire message: "+47.1 ms -> request tools/call #3, 574 B".
func wireHead(w WireLine) string {
	s := fmt.Sprintf("+%s %s %s", fmtDur(w.MS), w.Dir, w.Kind)
	if w.Method != "" {
		s += " " + w.Method
	}
	if w.ID != "" && w.ID != "null" {
		s += " #" + w.ID
	}
	return s + ", " + fmtSize(w.Bytes)
}

func (w WireLine) body() string {
	if w.Message != "" {
		return w.Message
	}
	return w.Text
}

func (w WireLine) brief() string {
	if w.Brief != "" {
		return w.Brief
	}
	return w.body()
}

// Failed are the expectations that did not hold.
func (t *Transcript) Failed() []record.Expectation {
	var out []record.Expectation
	for _, e := range t.Expectations {
		if !e.Passed {
			out = append(out, e)
		}
	}
	return out
}

// expectationsLine counts the expectations that held.
func (t *Transcript) expectationsLine() string {
	held := 0
	for _, e := range t.Expectations {
		if e.Passed {
			held++
		}
	}
	return fmt.Sprintf("%d of %d held", held, len(t.Expectations))
}

// meta is the line under the case's name.
func (t *Transcript) meta() string {
	parts := []string{"run " + t.RunID}
	if t.Model != "" {
		parts = append(parts, "model "+t.Model)
	}
	if t.Where != "" {
		parts = append(parts, t.Where)
	}
	if !t.Started.IsZero() {
		parts = append(parts, "started "+fmtTime(t.Started))
	}
	parts = append(parts, fmtDur(t.MS))
	return strings.Join(parts, " · ")
}

// toolsLine describes the catalog offered.
func (t *Transcript) toolsLine() string {
	estimated := ""
	if t.ToolDefs.Estimated {
		estimated = " (estimated)"
	}
	return fmt.Sprintf("%s offered: %s, %d tokens per request%s", text.Count(t.ToolDefs.Tools, "tool"), fmtSize(t.ToolDefs.Bytes), t.ToolDefs.Tokens, estimated)
}

// logNames are the case's log kinds in a fixed order.
func (t *Transcript) logNames() []string {
	return slices.Sorted(maps.Keys(t.Logs))
}

func fmtDur(ms float64) string {
	switch {
	case ms >= 1000:
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + " s"
	default:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	}
}

func fmtSize(n int) string { return strconv.Itoa(n) + " B" }

// compactJSON is v as one line of JSON, with <, > and & as they are: a
// layout escapes them for its own format.
func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// WriteTranscriptText writes t for a terminal width columns wide (0: no
// limit, for a file or a pipe). Every text from a model, a server or a
// scenario has its control characters shown escaped, so that a terminal
// obeys none of them; multi-line texts keep their lines, indented under
// what they belong to; a line wider than the terminal goes on on the
// next, indented (text.Wrap).
func WriteTranscriptText(w io.Writer, t *Transcript, width int) error {
	ew := &errWriter{w: w}
	p := func(indent int, format string, args ...any) {
		line := strings.Repeat("  ", indent) + fmt.Sprintf(format, args...)
		for _, l := range text.Wrap(strings.TrimRight(line, " "), width) {
			fmt.Fprintf(ew, "%s\n", strings.TrimRight(l, " "))
		}
	}
	one := text.OneLine
	block := func(indent int, s string) {
		for _, line := range strings.Split(safeLines(s), "\n") {
			p(indent, "%s", line)
		}
	}
	p(0, "%s: %s", one(t.Name), strings.ToUpper(one(t.Status)))
	p(0, "%s", one(t.meta()))
	if t.Error != "" {
		p(0, "error: %s", one(t.Error))
	}
	for _, e := range t.Failed() {
		p(0, "failed: %s", one(expectationText(e)))
	}
	for _, s := range t.Servers {
		p(0, "server %s", one(serverLine(s)))
	}
	p(0, "%s", t.toolsLine())
	for _, n := range t.Notes {
		p(0, "note: %s", one(n))
	}

	writeCall := func(indent int, c *TranscriptCall) {
		p(indent, "call %s %s", one(c.Name), one(c.arguments()))
		in := indent + 1
		if c.Decision != "" {
			p(in, "host: %s", one(c.Decision))
		}
		if s := c.sent(); s != "" {
			p(in, "sent: %s", one(s))
		}
		for _, r := range c.RoundTrips {
			p(in, "%s", r.roundLine())
			for i := range r.Asks {
				a := &r.Asks[i]
				p(in+1, "%s:", one(askLine(a)))
				if a.Message != "" {
					block(in+3, a.Message)
				}
				if a.URL != "" {
					p(in+3, "%s", one(a.URL))
				}
				p(in+2, "%s", one(answerLine(a)))
				if len(a.Content) > 0 {
					p(in+2, "content %s", one(compactJSON(a.Content)))
				}
			}
		}
		if s := c.legacyAsks(); s != "" {
			p(in, "%s", s)
		}
		p(in, "→ %s, %s:", one(c.headline()), c.resultLine())
		block(in+2, c.Kept)
		if c.CutNote != "" {
			p(in+2, ">>> cut here >>> %s", one(c.CutNote))
		}
		if len(c.ServerLog) > 0 {
			p(in, "server log:")
			for _, l := range c.ServerLog {
				p(in+1, "%s", one(logText(l)))
			}
		}
		if len(c.Wire) > 0 {
			p(in, "wire (%s):", text.Count(len(c.Wire), "message"))
			for _, wl := range c.Wire {
				p(in+1, "%s %s", wireHead(wl), one(text.Shorten(wl.brief(), 240)))
			}
		}
	}

	for _, turn := range t.Turns {
		p(0, "")
		p(0, "Turn %d", turn.N)
		p(1, "user:")
		block(3, turn.Question)
		for ri := range turn.Requests {
			r := &turn.Requests[ri]
			p(1, "%s", one(requestLine(r)))
			if r.Error != "" {
				p(2, "error: %s", one(r.Error))
			}
			for ci := range r.Calls {
				writeCall(2, &r.Calls[ci])
			}
		}
		if turn.Error != "" {
			p(1, "error: %s", one(turn.Error))
		}
		if turn.Stopped {
			p(1, "stopped: the turn reached max_steps")
		}
		if turn.Truncated != "" {
			p(1, "truncated: the endpoint cut the answer short (finish_reason %s); it is not a whole answer", turn.Truncated)
		}
		p(1, "answer:")
		block(3, turn.Answer)
	}
	if len(t.Checks) > 0 {
		p(0, "")
		p(0, "Checks after the conversation")
		for i := range t.Checks {
			writeCall(1, &t.Checks[i])
		}
	}
	p(0, "")
	p(0, "Expectations: %s", t.expectationsLine())
	for _, e := range t.Expectations {
		mark := "pass"
		if !e.Passed {
			mark = "FAIL"
		}
		p(1, "%s  %s", mark, one(expectationText(e)))
	}
	if len(t.ServerLines) > 0 {
		p(0, "")
		p(0, "Server log lines of no call")
		for _, l := range t.ServerLines {
			p(1, "%s", one(logText(l)))
		}
	}
	if len(t.Logs) > 0 {
		p(0, "")
		p(0, "Logs")
		for _, name := range t.logNames() {
			p(1, "%-5s %s", one(name), one(t.Logs[name]))
		}
	}
	return ew.err
}

// safeLines is OneLine for a text of several lines: it keeps newlines
// and spaces, turns a tab into four spaces, drops the carriage return of
// a CRLF, and shows every other control character escaped.
func safeLines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n' || r == ' ':
			b.WriteRune(r)
		case r == '\t':
			b.WriteString("    ")
		case unicode.IsSpace(r) && r >= 0xa0:
			b.WriteByte(' ')
		case unicode.IsSpace(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteString(text.OneLine(string(r)))
		}
	}
	return b.String()
}
