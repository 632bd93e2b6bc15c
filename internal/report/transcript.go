package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
)

// A transcript is one case told in the order it happened: each user turn,
// each model request with the tool calls it proposed, what the host
// decided about each call and what it sent, every round of a
// multi-round-trip call with the server's question and the person's
// answer, the result as the model received it (where the budget cut it),
// the final answer, the harness's state checks and each expectation. The
// servers' request logs (mcp.request lines) are joined under each call on
// trace_id + step, and the wire trace's messages too when the run kept one.
// The model is built once ([NewTranscript], [LoadTranscript]) and laid out
// as terminal text, Markdown or HTML, each escaping it in its own format.

// Transcript is the model of one case's transcript.
type Transcript struct {
	RunID  string
	CaseID string
	// Name is scenario[/variant][/model]#repeat.
	Name     string
	Scenario string
	Variant  string
	Model    string
	Status   string
	// Error says why a case with status error could not run.
	Error string
	// Where is the scenario's place: "file:line".
	Where    string
	Started  time.Time
	MS       float64
	Servers  []record.Server
	ToolDefs record.ToolDefs
	Usage    *record.Usage
	Settings *record.Settings

	Turns []TranscriptTurn
	// Checks are the harness's state checks after the conversation.
	Checks       []TranscriptCall
	Expectations []record.Expectation
	// ServerLines are the servers' log lines that join no call (the
	// connection's handshake, stderr text), in the order logged.
	ServerLines []LogLine
	// Logs are the case's log files, relative to the run folder.
	Logs map[string]string
	// Notes say what could not be read (a missing log, a skipped line).
	Notes []string
}

// TranscriptTurn is one user turn.
type TranscriptTurn struct {
	N        int
	Question string
	Answer   string
	TraceID  string
	Stopped  bool
	// Truncated is the finish_reason of an answer the endpoint cut short.
	Truncated string
	Error     string
	MS        float64
	Requests  []TranscriptRequest
}

// TranscriptRequest is one request to the model and the calls it proposed.
type TranscriptRequest struct {
	record.ModelRequest
	// ToolChanges are the changes to the tool table that this request was
	// the first to carry (a server's tools/list_changed).
	ToolChanges []record.ToolChange
	Calls       []TranscriptCall
}

// TranscriptCall is one tool call with what the transcript adds to its
// event: the host's decision in words, its rounds, where its result was
// cut, and the log lines joined to it.
type TranscriptCall struct {
	record.Call
	// Decision says what the host decided before sending anything.
	Decision string
	// Approval is the question that decided whether the call could run,
	// when it was put to the person.
	ApprovalAsk *record.Ask
	// RoundTrips are the tools/call requests sent (Call.Rounds of them).
	RoundTrips []TranscriptRound
	// Kept is the result text before the budget's note, and CutNote the
	// note, when the budget cut the result; Kept is the whole result
	// otherwise. RecordCut is set when the record kept only the start of
	// the result (it keeps 4 KiB).
	Kept      string
	CutNote   string
	RecordCut bool
	// ServerLog are the servers' log lines of this call (trace_id + step).
	ServerLog []LogLine
	// Wire are the JSON-RPC messages of this call, when a wire trace was kept.
	Wire []WireLine
}

// TranscriptRound is one tools/call request of a call and the questions
// its answer put to the person.
type TranscriptRound struct {
	N int
	// ServerMS is the server's time in this round (-1 when not recorded).
	ServerMS float64
	Asks     []record.Ask
}

// LogLine is one line of a server's log as the case log holds it.
type LogLine struct {
	Time      time.Time
	Operation string
	Server    string
	Method    string
	Tool      string
	Outcome   string
	ErrorCode int
	MS        float64
	TraceID   string
	Step      int
	// Text is a stderr line that was not JSON, or the whole line when it
	// has no operation the transcript knows.
	Text string
}

// WireLine is one message of the wire trace.
type WireLine struct {
	MS     float64
	Server string
	// Dir is "->" (to the server) or "<-" (from it).
	Dir    string
	Kind   string
	ID     string
	Method string
	Bytes  int
	// Message is the JSON-RPC message, cut to maxWireMessage bytes;
	// Brief is its params, result or error alone, without _meta.
	Message string
	Brief   string
	Text    string
}

