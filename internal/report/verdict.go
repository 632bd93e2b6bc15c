package report

import "github.com/hosteval/hosteval/internal/gate"

// Judge returns opts with what a run is judged by besides its own cases:
// gates evaluated on s (resolving "baseline" in them with base), and s
// compared with base when there is one, with the default thresholds. It
// is assembled here once for every command that judges a run (run,
// report, gate); [Options.Verdict] merges the verdicts, and every layout
// shows the same [Options.Checks].
func Judge(s *Summary, gates []gate.Gate, base *Summary, opts Options) Options {
	opts.Gates, opts.Comparison = nil, nil
	if len(gates) > 0 {
		opts.Gates = EvaluateGates(s, gates, base)
	}
	if base != nil {
		opts.Comparison = Compare(base, s, DefaultThresholds())
	}
	opts.Incomplete = IncompleteRuns(s, base)
	return opts
}

// IncompleteRuns names the runs of a check that did not record every case:
// the run, and its baseline when there is one.
func IncompleteRuns(s, base *Summary) []string {
	var out []string
	if s != nil && s.Incomplete != "" {
		out = append(out, "run "+s.RunID+": "+s.Incomplete)
	}
	if base != nil && base.Incomplete != "" {
		out = append(out, "baseline "+base.RunID+": "+base.Incomplete)
	}
	return out
}

// Verdict merges the verdicts of o's checks into the one that decides the
// exit code: regressed when a gate failed or the run regressed from the
// baseline, with the reasons and notes of both, gates first.
func (o Options) Verdict() Verdict {
	var v Verdict
	for _, c := range o.Checks() {
		v.Regressed = v.Regressed || c.Regressed
		v.Reasons = append(v.Reasons, c.Reasons...)
		v.Notes = append(v.Notes, c.Notes...)
		v.Unchecked = append(v.Unchecked, c.Unchecked...)
	}
	return v
}
