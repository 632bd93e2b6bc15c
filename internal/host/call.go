package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
)

// maxRecordedResult bounds the result text kept in an event: enough to
// check state and to read a failure, not a copy of every large result.
const maxRecordedResult = 4 << 10

// CallRequest is one tool call the model proposed.
type CallRequest struct {
	// Name is the namespaced name the model used.
	Name string
	// Arguments is the arguments text as the model wrote it ("" means {}).
	Arguments string
	TraceID   string
	Step      int
}

// callState gathers what happens to one call while it runs, including what a
// 2025-11-25 server's elicitation/create request adds from another goroutine.
type callState struct {
	mu sync.Mutex
	// host made the call: a server's question goes to its person.
	host         *Host
	tool         string
	asked        bool
	elicitations int
	declined     int
	personMS     float64
	inputKeys    []string
	// progress is what the server reported (nil for nothing).
	progress *record.Progress
	// round is the context of the round in flight, and clock its timeout:
	// a 2025-11-25 server's question arrives inside a round, with the
	// server's request context, and is withdrawn when the round ends; the
	// clock stops while the person is asked.
	round context.Context
	clock *roundClock
	// roundN is the number of the round in flight (1-based), and asks the
	// questions put to the person so far, with their answers (asks.go).
	roundN int
	asks   []record.Ask
}

func (c *callState) setRound(ctx context.Context, clock *roundClock) {
	c.mu.Lock()
	c.round, c.clock = ctx, clock
	c.mu.Unlock()
}

func (c *callState) currentRound() (context.Context, *roundClock) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.round, c.clock
}

func (c *callState) addPerson(ms float64) {
	c.mu.Lock()
	c.personMS += ms
	c.mu.Unlock()
}

func (c *callState) person() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.personMS
}

// Call runs one tool call the model proposed, with every check the host
// makes, and returns the text for the model and the call's event. It never
// fails: every failure is a short text for the model and an outcome in the
// event.
func (h *Host) Call(ctx context.Context, req CallRequest) (string, record.Call) {
	return h.call(ctx, h.tab(), req, false)
}

// Check runs a call for the harness, not the model: any tool in the table,
// offered or not, and without asking the person (the harness reading state
// after a conversation is not an effect the model proposed).
func (h *Host) Check(ctx context.Context, req CallRequest) (string, record.Call) {
	return h.call(ctx, h.tab(), req, true)
}