// Limits of what a transcript holds of a log: a result of 20 MB is in the
// wire trace whole, and nobody reads it in a page.
const (
	maxWireMessage = 4 << 10
	maxLogText     = 2 << 10
)

// CaseLogs are the log lines a transcript joins with a record.
type CaseLogs struct {
	// Log is the case log (host events and servers' lines, interleaved).
	Log []byte
	// Shared are the lines of the shared servers' log that belong to the
	// case (shared servers log to one file for the whole run).
	Shared []byte
	// Wire is the case's wire trace.
	Wire []byte
	// Notes say what could not be read.
	Notes []string
}

// NewTranscript builds the transcript of rec from its logs (which may be
// empty: the record alone tells the conversation).
func NewTranscript(runID string, rec *record.Record, logs CaseLogs) *Transcript {
	k := GroupKey{Scenario: rec.Scenario, Variant: rec.Variant, Model: rec.Model}
	t := &Transcript{
		RunID: runID, CaseID: rec.CaseID, Name: caseName(k, rec.Repeat),
		Scenario: rec.Scenario, Variant: rec.Variant, Model: rec.Model,
		Status: rec.Status, Error: rec.Error, Where: where(rec.File, rec.Line),
		Started: rec.Started, MS: rec.MS, Servers: rec.Servers, ToolDefs: rec.ToolDefs,
		Usage: rec.Usage, Settings: rec.Settings, Expectations: withGrades(rec),
		Logs: rec.Logs, Notes: slices.Clone(logs.Notes),
	}
	serverLines := parseLogLines(logs.Log)
	serverLines = append(serverLines, parseLogLines(logs.Shared)...)
	slices.SortStableFunc(serverLines, func(a, b LogLine) int { return a.Time.Compare(b.Time) })
	wire := parseWire(logs.Wire)

	joined := make([]bool, len(serverLines))
	entry := func(c *record.Call) TranscriptCall {
		tc := newTranscriptCall(c)
		for i, l := range serverLines {
			if l.TraceID != "" && l.TraceID == c.TraceID && l.Step == c.Step {
				tc.ServerLog = append(tc.ServerLog, l)
				joined[i] = true
			}
		}
		tc.Wire = wire.of(c.TraceID, c.Step)
		return tc
	}

	t.Turns = turnsOf(rec, entry)
	for i := range rec.Checks {
		t.Checks = append(t.Checks, entry(&rec.Checks[i]))
	}
	for i, l := range serverLines {
		if !joined[i] {
			t.ServerLines = append(t.ServerLines, l)
		}
	}
	return t
}

// withGrades is rec's expectations with each judge's grade and reason as
// the detail of its expectation (by line), also where the expectation
// held: a person reads why the judge passed an answer, not only why it
// failed one.
func withGrades(rec *record.Record) []record.Expectation {
	exps := slices.Clone(rec.Expectations)
	for _, j := range rec.Judgements {
		for i := range exps {
			if exps[i].Line == j.Line && j.Line > 0 && exps[i].Detail == "" {
				exps[i].Detail = gradeText(j)
			}
		}
	}
	return exps
}

// gradeText is a judge's grade as a sentence.
func gradeText(j record.Judgement) string {
	if j.Error != "" {
		return "no grade (judge " + j.Judge + "): " + j.Error
	}
	op := ">="
	if !j.Passed {
		op = "<"
	}
	return fmt.Sprintf("score %.2f %s %.2f (judge %s): %s", j.Score, op, j.Threshold, j.Judge, j.Reason)
}

