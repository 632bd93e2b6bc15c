package model

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// FailureClass sorts the ways an endpoint can fail a request, because
// each calls for something else: a wait, a fix, or a score.
type FailureClass string

const (
	// FailureTransport: no usable answer came (connection refused or
	// reset, an attempt that timed out, 408, 409, 429, 5xx, an answer that
	// is not a completion). Retried with backoff; after the last retry an
	// infrastructure failure.
	FailureTransport FailureClass = "transport"
	// FailureConfig: what the user configured is wrong (401, 403, 404, a
	// server started without tool calling). Not retried: it would fail
	// the same way.
	FailureConfig FailureClass = "config"
	// FailureRejected: the endpoint refuses this request (400, 413, 422:
	// a conversation longer than the context, a chat template that cannot
	// render it). Not retried.
	FailureRejected FailureClass = "rejected"
	// FailureModelOutput: the model answered, but the endpoint could not
	// parse what it wrote as a tool call. Not retried, not an outage: it
	// is the model's error and is scored as such ([*ModelOutputError]).
	FailureModelOutput FailureClass = "model_output"
)

// EndpointError is a request the endpoint did not answer with a
// completion: a transport failure after its retries, a configuration
// error, or a request the endpoint refuses. Class says which.
type EndpointError struct {
	Model string
	Class FailureClass
	// StatusCode is the HTTP status of the last attempt, 0 when no HTTP
	// answer came (connection error, timeout).
	StatusCode int
	// Message is the endpoint's error message, or what went wrong.
	Message string
	// Attempts counts the HTTP requests made; Waited is the time spent
	// waiting before and between them (backoff, Retry-After, limits).
	Attempts int
	Waited   time.Duration
	// TooLong is set when the endpoint asked for a wait (Retry-After)
	// over the cap, so that a retry left was not made.
	TooLong *TooLongWait
	Err     error
}

// TooLongWait is a wait an endpoint asked for that is longer than the cap.
type TooLongWait struct {
	Asked, Cap time.Duration
	// Capped says the cap is max_retry_delay, not the default.
	Capped bool
}

func (e *EndpointError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "openai:%s: ", e.Model)
	if e.StatusCode != 0 && e.StatusCode != http.StatusOK {
		fmt.Fprintf(&b, "status %d", e.StatusCode)
		if t := http.StatusText(e.StatusCode); t != "" {
			fmt.Fprintf(&b, " %s", t)
		}
		if e.Message != "" {
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Message)
	if e.Attempts == 1 {
		b.WriteString(" (1 attempt")
	} else {
		fmt.Fprintf(&b, " (%d attempts", e.Attempts)
	}
	if hint := e.hint(); hint != "" {
		b.WriteString("; not retried: " + hint)
	}
	if w := e.TooLong; w != nil {
		cap := "the default cap of " + w.Cap.String() + " (max_retry_delay sets it)"
		if w.Capped {
			cap = "the cap of " + w.Cap.String() + " (max_retry_delay)"
		}
		fmt.Fprintf(&b, "; not retried: the endpoint asked to wait %s (Retry-After), longer than %s", w.Asked.Round(time.Millisecond), cap)
	}
	b.WriteString(")")
	return b.String()
}

func (e *EndpointError) hint() string {
	switch {
	case e.Class == FailureRejected:
		return "the endpoint refuses this request"
	case e.Class != FailureConfig:
		return ""
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		return "check api_key (or " + EnvAPIKey + ")"
	case e.StatusCode == http.StatusNotFound || mentionsMissingModel(e.Message):
		return "check base_url and model"
	}
	return "check the server's flags (docs/models.md)"
}

func (e *EndpointError) Unwrap() error { return e.Err }