// call runs a call of a tool in tab, the table the model was given.
func (h *Host) call(ctx context.Context, tab *toolTable, req CallRequest, harness bool) (string, record.Call) {
	start := time.Now()
	ev := record.Call{
		Operation: record.OpToolCall, Time: start.UTC(), SessionID: h.sessionID,
		TraceID: req.TraceID, Step: req.Step, Name: req.Name, Server: "-", Tool: req.Name, ArgKeys: []string{},
	}
	st := &callState{host: h}
	finish := func(answer, outcome string) (string, record.Call) {
		ev.Outcome = outcome
		ev.MS = msSince(start)
		st.mu.Lock()
		ev.PersonMS = record.RoundMS(st.personMS)
		ev.AskedUser = st.asked
		ev.Elicitations, ev.Declined, ev.InputKeys = st.elicitations, st.declined, slices.Clone(st.inputKeys)
		ev.Asks = slices.Clone(st.asks)
		if st.progress != nil {
			p := *st.progress
			ev.Progress = &p
		}
		st.mu.Unlock()
		if ev.Arguments == nil {
			ev.Proposed = text.Shorten(req.Arguments, maxRecordedResult)
		}
		if outcome != record.OutcomeOK {
			ev.Error = strings.TrimPrefix(answer, "error: ")
		}
		ev.RawBytes = max(ev.RawBytes, len(answer))
		ev.ResultBytes = len(answer)
		ev.Result = text.Shorten(answer, maxRecordedResult)
		h.emit(ev)
		return answer, ev
	}

	tool := tab.all[req.Name]
	if tool == nil || (!harness && !tool.Offered) {
		h.step("host", "no such tool: nothing sent", map[string]any{"decision": "unknown_tool"})
		return finish(fmt.Sprintf("error: there is no tool named %q. Use only the tools you were given.", req.Name), record.OutcomeUnknownTool)
	}
	ev.Server, ev.Tool = tool.Server, tool.MCP.Name
	s := h.servers[tool.Server]
	ev.Protocol = s.info.Protocol

	args, problem := parseArguments(req.Arguments, h.opts.MaxArgBytes, h.opts.Paths)
	if len(args) > 0 { // ArgKeys stays [] rather than null for no arguments
		ev.ArgKeys = make([]string, 0, len(args))
		for k := range args {
			ev.ArgKeys = append(ev.ArgKeys, k)
		}
		slices.Sort(ev.ArgKeys)
	}
	if problem != "" {
		h.step("host", "bad arguments: nothing sent", map[string]any{"decision": "bad_arguments"})
		return finish("error: "+problem, record.OutcomeBadArguments)
	}

	if s.catalog != nil {
		return finish(fmt.Sprintf("error: the server %s is not connected (its tools were read from %s), so its tools can't be used now.", tool.Server, s.catalog.Source), record.OutcomeError)
	}
	// Nothing would be sent to a dead server: do not ask the person first.
	if why := s.deadReason(); why != "" {
		return finish(fmt.Sprintf("error: the server %s has stopped working (%s), so its tools can't be used now.", tool.Server, why), record.OutcomeError)
	}

	ev.Approval = record.ApprovalAuto
	if harness || tool.AutoRun {
		if h.stepping() {
			h.step("host", "read-only tool on the auto-run list: run it", map[string]any{"decision": "auto"})
		}
	} else {
		t0 := time.Now()
		ok := h.approve(ctx, ApprovalRequest{Server: tool.Server, Tool: tool.MCP.Name, Name: tool.Name, Arguments: args, Annotations: tool.MCP.Annotations}, st)
		st.addPerson(msSince(t0))
		if !ok {
			ev.Approval = record.ApprovalDenied
			h.step("host", "the person did not approve it: nothing sent", map[string]any{"decision": "denied"})
			return finish(fmt.Sprintf("error: the user did not approve running %s, so nothing was done. Don't retry unless they ask for it.", tool.Name), record.OutcomeDenied)
		}
		ev.Approval = record.ApprovalApproved
		h.step("host", "the person approved it: run it", map[string]any{"decision": "approved"})
	}

	ev.Arguments = args
	st.tool = tool.MCP.Name
	s.begin(st)
	defer s.end(st)
	answer, outcome, serverMS := h.rounds(ctx, s, tool, args, req, st, &ev)
	ev.ServerMS = record.RoundMS(serverMS)
	if len(ev.RoundMS) < 2 {
		ev.RoundMS = nil // the same as server_ms
	}
	return finish(answer, outcome)
}