// turnsOf puts the record's requests and calls under their turns, in
// order. A request's calls are the next ToolCalls calls of its turn (by
// step): the model proposed them together, and the host ran them in
// order. Calls left over (a case cut short) go under the turn's last
// request.
func turnsOf(rec *record.Record, entry func(*record.Call) TranscriptCall) []TranscriptTurn {
	n := len(rec.Turns)
	for _, mr := range rec.ModelRequests {
		n = max(n, mr.Turn)
	}
	turns := make([]TranscriptTurn, n)
	byTrace := map[string]int{}
	for i := range turns {
		turns[i].N = i + 1
		if i < len(rec.Turns) {
			rt := rec.Turns[i]
			turns[i].Question, turns[i].Answer, turns[i].TraceID = rt.Question, rt.Answer, rt.TraceID
			turns[i].Stopped, turns[i].Truncated, turns[i].Error, turns[i].MS = rt.Stopped, rt.Truncated, rt.Error, rt.MS
			if rt.TraceID != "" {
				byTrace[rt.TraceID] = i
			}
		}
	}
	requests := slices.Clone(rec.ModelRequests)
	slices.SortStableFunc(requests, func(a, b record.ModelRequest) int {
		return cmp.Or(cmp.Compare(a.Turn, b.Turn), cmp.Compare(a.Index, b.Index))
	})
	for _, mr := range requests {
		if mr.Turn < 1 {
			continue
		}
		tr := TranscriptRequest{ModelRequest: mr}
		for _, ch := range rec.ToolChanges {
			if ch.Turn == mr.Turn && ch.Index == mr.Index {
				tr.ToolChanges = append(tr.ToolChanges, ch)
			}
		}
		turns[mr.Turn-1].Requests = append(turns[mr.Turn-1].Requests, tr)
		if mr.TraceID != "" {
			if _, ok := byTrace[mr.TraceID]; !ok {
				byTrace[mr.TraceID] = mr.Turn - 1
			}
		}
	}

	calls := make([][]*record.Call, n)
	var stray []*record.Call
	for i := range rec.Calls {
		c := &rec.Calls[i]
		if ti, ok := byTrace[c.TraceID]; ok {
			calls[ti] = append(calls[ti], c)
		} else {
			stray = append(stray, c)
		}
	}
	if len(stray) > 0 {
		if n == 0 {
			turns = append(turns, TranscriptTurn{N: 1})
			calls = append(calls, nil)
			n = 1
		}
		calls[n-1] = append(calls[n-1], stray...)
	}
	for ti := range turns {
		cs := calls[ti]
		slices.SortStableFunc(cs, func(a, b *record.Call) int { return cmp.Compare(a.Step, b.Step) })
		reqs := turns[ti].Requests
		if len(cs) > 0 && len(reqs) == 0 {
			// Calls without a recorded request: a request stands in for them.
			reqs = append(reqs, TranscriptRequest{ModelRequest: record.ModelRequest{Turn: ti + 1, Index: 1, ToolCalls: len(cs)}})
		}
		next := 0
		for ri := range reqs {
			take := min(reqs[ri].ToolCalls, len(cs)-next)
			if ri == len(reqs)-1 {
				take = len(cs) - next
			}
			for _, c := range cs[next : next+take] {
				reqs[ri].Calls = append(reqs[ri].Calls, entry(c))
			}
			next += take
		}
		turns[ti].Requests = reqs
	}
	return turns
}

var cutNote = regexp.MustCompile(`\n\[result cut to \d+ bytes by the host[^\]]*\]$`)

func newTranscriptCall(c *record.Call) TranscriptCall {
	tc := TranscriptCall{Call: *c, Kept: c.Result}
	tc.RecordCut = len(c.Result) < c.ResultBytes
	if c.Clipped {
		if loc := cutNote.FindStringIndex(c.Result); loc != nil {
			tc.Kept, tc.CutNote = c.Result[:loc[0]], c.Result[loc[0]+1:]
		}
	}
	var questions []record.Ask
	for i := range c.Asks {
		a := c.Asks[i]
		if a.Kind == record.AskApproval {
			tc.ApprovalAsk = &a
			continue
		}
		questions = append(questions, a)
	}
	tc.Decision = decision(c, tc.ApprovalAsk)
	for r := 1; r <= c.Rounds; r++ {
		round := TranscriptRound{N: r, ServerMS: -1}
		switch {
		case r <= len(c.RoundMS):
			round.ServerMS = c.RoundMS[r-1]
		case c.Rounds == 1:
			round.ServerMS = c.ServerMS
		}
		for _, a := range questions {
			if a.Round == r || (a.Round == 0 && r == c.Rounds) || (a.Round > c.Rounds && r == c.Rounds) {
				round.Asks = append(round.Asks, a)
			}
		}
		tc.RoundTrips = append(tc.RoundTrips, round)
	}
	if c.Rounds == 0 && len(questions) > 0 {
		tc.RoundTrips = append(tc.RoundTrips, TranscriptRound{N: 1, ServerMS: -1, Asks: questions})
	}
	return tc
}

