// Package record owns the results format and its vocabulary: the host's
// per-call and per-model-request events, the per-case Record that the
// runner appends to records.jsonl the moment a case ends, run.json, the
// writer and reader of a run folder, the outcomes of a call and what they
// count as ([Record.Counts]), the host settings a case ran under, and the
// unit of durations ([MS]).
//
// It is a leaf package on purpose. The host emits these types, the runner
// writes them, and internal/report reads them back without importing anything
// that runs servers or models, so every report can be rebuilt from a results
// folder alone (also one from an interrupted run).
//
// The JSON tags are the stable, versioned schema ([SchemaVersion]). Adding a
// field is compatible; renaming or removing one needs a new version.
package record

import "time"

// SchemaVersion is the version of the JSON schema of [Record] and the events.
const SchemaVersion = 1

// Operation names, as they appear in the "operation" field of log lines.
const (
	OpToolCall     = "host.tool_call"
	OpModelRequest = "host.model_request"
	OpConnect      = "host.connect"
	OpToolsChanged = "host.tools_changed"
)

// Outcomes of one tool call, as the host saw it.
const (
	OutcomeOK           = "ok"            // the server answered with a result
	OutcomeToolError    = "tool_error"    // the server answered with isError: true
	OutcomeError        = "error"         // JSON-RPC error, transport failure, dead server, too many rounds
	OutcomeTimeout      = "timeout"       // no answer within the host's tool timeout
	OutcomeUnknownTool  = "unknown_tool"  // not in the host's table (or not offered); nothing sent
	OutcomeBadArguments = "bad_arguments" // not a JSON object, or too large; nothing sent
	OutcomeDenied       = "denied"        // the person did not approve it; nothing sent
)

// CodeInvalidResult is the error code the host records for a server's
// answer that the protocol makes invalid although it is well-formed JSON-RPC
// (a resultType the host does not know): JSON-RPC's internal error, since no
// code of the server's exists.
const CodeInvalidResult = -32603

// Code returns a pointer to code, for Call.ErrorCode.
func Code(code int) *int { return &code }

// Approval decisions for a call.
const (
	ApprovalAuto     = "auto"     // on the server's auto-run list
	ApprovalApproved = "approved" // put to the person, who said yes
	ApprovalDenied   = "denied"   // put to the person, who said no (or nobody answered)
)

// Call is one tool call as the host saw it: the host.tool_call event.
// Host and server logs join on TraceID + Step.
type Call struct {
	Operation string    `json:"operation"` // always OpToolCall
	Time      time.Time `json:"ts"`
	SessionID string    `json:"session_id"`
	TraceID   string    `json:"trace_id"`
	Step      int       `json:"step"`
	// Name is the namespaced name the model used; Server and Tool are what it
	// resolved to ("-" and the name when it resolved to nothing).
	Name    string   `json:"name"`
	Server  string   `json:"server"`
	Tool    string   `json:"tool"`
	ArgKeys []string `json:"arg_keys"`
	// Arguments are the arguments as sent (absent when nothing was sent).
	Arguments map[string]any `json:"arguments,omitempty"`
	// Proposed is the arguments text as the model wrote it, cut to 4 KiB,
	// when nothing was sent (an unknown tool, bad arguments, a denial): what
	// the model asked for, even when it was not a JSON object.
	Proposed string `json:"proposed,omitempty"`
	Outcome  string `json:"outcome"`
	// ErrorCode is the JSON-RPC error code of a protocol error, absent for
	// none: a server's error with code 0 keeps its 0. The host records
	// CodeInvalidResult for an answer it must treat as invalid (an unknown
	// resultType).
	ErrorCode *int `json:"error_code,omitempty"`
	// Error is the short text the model was given for a failed call.
	Error     string `json:"error,omitempty"`
	Approval  string `json:"approval,omitempty"`
	AskedUser bool   `json:"asked_user"`
	// Rounds counts tools/call requests sent for this call (2 for a
	// confirmation answered through input_required). Zero when nothing was sent.
	Rounds int `json:"rounds"`
	// InputKeys are the keys of every input request the server made, in order.
	InputKeys []string `json:"input_keys,omitempty"`
	// Elicitations counts the questions put to the Elicitor; Declined how many
	// of those were declined or cancelled (including url-mode and unanswered ones).
	Elicitations int `json:"elicitations,omitempty"`
	Declined     int `json:"declined,omitempty"`
	// Asks are the questions put to the person for this call, in order:
	// its approval, then each question a server asked, with the answer
	// (absent in records written before they were recorded).
	Asks []Ask `json:"asks,omitempty"`
	// Progress is what the server reported of the call's progress.
	Progress *Progress `json:"progress,omitempty"`
	// MS is wall time in the host, from dispatch to answer. ServerMS is the
	// part spent waiting on the server; PersonMS the part spent waiting on the
	// person (approval and elicitation).
	MS       float64 `json:"ms"`
	ServerMS float64 `json:"server_ms"`
	PersonMS float64 `json:"person_ms"`
	// RoundMS is the server's time in each round, when there was more
	// than one (a confirmation: the question, then the answer).
	RoundMS []float64 `json:"round_ms,omitempty"`
	// ResultBytes is the size of the text given to the model; RawBytes the
	// size before the host's budget cut it.
	ResultBytes int  `json:"result_bytes"`
	RawBytes    int  `json:"raw_bytes"`
	Clipped     bool `json:"clipped"`
	Structured  bool `json:"structured"`
	// Result is the text the model was given, cut to 4 KiB in the record.
	Result string `json:"result,omitempty"`
	// Protocol is the revision negotiated with the server that ran the call.
	Protocol string `json:"protocol,omitempty"`
}