// rounds sends the call and runs its input_required rounds, putting every
// question to the person. It returns the text for the model and the outcome.
//
// Each round is an exchange on the server's watch (watch.go): its progress
// token goes with the request, the server's progress reaches the call (and,
// with ProgressExtends, moves the round's deadline), and the host reads the
// result as sent: a resultType it does not know makes the answer invalid,
// and a requestState is echoed in the server's own bytes.
func (h *Host) rounds(ctx context.Context, s *serverConn, tool *Tool, args map[string]any, req CallRequest, st *callState, ev *record.Call) (answer, outcome string, serverMS float64) {
	params := &mcp.CallToolParams{Name: tool.MCP.Name, Arguments: args}
	var state json.RawMessage // the requestState to echo, as the server wrote it
	stateOnly := 0
	resent := false // sent again on a new session (session.go)
	for round := 1; ; round++ {
		if round > h.opts.MaxRounds {
			return fmt.Sprintf("error: the server %s still wanted more input after %d rounds, so the host stopped the call. Tell the user it did not finish.", s.spec.Name, h.opts.MaxRounds), record.OutcomeError, serverMS
		}
		// The round's time is the server's: it starts as the request
		// goes out (clock.go).
		rctx, clock := startRoundAtSend(ctx, h.opts.ToolTimeout, h.opts.ToolTimeout+unsentLimit)
		ex := s.watch.open(methodToolsCall)
		ex.sent = clock.sent
		ex.progress = func(p progressReport) { st.progressed(p, h.progressExtends(clock)) }
		if state != nil {
			ex.rewrite = map[string]json.RawMessage{"requestState": state}
		}
		params.Meta = h.callMeta(req.TraceID, req.Step, ex.token)
		st.setRound(rctx, clock)
		st.setRoundN(round)
		personBefore := st.person()
		t0 := time.Now()
		cs := s.sess()
		res, err := cs.CallTool(withExchange(rctx, ex), params)
		raw := s.watch.done(ex)
		roundMS := msSince(t0) - (st.person() - personBefore)
		serverMS += roundMS
		ev.RoundMS = append(ev.RoundMS, record.RoundMS(roundMS))
		timedOut := errors.Is(context.Cause(rctx), errRoundTimeout) && ctx.Err() == nil
		st.setRound(nil, nil)
		clock.stop()
		ev.Rounds = round
		if err != nil {
			if big := s.answerOverLimit(ex); big != nil {
				return h.overLimitText(s, big), record.OutcomeError, serverMS
			}
			if timedOut && clock.wasExtended() {
				return h.extendedTimeout(), record.OutcomeTimeout, serverMS
			}
			if !timedOut && ctx.Err() == nil && h.sessionEnded(ctx, s, cs, err) {
				refused := ex.refused.Load()
				h.step("server", s.spec.Name+" ended its session (HTTP 404)", map[string]any{"refused": refused})
				rerr := h.reinitialize(ctx, s, cs)
				if rerr == nil && refused && !resent {
					// The server refused the request and ran nothing: it
					// is sent again, once, on the new session.
					resent = true
					round--
					ev.RoundMS = ev.RoundMS[:len(ev.RoundMS)-1]
					continue
				}
				return h.sessionEndText(s, rerr, refused), record.OutcomeError, serverMS
			}
			return h.callError(ctx, s, err, timedOut, ev), errorOutcome(timedOut), serverMS
		}
		if at := invalidUTF8(raw); at >= 0 {
			// JSON is UTF-8 (RFC 8259); the SDK's decoder would have
			// put U+FFFD in place of the bytes and passed a changed
			// answer on as if it were the server's.
			ev.ErrorCode = record.Code(record.CodeInvalidResult)
			h.step("server", "invalid answer: bytes that are not UTF-8", map[string]any{"code": record.CodeInvalidResult, "at": at})
			return fmt.Sprintf("error: the server %s answered with bytes that are not UTF-8, which JSON does not allow (at byte %d of its result: %s), so the answer was not used.",
				s.spec.Name, at, quoteAround(raw, at)), record.OutcomeError, serverMS
		}
		sent := readSentResult(raw, h.opts.Paths)
		if rt := sent.ResultType; sent.Typed && rt != resultComplete && rt != resultInputRequired {
			// The spec: a resultType the client does not recognise is
			// invalid. Its content is not the model's to read.
			ev.ErrorCode = record.Code(record.CodeInvalidResult)
			h.step("server", fmt.Sprintf("invalid answer: resultType %q", rt), map[string]any{"code": record.CodeInvalidResult})
			return fmt.Sprintf("error: the server %s answered with a kind of result this host does not know (resultType %q), so the answer was not used.", s.spec.Name, text.Shorten(rt, 40)), record.OutcomeError, serverMS
		}
		if !res.NeedsInput() {
			return h.resultText(res, ev, len(raw)), resultOutcome(res), serverMS
		}
		state = nil
		if len(sent.RequestState) > 0 && string(sent.RequestState) != "null" {
			state = sent.RequestState
		}
		if len(res.InputRequests) == 0 {
			// A state-only input_required asks the host to send the call
			// again; a server that keeps doing it is shedding load.
			stateOnly++
			h.step("server", "input_required without questions: retry", map[string]any{"round": round})
			select {
			case <-time.After(time.Duration(stateOnly*50) * time.Millisecond):
			case <-ctx.Done():
				return "error: the call was cancelled before the server answered.", record.OutcomeError, serverMS
			}
			params = &mcp.CallToolParams{Name: params.Name, Arguments: args, RequestState: res.RequestState}
			continue
		}
		h.step("server", "input_required", map[string]any{"round": round, "keys": slices.Sorted(maps.Keys(res.InputRequests))})
		responses := mcp.InputResponseMap{}
		for _, key := range slices.Sorted(maps.Keys(res.InputRequests)) {
			st.mu.Lock()
			st.inputKeys = append(st.inputKeys, key)
			st.mu.Unlock()
			switch p := res.InputRequests[key].(type) {
			case *mcp.ElicitParams:
				if h.opts.NoElicitation {
					// The host told the server it cannot ask (no elicitation
					// capability); a server that asks anyway broke the
					// protocol, and its question reaches nobody.
					h.step("server", s.spec.Name+" asked a question although the host declared no elicitation: call stopped", map[string]any{"key": key})
					return fmt.Sprintf("error: the server %s asked the user a question, which this host told it it cannot do, so the call was stopped.", s.spec.Name), record.OutcomeError, serverMS
				}
				responses[key] = h.askPerson(ctx, s.spec.Name, key, p, st)
			default:
				return fmt.Sprintf("error: the server %s asked for something this host does not provide (%s), so the call was stopped.", s.spec.Name, inputKind(p)), record.OutcomeError, serverMS
			}
		}
		params = &mcp.CallToolParams{Name: params.Name, Arguments: args, InputResponses: responses, RequestState: res.RequestState}
	}
}