// decision says in words what the host decided about a call before it
// sent anything, and why.
func decision(c *record.Call, approval *record.Ask) string {
	switch c.Outcome {
	case record.OutcomeUnknownTool:
		return "unknown tool: not in the host's table, or not offered to the model; nothing sent"
	case record.OutcomeBadArguments:
		return "bad arguments: not a JSON object, or too large; nothing sent"
	}
	var asked string
	if approval != nil {
		asked = answeredBy(approval)
	}
	switch c.Approval {
	case record.ApprovalAuto:
		return "on the server's auto-run list: run without asking the person"
	case record.ApprovalApproved:
		return "not on the auto-run list: the person approved it" + asked
	case record.ApprovalDenied:
		return "not on the auto-run list: the person did not approve it" + asked + "; nothing sent"
	}
	if c.Rounds == 0 {
		return "nothing sent"
	}
	return ""
}

// answeredBy says who answered a question for the person: " (canned
// approval file:line)", " (no canned approval: denied)" or "".
func answeredBy(a *record.Ask) string {
	switch {
	case a.Rule != "" && a.Kind == record.AskApproval:
		return " (canned approval " + a.Rule + ")"
	case a.Rule != "":
		return " (canned answer " + a.Rule + ")"
	case a.Reason != "":
		return " (" + a.Reason + ")"
	}
	return ""
}

