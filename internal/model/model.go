// Package model holds the models that propose tool calls to the host, behind
// one small interface: scripted (exact calls a test wants), rules (regular
// expressions on the question and answer templates over results) and openai
// (any OpenAI-compatible Chat Completions endpoint).
//
// A model only ever proposes. It never sees a server, a person or an
// elicitation; the host decides what runs and what the model is told.
//
// The openai model's requests go through a [Wire]: the case's cassette and
// the run's response cache (package replay) and the run's endpoint limits
// ([Endpoints]). Its failures are classified ([FailureClass]): a model's
// malformed output is a [*ModelOutputError], scored rather than retried.
// A [Judge] grades answers against a rubric through the same wire.
// docs/models.md is the user's side of all this.
package model

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hosteval/hosteval/internal/record"
)

// Model proposes the next step of a conversation: tool calls, or an answer.
type Model interface {
	// Name identifies the model in results (e.g. "scripted", "openai:gpt-oss-120b").
	Name() string
	// Next returns the model's next message for the conversation so far.
	Next(ctx context.Context, req Request) (Response, error)
}

// Roles of a [Message].
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one message of a conversation, in the Chat Completions shape.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolCalls are the calls an assistant message proposed.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID ties a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the tool a tool message answers. It is for local models'
	// convenience and is not sent to an endpoint.
	Name string `json:"-"`
}

// ToolCall is one call proposed by the model.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the arguments text exactly as the model wrote it: it may
	// be invalid JSON, and the host, not the model, checks it.
	Arguments string `json:"arguments"`
}

// Tool is one tool definition offered to the model.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is what the host sends the model for one step.
type Request struct {
	Messages []Message
	Tools    []Tool
	// ToolsJSON is the tools array exactly as the host rendered it, in the
	// OpenAI format. A model that talks to an endpoint sends these bytes
	// unchanged, so the host's measured tool-definition cost is what the
	// endpoint receives.
	ToolsJSON json.RawMessage
}

// Response is the model's next message: an answer (Text, no ToolCalls) or
// one or more tool calls to run in parallel (Text may hold commentary).
type Response struct {
	Text      string
	ToolCalls []ToolCall
	// Usage is the token usage the endpoint reported, nil when unknown.
	Usage *record.Usage
	// CachedPromptTokens is the part of Usage.PromptTokens the endpoint
	// served from its prompt cache (usage.prompt_tokens_details.
	// cached_tokens; vLLM reports it with --enable-prompt-tokens-details).
	CachedPromptTokens int
	// Cost is what the answer cost at the model's price, 0 without one.
	Cost float64
	// Reasoning is the model's reasoning text, when the endpoint returned
	// it (reasoning_content or reasoning).
	Reasoning string
	// FinishReason is the endpoint's finish_reason (stop, tool_calls,
	// length, ...), empty for a local model.
	FinishReason string
	// Latency is how long the endpoint took to answer (the successful
	// attempt); for a replayed response, as recorded. 0 for a local model.
	Latency time.Duration
	// Replayed says where a response that did not come from the endpoint
	// just now came from; its Usage and Latency are as recorded.
	Replayed Source
	// Attempts counts the HTTP requests the answer took (retries are the
	// ones after the first), and Waited the time spent waiting before
	// and between them: backoff, Retry-After, the endpoint's limits and a
	// 429's pause. Both are zero for a local model and a replayed answer,
	// and set on an endpoint's failure too.
	Attempts int
	Waited   time.Duration
	// Ranks are the lexical router's best tools for the question, best
	// first, with their scores: what a routing record keeps to say why.
	Ranks []record.Rank
}

var (
	_ Model = (*Scripted)(nil)
	_ Model = (*Rules)(nil)
	_ Model = (*OpenAI)(nil)
	_ Model = (*Lexical)(nil)
)