// overLimitText is the text of a call whose answer was over the host's
// limit for one message; a connection that ended with it is dead.
func (h *Host) overLimitText(s *serverConn, big *answerTooLarge) string {
	h.step("host", "answer over the limit: not read", map[string]any{"limit": big.limit})
	text := fmt.Sprintf("error: the server %s answered with more than %s, the host's limit for one message, so the answer was not read.", s.spec.Name, sizeText(big.limit))
	if big.fatal {
		s.markDead(fmt.Sprintf("it sent an answer over the host's limit of %s", sizeText(big.limit)))
		text += " Its tools can't be used now."
	}
	return text
}

// progressExtends returns what a progress report does to the round's
// clock: with ProgressExtends, it gives the round the tool timeout again,
// up to MaxToolTime of tool time in all. It reports whether it did.
func (h *Host) progressExtends(clock *roundClock) func() bool {
	return func() bool {
		if !h.opts.ProgressExtends {
			return false
		}
		return clock.extend(h.opts.ToolTimeout, max(h.opts.MaxToolTime, h.opts.ToolTimeout))
	}
}

// extendedTimeout is the text of a round that progress had extended and
// that still ran out, at the hard maximum or at a tool timeout after the
// server's last progress.
func (h *Host) extendedTimeout() string {
	secs := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'g', -1, 64) }
	h.step("host", "timeout: no answer or progress within "+secs(h.opts.ToolTimeout)+" s, or "+secs(h.opts.MaxToolTime)+" s in all", map[string]any{"decision": "timeout"})
	return fmt.Sprintf("error: no answer: the server reported progress, but the host waits at most %s seconds for a call (and %s seconds after the last progress). The server may still finish the work: don't repeat a call that changes something.",
		secs(max(h.opts.MaxToolTime, h.opts.ToolTimeout)), secs(h.opts.ToolTimeout))
}

// progressed counts a progress report of the server's; extend is asked
// whether it moves the round's deadline.
func (c *callState) progressed(p progressReport, extend func() bool) {
	moved := extend()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.progress == nil {
		c.progress = &record.Progress{}
	}
	c.progress.Count++
	c.progress.Progress, c.progress.Total, c.progress.Message = p.Progress, p.Total, text.Shorten(p.Message, 200)
	if moved {
		c.progress.Extended++
	}
}

