package record

import (
	"cmp"
	"math"
	"slices"
)

// What a case's record says about real models: where each answer came from
// (the endpoint, a cassette, the response cache), what it cost, whether it
// was the model's own malformed output, and the judges' grades.

// OutcomeModelError is the outcome of a model request whose answer the
// endpoint could not parse as a tool call (llama.cpp's server's HTTP 500
// "does not match the expected ... format"): the model's error, counted
// like a call to an unknown tool, never retried. It ends the turn without
// an answer; the case goes on with its next turn.
const OutcomeModelError = "model_error"

// OutcomeTruncated is the outcome of a model request whose answer the
// endpoint cut short: finish_reason "length" (max_tokens, or the context,
// ran out) or "content_filter". What came is no answer: it ends the turn
// (any calls in it are not run), is kept as the turn's answer marked
// Turn.Truncated, and fails the answer's expectations.
const OutcomeTruncated = "truncated"

// Finish reasons of an answer cut short (TruncatedBy).
const (
	FinishLength        = "length"
	FinishContentFilter = "content_filter"
)

// TruncatedBy reports whether a finish_reason says the answer was cut
// short.
func TruncatedBy(finishReason string) bool {
	return finishReason == FinishLength || finishReason == FinishContentFilter
}

// Sources of a replayed answer (ModelAnswer.Replayed).
const (
	ReplayedCassette = "cassette" // from the case's cassette
	ReplayedCache    = "cache"    // from the response cache
)

// MaxReasoningBytes bounds the reasoning text kept per model request.
const MaxReasoningBytes = 8 << 10

// ModelAnswer is what a model request's answer was, beyond its usage.
// Every field is empty for a local (scripted, rules) model.
type ModelAnswer struct {
	// Outcome is OutcomeModelError for the model's malformed output,
	// OutcomeTruncated for an answer cut short, "" otherwise (an answer,
	// tool calls, or an error in Error).
	Outcome string `json:"outcome,omitempty"`
	// Replayed says where an answer that did not come from the endpoint
	// came from (ReplayedCassette, ReplayedCache); its usage, cost and ms
	// are as recorded.
	Replayed string `json:"replayed,omitempty"`
	// CachedPromptTokens is the part of the prompt the endpoint served
	// from its prompt cache.
	CachedPromptTokens int `json:"cached_prompt_tokens,omitempty"`
	// Cost is what the answer cost at the model's price.
	Cost float64 `json:"cost,omitempty"`
	// FinishReason is the endpoint's finish_reason.
	FinishReason string `json:"finish_reason,omitempty"`
	// Reasoning is the model's reasoning text, when the endpoint returned
	// it, cut to MaxReasoningBytes.
	Reasoning string `json:"reasoning,omitempty"`
	// Attempts counts the HTTP requests the answer took (the retries are
	// those after the first); WaitedMS is the time spent waiting before
	// and between them: backoff, Retry-After, the endpoint's limits and a
	// 429's pause. Absent for a local model and a replayed answer.
	Attempts int     `json:"attempts,omitempty"`
	WaitedMS float64 `json:"waited_ms,omitempty"`
}

// Retries is how many of the answer's attempts were retries.
func (a *ModelAnswer) Retries() int { return max(a.Attempts-1, 0) }

// CaseModels are a case's figures of real models: cost, judges, cassette.
type CaseModels struct {
	// Cost sums the cost of the case's model requests and judges' requests
	// (0 without a price).
	Cost float64 `json:"cost,omitempty"`
	// Judgements are the judge expectations' grades, in the order written.
	Judgements []Judgement `json:"judgements,omitempty"`
	// Cassette is where the case's requests were recorded or replayed.
	Cassette *Cassette `json:"cassette,omitempty"`
	// ErrorClass sorts the error that stopped a case: an endpoint failure's
	// class (transport, config, rejected), ErrorServerConfig or
	// ErrorReplayMiss.
	ErrorClass string `json:"error_class,omitempty"`
	// Unpriced names the case's models that talk to an endpoint without a
	// price ("openai:m", "judge openai:j"): its Cost leaves them out, so
	// it is unknown, not 0, and a cost gate cannot be checked on it.
	Unpriced []string `json:"unpriced,omitempty"`
}

