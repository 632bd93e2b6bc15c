package report

// Checks are what a run is judged by besides its own cases: gates, and a
// comparison with a baseline run. [Check] assembles them once, for every
// command that judges a run (run, report, gate), and [Checks.Verdict]
// merges their verdicts into the one that decides the exit code.
type Checks struct {
	// Gates are the gates' results; empty when there were no gates.
	Gates []GateResult
	// Comparison is the run compared with the baseline, with the default
	// thresholds; nil without a baseline.
	Comparison *Comparison
}

// Check evaluates gates on s (resolving "baseline" in them with base) and
// compares s with base, when there is one.
func Check(s *Summary, gates []Gate, base *Summary) Checks {
	var c Checks
	if len(gates) > 0 {
		c.Gates = EvaluateGates(s, gates, base)
	}
	if base != nil {
		c.Comparison = Compare(base, s, DefaultThresholds())
	}
	return c
}

// Verdict merges the gates' verdict and the comparison's: regressed when a
// gate failed or the run regressed from the baseline, with the reasons and
// notes of both, gates first.
func (c Checks) Verdict() Verdict {
	v := GateVerdict(c.Gates)
	if c.Comparison != nil {
		cv := c.Comparison.Verdict
		v.Regressed = v.Regressed || cv.Regressed
		v.Reasons = append(v.Reasons, cv.Reasons...)
		v.Notes = append(v.Notes, cv.Notes...)
	}
	return v
}

// Options are the checks as the Markdown and HTML reports show them.
func (c Checks) Options() Options {
	return Options{Gates: c.Gates, Comparison: c.Comparison}
}
