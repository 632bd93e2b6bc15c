package record

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCounts(t *testing.T) {
	rec := &Record{
		Turns: []Turn{{Steps: 4}, {Steps: 3, Stopped: true}},
		Calls: []Call{
			{Outcome: OutcomeOK, AskedUser: true, Elicitations: 2, Declined: 1, ResultBytes: 100},
			{Outcome: OutcomeUnknownTool},
			{Outcome: OutcomeBadArguments},
			{Outcome: OutcomeDenied, AskedUser: true},
			{Outcome: OutcomeToolError, ResultBytes: 40},
			{Outcome: OutcomeTimeout},
			{Outcome: OutcomeError, ErrorCode: Code(-32602)},
			{Outcome: OutcomeError, ErrorCode: Code(-32602)},
			{Outcome: OutcomeError, ErrorCode: Code(-32603), Clipped: true, ResultBytes: 4000},
			{Outcome: OutcomeError},
		},
		ModelRequests: make([]ModelRequest, 5),
		Servers:       []Server{{VersionFailure: true}, {Restarted: true}, {}},
	}
	want := Counts{
		Calls: 10, Steps: 7, ModelRequests: 5, Turns: 2, StoppedTurns: 1,
		UnknownTools: 1, BadArguments: 1, Denied: 1, ToolErrors: 1, Timeouts: 1,
		ProtocolErrors: 3, ErrorCodes: map[int]int{-32602: 2, -32603: 1}, OtherErrors: 1,
		VersionFailures: 1, Restarts: 1,
		AskedUser: 2, Elicitations: 2, Declined: 1, Clipped: 1,
		ResultBytes: 4140, MaxResultBytes: 4000,
	}
	if diff := cmp.Diff(want, rec.Counts()); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Counts{}, (&Record{}).Counts()); diff != "" {
		t.Errorf("counts of an empty record (-want +got):\n%s", diff)
	}
}

func TestSentNothing(t *testing.T) {
	var sent, nothing []string
	for _, o := range Outcomes() {
		if SentNothing(o) {
			nothing = append(nothing, o)
		} else {
			sent = append(sent, o)
		}
	}
	if diff := cmp.Diff([]string{OutcomeOK, OutcomeToolError, OutcomeError, OutcomeTimeout}, sent); diff != "" {
		t.Errorf("outcomes that sent something (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{OutcomeUnknownTool, OutcomeBadArguments, OutcomeDenied}, nothing); diff != "" {
		t.Errorf("outcomes that sent nothing (-want +got):\n%s", diff)
	}
}

func TestMS(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want float64
	}{
		{0, 0},
		{1234567 * time.Nanosecond, 1.2},
		{1250 * time.Microsecond, 1.3},
		{10 * time.Second, 10000},
	}
	for _, tt := range tests {
		if got := MS(tt.d); got != tt.want {
			t.Errorf("MS(%v) = %v, want %v", tt.d, got, tt.want)
		}
	}
	if got := RoundMS(2.04); got != 2 {
		t.Errorf("RoundMS(2.04) = %v, want 2", got)
	}
}
