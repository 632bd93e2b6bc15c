package host

import (
	"errors"

	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/record"
)

// answered fills what a model request's event learns from the answer:
// where it came from, its cost and endpoint figures, and its outcome,
// which it returns: record.OutcomeModelError for the model's own
// malformed output, record.OutcomeTruncated for an answer the endpoint
// cut short (finish_reason length or content_filter), "" otherwise. A
// response that carries the endpoint's latency is timed by it, not by the
// wall clock around Next (which also holds the waits for the run's
// endpoint limits): so a replayed answer has the ms it was recorded with,
// and a run replayed from its cassettes has the figures of the run that
// recorded them.
func answered(mr *record.ModelRequest, resp model.Response, err error) string {
	if resp.Latency > 0 {
		mr.MS = record.MS(resp.Latency)
	}
	mr.Replayed = string(resp.Replayed)
	mr.CachedPromptTokens = resp.CachedPromptTokens
	mr.Cost = record.RoundCost(resp.Cost)
	mr.FinishReason = resp.FinishReason
	mr.Reasoning = record.CutReasoning(resp.Reasoning)
	mr.Attempts, mr.WaitedMS = resp.Attempts, record.MS(resp.Waited)
	var moe *model.ModelOutputError
	switch {
	case errors.As(err, &moe):
		mr.Outcome = record.OutcomeModelError
	case err == nil && record.TruncatedBy(resp.FinishReason):
		mr.Outcome = record.OutcomeTruncated
	}
	return mr.Outcome
}
