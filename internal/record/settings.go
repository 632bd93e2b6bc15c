package record

import (
	"crypto/sha256"
	"encoding/hex"
)

// Settings are the host settings a case ran under, after the scenario, its
// variant, the command line and the host's defaults were applied: what an
// A/B report shows when two groups differ by a knob. Durations are
// milliseconds; zero means no limit where a field says so.
type Settings struct {
	// Protocol is the protocol mode: auto, legacy or 2026-07-28.
	Protocol string `json:"protocol"`
	// The budgets: starting and connecting one server, the server/discover
	// attempt, the 2025-11-25 initialize handshake, each round of a tool
	// call, the person's answer (0: none), the whole case.
	ConnectTimeoutMS    float64 `json:"connect_timeout_ms"`
	DiscoverTimeoutMS   float64 `json:"discover_timeout_ms"`
	InitializeTimeoutMS float64 `json:"initialize_timeout_ms"`
	ToolTimeoutMS       float64 `json:"tool_timeout_ms"`
	// ProgressExtends is whether a server's progress gave a round the tool
	// timeout again, up to MaxToolTimeMS (absent when it did not).
	ProgressExtends bool    `json:"progress_extends,omitempty"`
	MaxToolTimeMS   float64 `json:"max_tool_time_ms,omitempty"`
	PersonTimeoutMS float64 `json:"person_timeout_ms"`
	CaseTimeoutMS   float64 `json:"case_timeout_ms"`
	// MaxResultBytes is the result budget (negative: none); MaxArgBytes
	// bounds one call's arguments.
	MaxResultBytes int `json:"max_result_bytes"`
	MaxArgBytes    int `json:"max_arg_bytes"`
	MaxRounds      int `json:"max_rounds"`
	MaxSteps       int `json:"max_steps"`
	// Allow and Deny are the namespaced tools offered or withheld.
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// Descriptions maps each tool whose description the scenario replaced
	// to [DescriptionHash] of the text it was given.
	Descriptions map[string]string `json:"descriptions,omitempty"`
	// Elicitation is whether the host declared the elicitation capability.
	Elicitation bool `json:"elicitation"`
}

// DescriptionHash names a description's text in [Settings]: the first 12
// hex digits of its SHA-256. Two runs with the same hash offered the same
// text; the text itself is in the scenario file.
func DescriptionHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:6])
}