// ErrorServerConfig is the ErrorClass of a case one of whose servers the
// host refused for its configuration (record.Server.ConfigError).
const ErrorServerConfig = "server_config"

// ErrorReplayMiss is the ErrorClass of a case whose conversation asked a
// request its cassette does not hold: the case fails with the cassette's
// diff as its Error, and its expectations are not evaluated (a
// conversation that left the recording has no verdict to give).
const ErrorReplayMiss = "replay_miss"

// Judgement is a judge's grade of a case's answer against a rubric.
type Judgement struct {
	// Line is the expectation's line in the scenario file.
	Line   int    `json:"line,omitempty"`
	Judge  string `json:"judge"`
	Rubric string `json:"rubric"`
	// Score is in [0, 1]; Passed is Score >= Threshold.
	Score     float64 `json:"score"`
	Threshold float64 `json:"threshold"`
	Passed    bool    `json:"passed"`
	Reason    string  `json:"reason,omitempty"`
	// Error says why there is no grade (the judge's malformed answer, a
	// case that ended before its answer).
	Error string `json:"error,omitempty"`
	// Usage and MS are the judge's request's (as recorded when replayed).
	Usage *Usage  `json:"usage,omitempty"`
	MS    float64 `json:"ms,omitempty"`
	ModelAnswer
}

// Cassette says where a case's exchanges were kept.
type Cassette struct {
	// Path is the model cassette's file.
	Path string `json:"path"`
	// Mode is replay, record or fallback.
	Mode string `json:"mode"`
	// Replayed and Recorded count the model requests answered from the
	// cassette and those recorded into it.
	Replayed int `json:"replayed"`
	Recorded int `json:"recorded"`
	// Servers are the server cassettes' files, by server.
	Servers map[string]string `json:"servers,omitempty"`
}

// CacheStats counts what the response cache did during a run.
type CacheStats struct {
	Dir    string `json:"dir,omitempty"`
	Hits   int64  `json:"hits"`
	Misses int64  `json:"misses"`
	// Errors are entries that could not be read or written (each counted
	// as a miss too).
	Errors int64 `json:"errors,omitempty"`
}

// EndpointStats is what one model endpoint went through during a run.
type EndpointStats struct {
	// Endpoint is the base URL and the model.
	Endpoint  string `json:"endpoint"`
	Requests  int64  `json:"requests"`
	Throttled int64  `json:"throttled,omitempty"`
	// WaitedMS is the time requests spent waiting for the endpoint's
	// limits or a 429's pause, summed.
	WaitedMS float64 `json:"waited_ms,omitempty"`
}

// RoundCost rounds a cost to a billionth, so that sums of prices print
// as the figures they are (0.0001362, not 0.00013619999999999998).
func RoundCost(x float64) float64 { return math.Round(x*1e9) / 1e9 }

// CutReasoning cuts a reasoning text to MaxReasoningBytes, on a rune
// boundary, saying so.
func CutReasoning(s string) string {
	if len(s) <= MaxReasoningBytes {
		return s
	}
	cut := MaxReasoningBytes
	for cut > 0 && !runeStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n[cut: reasoning over 8 KiB]"
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }

// Add returns the sum of c and o (a merged run's, over its shards);
// either may be nil.
func (c *CacheStats) Add(o *CacheStats) *CacheStats {
	if c == nil && o == nil {
		return nil
	}
	var sum CacheStats
	for _, x := range []*CacheStats{c, o} {
		if x != nil {
			sum.Dir = cmp.Or(sum.Dir, x.Dir)
			sum.Hits += x.Hits
			sum.Misses += x.Misses
			sum.Errors += x.Errors
		}
	}
	return &sum
}

// AddEndpoints returns the endpoints of a and b, summed by endpoint, in
// the order first seen.
func AddEndpoints(a, b []EndpointStats) []EndpointStats {
	out := slices.Clone(a)
	for _, e := range b {
		i := slices.IndexFunc(out, func(x EndpointStats) bool { return x.Endpoint == e.Endpoint })
		if i < 0 {
			out = append(out, e)
			continue
		}
		out[i].Requests += e.Requests
		out[i].Throttled += e.Throttled
		out[i].WaitedMS = RoundMS(out[i].WaitedMS + e.WaitedMS)
	}
	return out
}