func inputKind(ir mcp.InputRequest) string {
	switch ir.(type) {
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		return "sampling"
	case *mcp.ListRootsParams:
		return "roots"
	}
	return fmt.Sprintf("%T", ir)
}

func errorOutcome(timedOut bool) string {
	if timedOut {
		return record.OutcomeTimeout
	}
	return record.OutcomeError
}

func resultOutcome(res *mcp.CallToolResult) string {
	if res.IsError {
		return record.OutcomeToolError
	}
	return record.OutcomeOK
}

// callError turns a failed round into a short honest text for the model.
func (h *Host) callError(ctx context.Context, s *serverConn, err error, timedOut bool, ev *record.Call) string {
	if !timedOut && ctx.Err() == nil {
		if text, ok := h.httpFailure(s, err); ok {
			return text
		}
	}
	var werr *jsonrpc.Error
	switch {
	case s.inputStall() != nil:
		// The request could not be written: the pipe to the server is
		// full, and a part of the request may be in it. Nothing more can
		// be sent on this connection.
		s.markDead("it stopped reading its input")
		h.step("host", "the server stopped reading its input: request not sent", map[string]any{"decision": "timeout"})
		if timedOut {
			secs := strconv.FormatFloat(h.opts.ToolTimeout.Seconds(), 'g', -1, 64)
			return fmt.Sprintf("error: the server %s stopped reading its input: the request could not be sent within %s seconds, so its tools can't be used now.", s.spec.Name, secs)
		}
		return fmt.Sprintf("error: the server %s stopped reading its input: the request could not be sent before the call was cancelled, so its tools can't be used now.", s.spec.Name)
	case timedOut:
		secs := strconv.FormatFloat(h.opts.ToolTimeout.Seconds(), 'g', -1, 64)
		h.step("host", "timeout after "+secs+" s", map[string]any{"decision": "timeout"})
		return fmt.Sprintf("error: no answer within %s seconds. The server may still finish the work: don't repeat a call that changes something.", secs)
	case ctx.Err() != nil:
		return "error: the call was cancelled before the server answered."
	case errors.As(err, &werr):
		code := errorCode(werr)
		ev.ErrorCode = record.Code(int(code))
		h.step("server", fmt.Sprintf("protocol error %d: %s", code, werr.Message), map[string]any{"code": code})
		msg := werr.Message
		if msg == "" {
			msg = fmt.Sprintf("the server answered with error code %d and no message", code)
		}
		return "error: " + msg
	}
	// The connection failed. If the process ended (or its stdout did, or
	// carried something that is not JSON-RPC, which ends the connection),
	// every later call to this server fails the same way without being sent.
	if s.proc != nil {
		if why := s.proc.ended(errors.Is(err, syscall.EPIPE)); why != "" {
			why = "it " + why
			s.markDead(why)
			h.step("host", "server stopped: "+why, nil)
			return fmt.Sprintf("error: the server %s stopped working during the call (%s), so its tools can't be used now.", s.spec.Name, why)
		}
	}
	if errors.Is(err, mcp.ErrConnectionClosed) {
		s.markDead("its connection closed")
		return fmt.Sprintf("error: the connection to the server %s closed during the call, so its tools can't be used now.", s.spec.Name)
	}
	h.step("host", "unreadable answer: "+err.Error(), nil)
	return "error: the server's answer could not be read (" + text.Shorten(err.Error(), 200) + ")."
}