// ModelOutputError is a model's own malformed output: the endpoint
// generated an answer but could not parse it as a tool call (llama.cpp's
// server and Ollama answer HTTP 500, vLLM's gpt-oss parser fails the
// same way), or a judge's answer is not the JSON it was asked for. It is
// never retried: a retry would hide the failure and pay for a second
// generation. Callers record it as the model's outcome, like a call to an
// unknown tool.
type ModelOutputError struct {
	Model string
	// StatusCode is the HTTP status of the answer (200 when the answer
	// came but did not hold what was asked).
	StatusCode int
	// Message is the endpoint's message, e.g. "The model produced output
	// that does not match the expected peg-native format".
	Message string
}

func (e *ModelOutputError) Error() string {
	if e.StatusCode == http.StatusOK {
		return fmt.Sprintf("openai:%s: the model's output is malformed: %s", e.Model, e.Message)
	}
	return fmt.Sprintf("openai:%s: the model's output is malformed (status %d): %s", e.Model, e.StatusCode, e.Message)
}

// Messages of endpoint failures, lowercased, that tell a model's malformed
// output from an outage. Each is pinned by a fixture in
// testdata/endpoints.
var modelOutputMessages = []string{
	"does not match the expected",            // llama.cpp: "The model produced output that does not match the expected peg-native format"
	"failed to parse input at pos",           // llama.cpp before the PEG parser
	"failed to parse tool call",              // llama.cpp: "Failed to parse tool call arguments as JSON" (a malformed call sent back)
	"error parsing tool call",                // Ollama: "error parsing tool call: raw='...', err=..."
	"unexpected tokens remaining in message", // vLLM, gpt-oss (openai_harmony)
	"while expecting start token",            // vLLM, gpt-oss (openai_harmony)
	"harmonyerror",                           // vLLM, gpt-oss, when the exception name is kept
}

// Messages that say the server is set up without what the request needs.
var configMessages = []string{
	"--enable-auto-tool-choice", // vLLM without tool calling
	"requires --jinja",          // llama.cpp without --jinja
	"unsupported param: tools",  // older llama.cpp without --jinja
	"does not support tools",    // Ollama, a model without tool support
	"try pulling it first",      // Ollama, a model not pulled
}

// Messages of a chat template that cannot render the conversation: the
// request is refused the same way every time.
var templateMessages = []string{
	"while executing", // llama.cpp's minja
	"raise_exception", // a template that raised
	"unable to generate parser for this template",
}

func containsAny(s string, subs []string) bool {
	s = strings.ToLower(s)
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func mentionsMissingModel(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "model") && (strings.Contains(m, "does not exist") || strings.Contains(m, "not found"))
}

// classify sorts an HTTP error answer by its status and message.
// Connection failures and timeouts (no status) are transport failures.
func classify(status int, message string) FailureClass {
	switch {
	case status == 0:
		return FailureTransport
	case containsAny(message, modelOutputMessages):
		return FailureModelOutput
	case containsAny(message, configMessages):
		return FailureConfig
	case status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusNotFound:
		return FailureConfig
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status == http.StatusTooManyRequests:
		return FailureTransport
	case status >= 400 && status < 500 && mentionsMissingModel(message):
		return FailureConfig // vLLM before 0.10 answered 400 for a model it does not serve
	case status >= 400 && status < 500:
		return FailureRejected
	case containsAny(message, templateMessages):
		return FailureRejected
	}
	return FailureTransport // 5xx: the server failed, not the request
}

// maxErrorText bounds how much of an error body that is not JSON (an HTML
// page from a proxy) goes into an error message.
const maxErrorText = 300

// errorMessage reads the message out of an error answer. The shapes seen:
// {"error": {"message": ...}} (OpenAI, vLLM, llama.cpp, Ollama's /v1),
// {"error": "..."} (vLLM's 401, Ollama's native API), {"object": "error",
// "message": ...} (vLLM before 0.10, SGLang), {"detail": ...} (FastAPI).
func errorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return s
		case len(v.Detail) > 0:
			return string(v.Detail)
		}
	}
	text := strings.TrimSpace(string(body))
	if len(text) > maxErrorText {
		text = text[:maxErrorText] + "..."
	}
	return text
}
