package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
)

// ModelFigures are the figures of a case's real models, summed over a
// group and a run: the model's own malformed output, requests answered
// without the endpoint, and cost.
type ModelFigures struct {
	// ModelErrors counts model requests answered by the model's malformed
	// output (record.OutcomeModelError).
	ModelErrors int `json:"model_errors"`
	// Truncated counts model requests whose answer the endpoint cut short
	// (record.OutcomeTruncated).
	Truncated int `json:"truncated,omitempty"`
	// Replayed counts the requests (the model's and the judges')
	// answered from a cassette; Cached those answered from the response
	// cache. Their usage, cost and ms are as recorded.
	Replayed int `json:"replayed_requests"`
	Cached   int `json:"cached_requests"`
	// Cost is what the requests cost at their models' prices (0 without
	// prices).
	Cost float64 `json:"cost"`
	// Unpriced names the models that answered without a price
	// (record.CaseModels.Unpriced): Cost leaves them out.
	Unpriced []string `json:"unpriced,omitempty"`
	// Retries counts the requests (the model's and the judges') sent
	// again after a failure; WaitedMS sums the time requests waited
	// before and between their attempts (backoff, Retry-After, limits).
	Retries  int     `json:"retries,omitempty"`
	WaitedMS float64 `json:"waited_ms,omitempty"`
}

// none reports whether f holds no figure at all (a run of local models).
func (f ModelFigures) none() bool {
	return f.ModelErrors == 0 && f.Truncated == 0 && f.Replayed == 0 && f.Cached == 0 && f.Cost == 0 && len(f.Unpriced) == 0 &&
		f.Retries == 0 && f.WaitedMS == 0
}

func (f *ModelFigures) add(o ModelFigures) {
	f.ModelErrors += o.ModelErrors
	f.Truncated += o.Truncated
	f.Replayed += o.Replayed
	f.Cached += o.Cached
	f.Cost += o.Cost
	f.Retries += o.Retries
	f.WaitedMS = record.RoundMS(f.WaitedMS + o.WaitedMS)
	for _, m := range o.Unpriced {
		if !slices.Contains(f.Unpriced, m) {
			f.Unpriced = append(f.Unpriced, m)
		}
	}
}

// modelFiguresOf counts a record's model figures.
func modelFiguresOf(rec *record.Record) ModelFigures {
	n := rec.Counts()
	f := ModelFigures{ModelErrors: n.ModelErrors, Truncated: n.Truncated, Replayed: n.Replayed, Cached: n.Cached, Cost: rec.Cost, Unpriced: rec.Unpriced}
	for _, j := range rec.Judgements {
		switch j.Replayed {
		case record.ReplayedCassette:
			f.Replayed++
		case record.ReplayedCache:
			f.Cached++
		}
		f.Retries += j.Retries()
		f.WaitedMS += j.WaitedMS
	}
	for i := range rec.ModelRequests {
		mr := &rec.ModelRequests[i]
		f.Retries += mr.Retries()
		f.WaitedMS += mr.WaitedMS
	}
	f.WaitedMS = record.RoundMS(f.WaitedMS)
	if f.Cost == 0 {
		// Records written without the case's sum: the requests' own.
		for _, mr := range rec.ModelRequests {
			f.Cost += mr.Cost
		}
		for _, j := range rec.Judgements {
			f.Cost += j.Cost
		}
	}
	return f
}

// costCell is a cost in dollars (or the price table's currency), "-" when
// nothing was priced.
func costCell(x float64) Cell {
	if x == 0 {
		return textCell("-")
	}
	return fixedCost(x)
}

func fixedCost(x float64) Cell {
	c := floatCell(x)
	c.Text = fmtCost(x)
	return c
}

// fmtCost prints a cost with four decimals (costs of single requests are
// fractions of a cent), and one under 0.0001 with its first four
// significant digits, so that a small cost or gate bound never reads
// 0.0000.
func fmtCost(x float64) string {
	if x == 0 || math.Abs(x) >= 0.0001 || math.IsInf(x, 0) || math.IsNaN(x) {
		return strconv.FormatFloat(x, 'f', 4, 64)
	}
	decimals := 3 - int(math.Floor(math.Log10(math.Abs(x))))
	s := strconv.FormatFloat(x, 'f', decimals, 64)
	return strings.TrimRight(s, "0")
}

// replayedCell is how many requests were answered without the endpoint,
// "-" for none.
func replayedCell(f ModelFigures) Cell {
	switch {
	case f.Replayed+f.Cached == 0:
		return textCell("-")
	case f.Cached == 0:
		return intCell(f.Replayed)
	}
	c := intCell(f.Replayed + f.Cached)
	c.Text += fmt.Sprintf(" (%d cached)", f.Cached)
	return c
}

// modelNotes are the lines every report adds about real models when a run
// had any: requests replayed, cached, model errors, cost, the response
// cache's hits and misses, and the endpoints' throttling.
func modelNotes(s *Summary) []string {
	var notes []string
	t := s.Totals.ModelFigures
	var parts []string
	if t.Replayed > 0 {
		parts = append(parts, text.Count(t.Replayed, "model request")+" replayed from cassettes")
	}
	if t.Cached > 0 {
		parts = append(parts, fmt.Sprintf("%d answered from the response cache", t.Cached))
	}
	if t.ModelErrors > 0 {
		parts = append(parts, text.Count(t.ModelErrors, "model error")+" (malformed output)")
	}
	if t.Truncated > 0 {
		parts = append(parts, text.Count(t.Truncated, "answer")+" cut short by the endpoint (truncated)")
	}
	if t.Retries > 0 || t.WaitedMS >= 1 {
		parts = append(parts, fmt.Sprintf("%d %s, %s s waiting on the endpoints (backoff, Retry-After, limits)",
			t.Retries, oneOr(t.Retries, "retry", "retries"), strconv.FormatFloat(t.WaitedMS/1000, 'f', 1, 64)))
	}
	if t.Cost > 0 {
		parts = append(parts, "cost "+fmtCost(t.Cost))
	}
	if len(parts) > 0 {
		notes = append(notes, strings.Join(parts, "; "))
	}
	if s.Run == nil {
		return notes
	}
	if c := s.Run.Cache; c != nil {
		line := fmt.Sprintf("response cache: %d hits, %d misses", c.Hits, c.Misses)
		if c.Errors > 0 {
			line += fmt.Sprintf(", %d unreadable or unwritable entries", c.Errors)
		}
		notes = append(notes, line)
	}
	for _, e := range s.Run.Endpoints {
		if e.Throttled > 0 || e.WaitedMS > 0 {
			notes = append(notes, fmt.Sprintf("endpoint %s: %s, %d throttled (429), %s s waiting for its limits",
				e.Endpoint, text.Count(int(e.Requests), "request"), e.Throttled, strconv.FormatFloat(e.WaitedMS/1000, 'f', 1, 64)))
		}
	}
	return notes
}
