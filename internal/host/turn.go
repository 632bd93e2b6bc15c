package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/record"
)

// StoppedText is the answer of a turn that reached max_steps.
const StoppedText = "(stopped: reached max_steps)"

// Conversation is one conversation with a model through the host: the
// messages so far and the model. It is not safe for concurrent use.
type Conversation struct {
	h        *Host
	model    model.Model
	messages []model.Message
	turns    int
}

// NewConversation starts a conversation with m, with an optional system prompt.
func (h *Host) NewConversation(m model.Model, system string) *Conversation {
	c := &Conversation{h: h, model: m}
	if system != "" {
		c.messages = append(c.messages, model.Message{Role: model.RoleSystem, Content: system})
	}
	return c
}

// Messages returns the conversation so far.
func (c *Conversation) Messages() []model.Message { return c.messages }

// TurnResult is what one user turn produced.
type TurnResult struct {
	Answer   string
	TraceID  string
	Calls    []record.Call
	Requests []record.ModelRequest
	// Steps counts the tool calls of the turn.
	Steps int
	// ToolChanges are the servers' tool changes the turn's model requests
	// were given (see follow.go).
	ToolChanges []record.ToolChange
	// Stopped is set when the turn reached max_steps.
	Stopped bool
	// Truncated is the finish_reason of an answer the endpoint cut short
	// (record.Turn.Truncated): Answer is what came, which is no answer.
	Truncated string
	MS        float64
	// Ranks are the lexical router's ranking of the question, from the
	// turn's first model request (none from another model).
	Ranks []record.Rank
}