// Kinds of question put to the person.
const (
	AskApproval    = "approval"    // may the call run? (not on its server's auto-run list)
	AskElicitation = "elicitation" // a server's question (input_required or elicitation/create)
)

// Ask is one question the host put to the person during a call, and the
// answer: the approval of the call itself, or a server's question. It says
// who asked what and which answer went back, so that a transcript can show
// the exchange; the person's answer never reaches the model.
type Ask struct {
	// Kind is AskApproval or AskElicitation.
	Kind string `json:"kind"`
	// Round is the round of the call that asked (1-based); 0 for an
	// approval, which comes before anything is sent.
	Round  int    `json:"round,omitempty"`
	Server string `json:"server"`
	// Key is the input request's key in a 2026-07-28 input_required result
	// ("" for a 2025-11-25 elicitation/create request).
	Key string `json:"key,omitempty"`
	// Mode is "form" or "url" for a question.
	Mode string `json:"mode,omitempty"`
	// Message is the server's question, cut to 1 KiB; URL the page a
	// url-mode question named.
	Message string `json:"message,omitempty"`
	URL     string `json:"url,omitempty"`
	// Fields are the names of the form's fields, sorted.
	Fields []string `json:"fields,omitempty"`
	// Action is the answer: accept, decline or cancel for a question,
	// approved or denied for an approval.
	Action string `json:"action"`
	// Content is what an accepted form sent back (defaults filled in).
	Content map[string]any `json:"content,omitempty"`
	// Rule names the prepared answer that gave the answer (a scenario's
	// canned answer as "file:line"); empty when a person answered.
	Rule string `json:"rule,omitempty"`
	// Reason says why the host answered no for the person, when it did:
	// no prepared answer matched, a url-mode question, no answer in time.
	Reason   string  `json:"reason,omitempty"`
	PersonMS float64 `json:"person_ms"`
}

// Progress is what a server reported of one call's progress
// (notifications/progress for the progress token the host sends with every
// round).
type Progress struct {
	// Count is how many notifications came, over all the call's rounds.
	Count int `json:"count"`
	// Progress, Total and Message are the last notification's.
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total,omitempty"`
	Message  string   `json:"message,omitempty"`
	// Extended counts the notifications that moved a round's time limit
	// (host progress_extends).
	Extended int `json:"extended,omitempty"`
}

// ModelRequest is one request to the model: the host.model_request event.
type ModelRequest struct {
	Operation string    `json:"operation"` // always OpModelRequest
	Time      time.Time `json:"ts"`
	SessionID string    `json:"session_id"`
	TraceID   string    `json:"trace_id"`
	Turn      int       `json:"turn"`
	Index     int       `json:"index"` // 1-based within the turn
	Model     string    `json:"model"`
	Messages  int       `json:"messages"`
	// ToolDefBytes and ToolDefTokens are the exact bytes of the tools array
	// sent with this request, and their o200k_base token count.
	ToolDefBytes  int     `json:"tool_def_bytes"`
	ToolDefTokens int     `json:"tool_def_tokens"`
	MS            float64 `json:"ms"`
	ToolCalls     int     `json:"tool_calls"`
	// Usage is what the endpoint reported; absent for scripted models.
	Usage *Usage `json:"usage,omitempty"`
	Error string `json:"error,omitempty"`
	// The answer's endpoint figures, its source and its outcome: see
	// modelstats.go.
	ModelAnswer
}

