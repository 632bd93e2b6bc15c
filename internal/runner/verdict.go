package runner

import "github.com/hosteval/hosteval/internal/record"

// verdict is how a case ended: its status, the error that stopped it and
// that error's class, and its expectations (nil when none were evaluated).
type verdict struct {
	status, err, class string
	expectations       []record.Expectation
}

// decide makes a case's verdict from what stopped it, infra (nil when
// nothing did), and its expectations, which evaluate gives:
//
//   - a conversation that left its recording (a request the cassette
//     lacks, or no cassette) fails with a replay miss, and its
//     expectations are not evaluated: what the model would have done is
//     unknown;
//   - otherwise the expectations are evaluated, also after an error, so
//     that the record shows what held; an error makes the status error,
//     with the error's class when an endpoint failed;
//   - otherwise one failed expectation makes the status fail, and none
//     pass.
func decide(infra error, evaluate func() []record.Expectation) verdict {
	if text, left := leftCassette(infra); left {
		return verdict{status: record.StatusFail, err: text, class: record.ErrorReplayMiss}
	}
	v := verdict{status: record.StatusPass, expectations: evaluate()}
	if infra != nil {
		v.status, v.err, v.class = record.StatusError, infra.Error(), errorClass(infra)
		return v
	}
	for _, e := range v.expectations {
		if !e.Passed {
			v.status = record.StatusFail
		}
	}
	return v
}

// firstCause is the error that ended a case, given infra, what stopped its
// conversation, and closed, what closing its wire said: a request a
// cassette lacks is the first cause whatever else happened (the rest
// follows from it); otherwise the error that came first wins.
func firstCause(infra, closed error) error {
	if _, left := leftCassette(closed); left || (closed != nil && infra == nil) {
		return closed
	}
	return infra
}