// resultText turns a result into the text the model reads: structuredContent
// when there is any (compact JSON, binary data in it replaced by a note; not
// when it only wraps the content, see structured.go), otherwise the text of
// the content, with a note in place of binary content. A tool error starts
// with "error:". The result budget cuts what is longer, and says so.
// rawSize is the length of the result as sent (a size hint).
func (h *Host) resultText(res *mcp.CallToolResult, ev *record.Call, rawSize int) string {
	var text string
	if res.StructuredContent != nil {
		text, ev.Structured = structuredText(res, rawSize, h.opts.Paths)
	}
	if !ev.Structured {
		text = contentText(res.Content)
	}
	if res.IsError {
		if text == "" {
			text = "the tool failed without saying why"
		}
		text = "error: " + text
	}
	ev.RawBytes = len(text)
	if h.opts.MaxResultBytes > 0 && len(text) > h.opts.MaxResultBytes {
		text = clip(text, h.opts.MaxResultBytes)
		ev.Clipped = true
	}
	label := "result"
	if res.IsError {
		label = "tool error"
	}
	if h.stepping() {
		h.step("server", fmt.Sprintf("%s: %d bytes", label, len(text)), map[string]any{"ms": record.RoundMS(msSince(ev.Time)), "clipped": ev.Clipped})
	}
	return text
}

// clip cuts text to at most budget bytes, on a character boundary, with a
// note at the end saying it was cut and what to do. A budget smaller than
// the note gives the note alone, whole and over the budget: a piece of the
// note would tell the model nothing, and the model must know that the
// result was cut.
func clip(text string, budget int) string {
	note := clipNote(budget)
	if budget <= len(note) {
		return note
	}
	keep := budget - len(note)
	for keep > 0 && !utf8.RuneStart(text[keep]) {
		keep--
	}
	return text[:keep] + note
}

// clipNote is the note that ends a result cut to budget.
func clipNote(budget int) string {
	return fmt.Sprintf("\n[result cut to %d bytes by the host: ask for less, e.g. with a filter or a smaller limit]", budget)
}

func contentText(content []mcp.Content) string {
	var parts []string
	for _, c := range content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image, %s, %d bytes: not shown]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio, %s, %d bytes: not shown]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s %s]", c.URI, c.Name))
		case *mcp.EmbeddedResource:
			switch r := c.Resource; {
			case r == nil:
			case r.Text != "":
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
			case blobIsText(r):
				parts = append(parts, fmt.Sprintf("[resource %s, %s]\n%s", r.URI, r.MIMEType, r.Blob))
			default:
				parts = append(parts, fmt.Sprintf("[resource %s, %s, %d bytes: not shown]", r.URI, r.MIMEType, len(r.Blob)))
			}
		default:
			parts = append(parts, fmt.Sprintf("[%T content: not shown]", c))
		}
	}
	return strings.Join(parts, "\n")
}

// parseArguments checks the model's arguments text: a JSON object within the
// size bound. It returns the object, or a problem to tell the model (the
// parsed object may be returned with a problem, to record its keys). With
// paths sdk the decoder reads every text, flat or not.
func parseArguments(text string, maxBytes int, paths Paths) (map[string]any, string) {
	if strings.TrimSpace(text) == "" {
		return map[string]any{}, ""
	}
	var obj map[string]any
	ok := false
	if !paths.sdk() {
		obj, ok = flatArguments(text)
	}
	if !ok {
		var problem string
		if obj, problem = decodeArguments(text); problem != "" {
			return nil, problem
		}
	}
	if len(text) > maxBytes {
		return obj, fmt.Sprintf("the arguments are %d bytes, over the host's limit of %d. Send less.", len(text), maxBytes)
	}
	return obj, ""
}

// decodeArguments decodes the arguments text as one JSON object, numbers
// as json.Number, or returns a problem to tell the model.
func decodeArguments(text string) (map[string]any, string) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, "the arguments were not valid JSON. Send one JSON object, e.g. {\"name\": \"value\"}."
	}
	if _, err := dec.Token(); err == nil {
		return nil, "the arguments were not valid JSON. Send one JSON object, e.g. {\"name\": \"value\"}."
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Sprintf("the arguments must be a JSON object, not %s.", jsonKind(v))
	}
	return obj, ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "that"
}