// ToolChange is one server's tools changing during a case: the
// host.tools_changed event. The server said so (notifications/tools/
// list_changed, on a call's stream or a subscriptions/listen stream); the
// host listed its tools again and, before its next model request, offered
// the new table. Tools are the server's own names.
type ToolChange struct {
	Operation string    `json:"operation"` // always OpToolsChanged
	Time      time.Time `json:"ts"`
	SessionID string    `json:"session_id"`
	TraceID   string    `json:"trace_id"`
	Turn      int       `json:"turn"`
	// Index is the turn's model request (1-based) that was the first to
	// get the new table.
	Index   int      `json:"index"`
	Server  string   `json:"server"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// Changed are tools listed before and after whose definition as the
	// server wrote it differs.
	Changed []string `json:"changed,omitempty"`
	// Tools, ToolDefBytes and ToolDefTokens describe the whole tools array
	// offered from then on: what every later model request carries.
	Tools         int `json:"tools"`
	ToolDefBytes  int `json:"tool_def_bytes"`
	ToolDefTokens int `json:"tool_def_tokens"`
}

// Usage is token usage reported by a model endpoint.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Add returns the sum of u and v; either may be nil.
func (u *Usage) Add(v *Usage) *Usage {
	if u == nil && v == nil {
		return nil
	}
	var sum Usage
	for _, x := range []*Usage{u, v} {
		if x != nil {
			sum.PromptTokens += x.PromptTokens
			sum.CompletionTokens += x.CompletionTokens
			sum.TotalTokens += x.TotalTokens
		}
	}
	return &sum
}

// Server is one server connection as the host made it: the host.connect event.
type Server struct {
	Operation string    `json:"operation,omitempty"` // OpConnect in logs
	Time      time.Time `json:"ts"`
	Name      string    `json:"server"`
	// Mode is the protocol mode asked for: auto, legacy or 2026-07-28.
	Mode string `json:"mode"`
	// Protocol is the negotiated revision ("" when the connection failed).
	Protocol string `json:"protocol,omitempty"`
	// Offered is the newest revision the server offered, when known; for a
	// version failure it names what the server speaks.
	Offered       string  `json:"offered,omitempty"`
	ServerName    string  `json:"server_name,omitempty"`
	ServerVersion string  `json:"server_version,omitempty"`
	Tools         int     `json:"tools"`
	ConnectMS     float64 `json:"connect_ms"`
	// Restarted is set when auto mode restarted a server that never answered
	// server/discover and connected to it as legacy.
	Restarted bool `json:"restarted,omitempty"`
	// EraReason says why the host chose the revision it did: "answered
	// discover", "discover error code N", "no answer to discover within T",
	// "answered ping, not discover", "exited", "legacy mode", or one of
	// these after "remembered: " when an earlier connection decided it.
	EraReason string `json:"era_reason,omitempty"`
	// Shared is set for a server kept running across cases by the runner.
	Shared bool `json:"shared,omitempty"`
	// VersionFailure is set when no common revision could be agreed.
	VersionFailure bool   `json:"version_failure,omitempty"`
	Error          string `json:"error,omitempty"`
	// ConfigError is set when Error is the server's configuration's to
	// fix, not the server's to answer: two of its tools become one name in
	// the host's table. Its cases error with exit 2, not 3.
	ConfigError bool `json:"config_error,omitempty"`
	// StderrDroppedBytes and StderrDroppedLines count what of the
	// server's stderr the host left out, between the first and the last
	// stderr_bytes it keeps (budget.Budgets.StderrBytes).
	StderrDroppedBytes int64 `json:"stderr_dropped_bytes,omitempty"`
	StderrDroppedLines int64 `json:"stderr_dropped_lines,omitempty"`
	// Orphans counts the processes the server left running outside its
	// process group (a helper started with setsid), which the host found
	// and ended when it stopped the server (Linux).
	Orphans int `json:"orphans,omitempty"`
	// UnknownAnswers counts the answers the server sent to requests the
	// host never sent (or answered twice), which were not used: on the
	// connection so far (a shared server's over the run).
	UnknownAnswers int64 `json:"unknown_answers,omitempty"`
	// Reinitialized counts the new sessions the host started with the
	// server because the server had ended the one it had (2025-11-25
	// over Streamable HTTP: HTTP 404 to a request with its session id);
	// ReinitializedAt is when the last one started.
	Reinitialized   int       `json:"reinitialized,omitempty"`
	ReinitializedAt time.Time `json:"reinitialized_at,omitzero"`
}

// Case statuses.
const (
	StatusPass  = "pass"  // every expectation held
	StatusFail  = "fail"  // an expectation failed
	StatusError = "error" // the case could not run (a server would not start, the model endpoint failed)
)

// Record is one finished case: a line of records.jsonl.
type Record struct {
	Schema int    `json:"schema"`
	RunID  string `json:"run_id"`
	// CaseID is unique within a run: scenario/variant/model#repeat.
	CaseID string `json:"case_id"`
	// Index is the case's 1-based number in the run, as its files are
	// numbered (cases/0007-…); 0 in records written before it was recorded.
	Index    int    `json:"index,omitempty"`
	Scenario string `json:"scenario"`
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Variant  string `json:"variant,omitempty"`
	Model    string `json:"model"`
	Repeat   int    `json:"repeat"` // 0-based index of the repeat
	Status   string `json:"status"`
	// Error says why a case with StatusError could not run.
	Error     string    `json:"error,omitempty"`
	Started   time.Time `json:"started"`
	MS        float64   `json:"ms"`
	SessionID string    `json:"session_id"`

	Servers       []Server       `json:"servers"`
	Turns         []Turn         `json:"turns"`
	Calls         []Call         `json:"calls"`
	ModelRequests []ModelRequest `json:"model_requests"`
	Expectations  []Expectation  `json:"expectations"`
	// Checks are the harness's own calls after the conversation (state checks).
	Checks []Call `json:"checks,omitempty"`

	// ToolDefs describes the tool catalog offered to the model at the
	// start; ToolChanges are the changes to it during the case.
	ToolDefs    ToolDefs     `json:"tool_defs"`
	ToolChanges []ToolChange `json:"tool_changes,omitempty"`
	Usage       *Usage       `json:"usage,omitempty"`
	// Cost, Judgements, Cassette and ErrorClass: see modelstats.go.
	CaseModels
	// Route is the routing verdict of a case made from a dataset row.
	Route *Route `json:"route,omitempty"`
	// Settings are the host settings the case ran under (absent in
	// records written before they were recorded).
	Settings *Settings `json:"settings,omitempty"`
	// Logs are paths, relative to the run folder, of the case's log files.
	Logs map[string]string `json:"logs,omitempty"`
}

// Turn is one user turn of a case.
type Turn struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
	TraceID  string `json:"trace_id"`
	Steps    int    `json:"steps"` // tool calls in the turn
	Requests int    `json:"model_requests"`
	Stopped  bool   `json:"stopped,omitempty"` // ended by max_steps
	// Truncated is the finish_reason (length, content_filter) of an
	// answer the endpoint cut short: Answer is what came, and is no
	// answer (see OutcomeTruncated).
	Truncated string  `json:"truncated,omitempty"`
	MS        float64 `json:"ms"`
	Error     string  `json:"error,omitempty"`
}

// ToolDefs is the cost of the tool definitions offered to the model.
type ToolDefs struct {
	Tools  int `json:"tools"`
	Bytes  int `json:"bytes"`
	Tokens int `json:"tokens"`
	// Estimated is set when Tokens is an estimate: the array is over the
	// size counted exactly (1 MiB, tokens.MaxExact).
	Estimated bool `json:"estimated,omitempty"`
	// Warning says the catalog is too large for any model (20,000 tools
	// or 640,000 tokens a request).
	Warning string `json:"warning,omitempty"`
}

// Expectation is the verdict on one expectation of a scenario.
type Expectation struct {
	// Name describes the expectation, as written (e.g. `tool tickets__open_ticket outcome=ok`).
	Name   string `json:"name"`
	Line   int    `json:"line,omitempty"`
	Passed bool   `json:"passed"`
	// Detail says what was found when it failed.
	Detail string `json:"detail,omitempty"`
}

// Keys of the correlation fields the host puts in every request's _meta, so
// that servers' request logs join the host's events on trace_id + step. The
// prefix is our own reverse-DNS name; MetaTraceparent is the W3C Trace
// Context header value ("00-<trace_id>-<span_id>-01"), which tracing-aware
// servers read without knowing our prefix.
const (
	MetaSessionID   = "dev.hosteval/session_id"
	MetaTraceID     = "dev.hosteval/trace_id"
	MetaStep        = "dev.hosteval/step"
	MetaTraceparent = "traceparent"
)