// parseLogLines reads the servers' lines of a case log: every line but the
// host's own events, which the record holds already.
func parseLogLines(data []byte) []LogLine {
	var out []LogLine
	for line := range bytes.Lines(data) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var raw map[string]any
		if err := json.Unmarshal(line, &raw); err != nil {
			out = append(out, LogLine{Text: text.Shorten(string(line), maxLogText)})
			continue
		}
		l := LogLine{
			Operation: str(raw["operation"]), Server: str(raw["server"]), Method: str(raw["method"]),
			Tool: str(raw["tool"]), Outcome: str(raw["outcome"]), ErrorCode: int(num(raw["error_code"])),
			MS: num(raw["ms"]), TraceID: str(raw["trace_id"]), Step: int(num(raw["step"])),
		}
		if strings.HasPrefix(l.Operation, "host.") {
			continue
		}
		l.Time, _ = time.Parse(time.RFC3339Nano, str(raw["ts"]))
		switch {
		case l.Operation == "server.stderr":
			l.Text = text.Shorten(str(raw["text"]), maxLogText)
		case l.Method == "":
			l.Text = text.Shorten(string(line), maxLogText)
		}
		out = append(out, l)
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// wireTrace is a parsed wire trace.
type wireTrace []wireEntry

type wireEntry struct {
	WireLine
	traceID string
	step    int
	// params of a request: requestId of a cancellation.
	requestID string
	raw       json.RawMessage
}

func parseWire(data []byte) wireTrace {
	var out wireTrace
	for line := range bytes.Lines(data) {
		var e record.WireLine
		if json.Unmarshal(line, &e) != nil || e.Kind == "log" {
			continue // the servers' log lines are in the case log
		}
		we := wireEntry{WireLine: WireLine{
			MS: e.MS, Server: e.Server, Dir: e.Dir, Kind: e.Kind, ID: string(e.ID), Method: e.Method,
			Bytes: e.Bytes, Message: text.Shorten(string(e.Message), maxWireMessage), Text: text.Shorten(e.Text, maxLogText),
		}}
		if len(e.Message) <= maxBriefSource {
			we.raw = e.Message
		}
		if e.Kind == "request" || e.Kind == "notification" {
			var m struct {
				Params struct {
					Meta      map[string]any  `json:"_meta"`
					RequestID json.RawMessage `json:"requestId"`
				} `json:"params"`
			}
			if json.Unmarshal(e.Message, &m) == nil {
				we.traceID = str(m.Params.Meta[record.MetaTraceID])
				we.step = int(num(m.Params.Meta[record.MetaStep]))
				we.requestID = string(m.Params.RequestID)
			}
		}
		out = append(out, we)
	}
	return out
}

// of returns the messages of the call traceID + step: the host's requests
// that carry them in _meta, the server's answers to those, and what passed
// on the same server while one of them was open (a 2025-11-25 server's
// elicitation/create and the host's answer, a cancellation). The trace
// can hold an answer before its request (the two directions are taped
// apart), so answers are matched by ID wherever they stand.
func (w wireTrace) of(traceID string, step int) []WireLine {
	if traceID == "" {
		return nil
	}
	type span struct{ from, to int }
	spans := map[string][]span{} // server -> the call's requests, from the first line to the last of each exchange
	mine := map[string]int{}     // server + id of the call's requests -> index of the request
	for i, e := range w {
		if e.Dir == "->" && e.Kind == "request" && e.traceID == traceID && e.step == step {
			mine[e.Server+" "+e.ID] = i
		}
	}
	if len(mine) == 0 {
		return nil
	}
	keep := make([]bool, len(w))
	// An answer taped before its request is shown after it, with its method.
	after := map[int]int{} // index of such an answer -> index of its request
	for key, i := range mine {
		keep[i] = true
		sp := span{i, i}
		for j, e := range w {
			if e.Dir == "<-" && (e.Kind == "result" || e.Kind == "error") && e.Server+" "+e.ID == key {
				keep[j] = true
				if j < i {
					after[j] = i
				}
				sp = span{min(sp.from, j), max(sp.to, j)}
				break
			}
		}
		server := w[i].Server
		spans[server] = append(spans[server], sp)
	}
	open := func(server string, i int) bool {
		for _, sp := range spans[server] {
			if i > sp.from && i < sp.to {
				return true
			}
		}
		return false
	}
	theirs := map[string]bool{} // server + id of the server's requests while one was open
	for i, e := range w {
		switch {
		case keep[i]:
		case e.Dir == "->" && e.Kind == "notification" && e.requestID != "":
			_, keep[i] = mine[e.Server+" "+e.requestID]
		case e.Dir == "<-" && (e.Kind == "request" || e.Kind == "notification") && open(e.Server, i):
			keep[i] = true
			if e.Kind == "request" {
				theirs[e.Server+" "+e.ID] = true
			}
		case e.Dir == "->" && (e.Kind == "result" || e.Kind == "error") && theirs[e.Server+" "+e.ID]:
			keep[i] = true
			delete(theirs, e.Server+" "+e.ID)
		}
	}
	var out []WireLine
	early := map[int]WireLine{} // by the index of the request they answer
	for i, e := range w {
		if !keep[i] {
			continue
		}
		line := e.WireLine
		line.Brief = brief(e.raw, line.Message)
		if req, ok := after[i]; ok {
			line.Method = cmp.Or(line.Method, w[req].Method)
			early[req] = line
			continue
		}
		out = append(out, line)
		if answer, ok := early[i]; ok {
			out = append(out, answer)
		}
	}
	return out
}

// maxBriefSource bounds the messages that are parsed again for their
// brief; a larger one is shown cut as it is.
const maxBriefSource = 1 << 20

// brief is a message's params, result or error without the envelope and
// without _meta (the correlation keys, the client's capabilities): what a
// person reads. It is cut to maxWireMessage bytes; cut is the message as
// it is when it cannot be parsed.
func brief(raw json.RawMessage, cut string) string {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return cut
	}
	for _, part := range []string{"params", "result", "error"} {
		body, ok := m[part]
		if !ok {
			continue
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(body, &obj) == nil {
			delete(obj, "_meta")
			if b, err := json.Marshal(obj); err == nil {
				body = b
			}
		}
		return text.Shorten(string(body), maxWireMessage)
	}
	return cut
}