// callMeta is the _meta of a call's request: the correlation of every
// request the host sends for a call, and the exchange's progress token.
// It is one map per request (the SDK adds to it), with room for the three
// entries the SDK adds (protocol version, client info and capabilities);
// the session and trace IDs in it are boxed once, not per request.
func (h *Host) callMeta(traceID string, step int, token string) mcp.Meta {
	m := make(mcp.Meta, 8)
	m[record.MetaSessionID] = h.metaSession
	m[record.MetaTraceID] = h.traceValue(traceID)
	m[record.MetaStep] = step
	m[record.MetaTraceparent] = traceparent(traceID, step)
	m["progressToken"] = token
	return m
}

// traceValue is a trace ID as a _meta value.
type traceValue struct {
	id  string
	val any
}

// traceValue returns traceID boxed, the one of the last call when it is
// the same (a conversation's calls share it).
func (h *Host) traceValue(traceID string) any {
	if tv := h.metaTrace.Load(); tv != nil && tv.id == traceID {
		return tv.val
	}
	tv := &traceValue{id: traceID, val: traceID}
	h.metaTrace.Store(tv)
	return tv.val
}

// traceparent is the W3C trace context of a call's step:
// 00-<trace id>-<step as a 16-digit hex span id>-01.
func traceparent(traceID string, step int) string {
	if step < 0 {
		return fmt.Sprintf("00-%s-%016x-01", traceID, step)
	}
	const zeros = "0000000000000000"
	var span [16]byte
	hex := strconv.AppendUint(span[:0], uint64(step), 16)
	var b strings.Builder
	b.Grow(len("00--") + len(traceID) + 16 + len("-01"))
	b.WriteString("00-")
	b.WriteString(traceID)
	b.WriteByte('-')
	b.WriteString(zeros[len(hex):])
	b.Write(hex)
	b.WriteString("-01")
	return b.String()
}

// approve puts a call to the person, one question at a time. Anything but
// a clear yes is no, and so is no answer within the person's budget.
func (h *Host) approve(ctx context.Context, req ApprovalRequest, st *callState) bool {
	h.personMu.Lock()
	defer h.personMu.Unlock()
	ctx, cancel := h.personContext(ctx)
	defer cancel()
	t0 := time.Now()
	ok, err := h.opts.Approver.Approve(ctx, req)
	ask := approvalAsk(h.opts.Approver, req, ok, err, msSince(t0))
	if ctx.Err() != nil {
		h.step("host", h.personGone(ctx), nil)
		ask.Action, ask.Reason, ok = record.ApprovalDenied, h.personGone(ctx), false
	}
	st.ask(ask)
	return ok && err == nil
}

// personContext bounds a wait for the person by PersonTimeout.
func (h *Host) personContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if h.opts.PersonTimeout > 0 {
		return context.WithTimeoutCause(ctx, h.opts.PersonTimeout, errPersonTimeout)
	}
	return context.WithCancel(ctx)
}

// errPersonTimeout is the cause of a question that ran out of the
// person's budget.
var errPersonTimeout = errors.New("no answer from the person in time")

// personGone says why a question to the person ended without an answer.
func (h *Host) personGone(ctx context.Context) string {
	if errors.Is(context.Cause(ctx), errPersonTimeout) {
		return fmt.Sprintf("no answer from the person within %s s: no", strconv.FormatFloat(h.opts.PersonTimeout.Seconds(), 'g', -1, 64))
	}
	return "the question was withdrawn: the call ended"
}

