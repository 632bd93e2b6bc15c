package record

import "time"

// Outcomes lists every outcome of a tool call, in the order reports show
// them. It returns a fresh slice.
func Outcomes() []string {
	return []string{OutcomeOK, OutcomeToolError, OutcomeError, OutcomeTimeout, OutcomeUnknownTool, OutcomeBadArguments, OutcomeDenied}
}

// SentNothing reports whether an outcome means the host rejected the call
// before sending it: such calls take no server time, so they are left out
// of latency figures.
func SentNothing(outcome string) bool {
	switch outcome {
	case OutcomeUnknownTool, OutcomeBadArguments, OutcomeDenied:
		return true
	}
	return false
}

// ProtocolError reports whether the server answered the call with a
// JSON-RPC error (a code, 0 included) or an answer the protocol makes
// invalid; other errors are transport failures, dead servers or too many
// rounds.
func (c *Call) ProtocolError() bool { return c.Outcome == OutcomeError && c.ErrorCode != nil }

// Counts are the counted figures of one case. Expectations ("unknown_tools:
// 0") and reports (a case's figures, a group's sums) both read them, so that
// a count means the same thing everywhere.
type Counts struct {
	// Calls counts the tool calls recorded; Steps sums the turns' steps
	// (the calls the model proposed). They differ only for a case cut
	// short mid-turn.
	Calls int
	Steps int
	// ModelRequests counts requests to the model; Turns the user turns,
	// StoppedTurns those ended by max_steps.
	ModelRequests int
	Turns         int
	StoppedTurns  int
	// ModelErrors counts model requests answered by the model's own
	// malformed output (OutcomeModelError); Replayed those answered from
	// a cassette, Cached those answered from the response cache.
	ModelErrors int
	Replayed    int
	Cached      int
	// Truncated counts model requests whose answer the endpoint cut short
	// (OutcomeTruncated).
	Truncated int

	// One count per outcome but ok, which is what is left.
	UnknownTools int
	BadArguments int
	Denied       int
	ToolErrors   int
	Timeouts     int
	// ProtocolErrors counts calls answered with a JSON-RPC error;
	// ErrorCodes counts them by code (nil when there are none).
	// OtherErrors are calls with outcome error and no code.
	ProtocolErrors int
	ErrorCodes     map[int]int
	OtherErrors    int

	// VersionFailures counts servers with no common revision; Restarts
	// those auto mode restarted as legacy.
	VersionFailures int
	Restarts        int
	// Reinitialized counts the new sessions the host started because a
	// server had ended its session.
	Reinitialized int

	// AskedUser counts calls that put a question to the person;
	// Elicitations the questions, Declined those declined or cancelled.
	AskedUser    int
	Elicitations int
	Declined     int
	// Clipped counts results cut to the result budget.
	Clipped int
	// ResultBytes sums the results given to the model; MaxResultBytes is
	// the largest.
	ResultBytes    int
	MaxResultBytes int
}

// Counts counts the record's calls, turns, requests and servers.
func (r *Record) Counts() Counts {
	n := Counts{Calls: len(r.Calls), ModelRequests: len(r.ModelRequests), Turns: len(r.Turns)}
	for _, t := range r.Turns {
		n.Steps += t.Steps
		if t.Stopped {
			n.StoppedTurns++
		}
	}
	for i := range r.ModelRequests {
		mr := &r.ModelRequests[i]
		switch mr.Outcome {
		case OutcomeModelError:
			n.ModelErrors++
		case OutcomeTruncated:
			n.Truncated++
		}
		switch mr.Replayed {
		case ReplayedCassette:
			n.Replayed++
		case ReplayedCache:
			n.Cached++
		}
	}
	for i := range r.Calls {
		c := &r.Calls[i]
		switch c.Outcome {
		case OutcomeUnknownTool:
			n.UnknownTools++
		case OutcomeBadArguments:
			n.BadArguments++
		case OutcomeDenied:
			n.Denied++
		case OutcomeToolError:
			n.ToolErrors++
		case OutcomeTimeout:
			n.Timeouts++
		case OutcomeError:
			if !c.ProtocolError() {
				n.OtherErrors++
				break
			}
			n.ProtocolErrors++
			if n.ErrorCodes == nil {
				n.ErrorCodes = map[int]int{}
			}
			n.ErrorCodes[*c.ErrorCode]++
		}
		if c.AskedUser {
			n.AskedUser++
		}
		n.Elicitations += c.Elicitations
		n.Declined += c.Declined
		if c.Clipped {
			n.Clipped++
		}
		n.ResultBytes += c.ResultBytes
		n.MaxResultBytes = max(n.MaxResultBytes, c.ResultBytes)
	}
	for _, s := range r.Servers {
		if s.VersionFailure {
			n.VersionFailures++
		}
		if s.Restarted {
			n.Restarts++
		}
		n.Reinitialized += s.Reinitialized
	}
	return n
}

// MS is d in milliseconds rounded to a tenth: the unit and precision of
// every duration in a record.
func MS(d time.Duration) float64 { return RoundMS(float64(d.Microseconds()) / 1000) }

// RoundMS rounds a number of milliseconds to a tenth.
func RoundMS(ms float64) float64 { return float64(int64(ms*10+0.5)) / 10 }