// Ask runs one user turn: the model proposes, the host decides and runs,
// until the model answers or max_steps model requests were made. One trace
// per turn; step counts the turn's tool calls. A model error (the endpoint
// failed for good) ends the turn with that error and what happened so far;
// the model's own malformed output ends it without an answer and without
// an error, recorded as the request's model_error outcome.
func (c *Conversation) Ask(ctx context.Context, question string) (TurnResult, error) {
	h := c.h
	c.turns++
	start := time.Now()
	res := TurnResult{TraceID: NewID()}
	c.messages = append(c.messages, model.Message{Role: model.RoleUser, Content: question})
	for i := 1; i <= h.opts.MaxSteps; i++ {
		// Between model requests, never during one: the table a request
		// was given checks the calls of its answer.
		res.ToolChanges = append(res.ToolChanges, h.refresh(ctx, res.TraceID, c.turns, i)...)
		tab := h.tab()
		defs := tab.toolDefs()
		req := model.Request{Messages: c.messages, Tools: tab.modelTools(), ToolsJSON: tab.json}
		t0 := time.Now()
		resp, err := c.model.Next(ctx, req)
		mr := record.ModelRequest{
			Operation: record.OpModelRequest, Time: t0.UTC(), SessionID: h.sessionID, TraceID: res.TraceID,
			Turn: c.turns, Index: i, Model: c.model.Name(), Messages: len(req.Messages),
			ToolDefBytes: defs.Bytes, ToolDefTokens: defs.Tokens, MS: record.RoundMS(msSince(t0)),
			ToolCalls: len(resp.ToolCalls), Usage: resp.Usage,
		}
		outcome := answered(&mr, resp, err)
		if err != nil {
			mr.Error = err.Error()
		}
		h.emitJSON(mr)
		res.Requests = append(res.Requests, mr)
		if i == 1 {
			res.Ranks = resp.Ranks
		}
		switch outcome {
		case record.OutcomeModelError:
			// Scored, not retried: the turn ends without an answer.
			h.step("model", "malformed output", map[string]any{"error": mr.Error})
			res.MS = msSince(start)
			return res, nil
		case record.OutcomeTruncated:
			// What came is kept, marked, and ends the turn; a call in it
			// may be cut too, so none is run.
			h.step("model", "answer cut short", map[string]any{"finish_reason": resp.FinishReason})
			c.messages = append(c.messages, model.Message{Role: model.RoleAssistant, Content: resp.Text})
			res.Answer, res.Truncated = resp.Text, resp.FinishReason
			res.MS = msSince(start)
			return res, nil
		}
		if err != nil {
			res.MS = msSince(start)
			return res, modelFailure(c.model, err)
		}
		if len(resp.ToolCalls) == 0 {
			c.messages = append(c.messages, model.Message{Role: model.RoleAssistant, Content: resp.Text})
			h.step("model", "final answer", nil)
			res.Answer = resp.Text
			res.MS = msSince(start)
			return res, nil
		}
		c.messages = append(c.messages, model.Message{Role: model.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
		// Calls of one message run one after another, in order: the person
		// sees one question at a time, steps are numbered as proposed, and a
		// 2025-11-25 server's question is counted against the right call.
		for _, tc := range resp.ToolCalls {
			res.Steps++
			if h.stepping() {
				h.step("model", "wants "+tc.Name, map[string]any{"arguments": rawOrText(tc.Arguments)})
			}
			text, ev := h.call(ctx, tab, CallRequest{Name: tc.Name, Arguments: tc.Arguments, TraceID: res.TraceID, Step: res.Steps}, false)
			res.Calls = append(res.Calls, ev)
			c.messages = append(c.messages, model.Message{Role: model.RoleTool, Content: text, ToolCallID: tc.ID, Name: tc.Name})
		}
	}
	h.step("host", "stopped: reached max_steps", map[string]any{"max_steps": h.opts.MaxSteps})
	res.Answer, res.Stopped = StoppedText, true
	c.messages = append(c.messages, model.Message{Role: model.RoleAssistant, Content: StoppedText})
	res.MS = msSince(start)
	return res, nil
}

// Propose asks the model once for the question and returns what it
// proposed, running nothing: a route-only case ends at the model's first
// answer, and scores the calls it proposed without sending any of them.
// The turn's result has the model request and the answer's text; its calls
// are empty. A model error (the endpoint failed for good) is returned as
// Ask returns it; the model's malformed output is a proposal of nothing.
func (c *Conversation) Propose(ctx context.Context, question string) (TurnResult, []model.ToolCall, error) {
	h := c.h
	c.turns++
	start := time.Now()
	res := TurnResult{TraceID: NewID()}
	c.messages = append(c.messages, model.Message{Role: model.RoleUser, Content: question})
	tab := h.tab()
	defs := tab.toolDefs()
	req := model.Request{Messages: c.messages, Tools: tab.modelTools(), ToolsJSON: tab.json}
	t0 := time.Now()
	resp, err := c.model.Next(ctx, req)
	mr := record.ModelRequest{
		Operation: record.OpModelRequest, Time: t0.UTC(), SessionID: h.sessionID, TraceID: res.TraceID,
		Turn: c.turns, Index: 1, Model: c.model.Name(), Messages: len(req.Messages),
		ToolDefBytes: defs.Bytes, ToolDefTokens: defs.Tokens, MS: record.RoundMS(msSince(t0)),
		ToolCalls: len(resp.ToolCalls), Usage: resp.Usage,
	}
	outcome := answered(&mr, resp, err)
	if err != nil {
		mr.Error = err.Error()
	}
	h.emitJSON(mr)
	res.Requests = []record.ModelRequest{mr}
	res.Ranks = resp.Ranks
	res.MS = msSince(start)
	switch {
	case outcome == record.OutcomeModelError:
		return res, nil, nil
	case outcome == record.OutcomeTruncated:
		// A proposal cut short proposes nothing.
		res.Answer, res.Truncated = resp.Text, resp.FinishReason
		return res, nil, nil
	case err != nil:
		return res, nil, modelFailure(c.model, err)
	}
	res.Answer = resp.Text
	c.messages = append(c.messages, model.Message{Role: model.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
	return res, resp.ToolCalls, nil
}

// modelFailure names the model in the error of a request that failed, once:
// the openai model's errors begin with its name already ("openai:m: status
// 500 ...").
func modelFailure(m model.Model, err error) error {
	if strings.HasPrefix(err.Error(), m.Name()+": ") {
		return fmt.Errorf("model %w", err)
	}
	return fmt.Errorf("model %s: %w", m.Name(), err)
}

// rawOrText shows arguments as JSON when they are, and as text when not.
func rawOrText(s string) any {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return s
}