// askPerson puts one server question to the person and returns the answer
// to send back. A url-mode request is declined without asking: the host
// never sends the person to a web page a server chose. Anything but a clear
// accept is a decline.
func (h *Host) askPerson(ctx context.Context, server, key string, p *mcp.ElicitParams, st *callState) *mcp.ElicitResult {
	st.mu.Lock()
	st.asked = true
	st.elicitations++
	tool := st.tool
	st.mu.Unlock()
	mode := p.Mode
	if mode == "" {
		mode = "form"
		if p.URL != "" || p.ElicitationID != "" {
			mode = "url"
		}
	}
	ask := questionAsk(server, key, mode, p, st)
	decline := func(action string) *mcp.ElicitResult {
		st.mu.Lock()
		st.declined++
		st.mu.Unlock()
		ask.Action = action
		st.ask(ask)
		return &mcp.ElicitResult{Action: action}
	}
	if mode != "form" {
		h.step("host", server+" asked to open a web page: declined", map[string]any{"url": p.URL})
		ask.Reason = reasonURLMode
		return decline(ActionDecline)
	}
	schema := asObject(p.RequestedSchema)
	h.step("server", server+" asks the person: "+firstLine(p.Message), map[string]any{"key": key})
	// The round in flight (a 2025-11-25 question) waits for the person
	// without its timeout running.
	_, clock := st.currentRound()
	clock.pause()
	defer clock.resume()
	t0 := time.Now()
	h.personMu.Lock()
	pctx, cancel := h.personContext(ctx)
	ans, err := h.opts.Elicitor.Elicit(pctx, ElicitRequest{Server: server, Tool: tool, Key: key, Mode: mode, Message: p.Message, Schema: schema})
	gone := pctx.Err() != nil
	if gone {
		ask.Reason = h.personGone(pctx)
		h.step("host", ask.Reason+": declined", nil)
	}
	cancel()
	h.personMu.Unlock()
	personMS := msSince(t0)
	ask.PersonMS = record.RoundMS(personMS)
	st.addPerson(personMS)
	if gone {
		return decline(ActionDecline)
	}
	if err != nil {
		h.step("host", "no answer: declined", nil)
		ask.Reason = noAnswerReason(err)
		return decline(ActionDecline)
	}
	ask.Rule = ans.Rule
	switch ans.Action {
	case ActionAccept:
		content := withDefaults(schema, ans.Content)
		if err := CheckAnswer(schema, content); err != nil {
			// Nothing the form does not allow reaches the server, whoever
			// answered (see schema_answer.go); the ask records why.
			reason := err.Error()
			if key != "" {
				reason = strings.Replace(reason, "the answer", "the answer to "+key, 1)
			}
			h.step("host", reason+": declined, nothing of it sent", map[string]any{"key": key})
			ask.Reason = reason
			return decline(ActionDecline)
		}
		h.step("host", "the person accepted", nil)
		ask.Action, ask.Content = ActionAccept, content
		st.ask(ask)
		return &mcp.ElicitResult{Action: ActionAccept, Content: content}
	case ActionCancel:
		h.step("host", "the person cancelled", nil)
		return decline(ActionCancel)
	default:
		h.step("host", "the person declined", nil)
		return decline(ActionDecline)
	}
}

// legacyElicit answers a 2025-11-25 server's elicitation/create request,
// counting it against the call in flight on that server (see asker.go).
func (h *Host) legacyElicit(ctx context.Context, server string, p *mcp.ElicitParams) *mcp.ElicitResult {
	if s := h.servers[server]; s != nil {
		cur, hosts := s.asker()
		if cur != nil {
			// The question ends with the round that caused it, whatever the
			// server does with its own request.
			if round, _ := cur.currentRound(); round != nil {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				defer context.AfterFunc(round, cancel)()
			}
			return cur.host.askPerson(ctx, server, "", p, cur)
		}
		if len(hosts) > 1 {
			noteUnattributed(server, hosts)
		}
	}
	// No call is in flight on this server, or calls of several hosts are:
	// nobody to ask on whose behalf, so no.
	return &mcp.ElicitResult{Action: ActionDecline}
}

// withDefaults fills the fields the person left out with the schema's
// defaults (SEP-1034), so the server gets a complete answer.
func withDefaults(schema, content map[string]any) map[string]any {
	out := maps.Clone(content)
	if out == nil {
		out = map[string]any{}
	}
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		spec, _ := p.(map[string]any)
		if def, ok := spec["default"]; ok {
			if _, set := out[name]; !set {
				out[name] = def
			}
		}
	}
	return out
}

// asObject returns a JSON-object-like value as a map.
func asObject(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	var m map[string]any
	if data, err := json.Marshal(v); err == nil {
		json.Unmarshal(data, &m)
	}
	return m
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
