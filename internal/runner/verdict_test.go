package runner

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/model/replay"
	"github.com/hosteval/hosteval/internal/record"
)

// TestDecide: the verdict of a case from what stopped it and its
// expectations, in the order runCase makes it.
func TestDecide(t *testing.T) {
	held := record.Expectation{Name: "tool cmdb__get_asset outcome=ok", Passed: true}
	broke := record.Expectation{Name: "answer contains Camille", Passed: false}
	miss := &replay.Miss{Path: "c.json", Request: 2}
	endpoint := &model.EndpointError{Model: "m", Class: model.FailureTransport, Message: "connection refused", Attempts: 3}
	tests := []struct {
		name      string
		infra     error
		exps      []record.Expectation
		want      verdict
		evaluated bool
	}{
		{name: "every expectation held", exps: []record.Expectation{held, held},
			want: verdict{status: record.StatusPass, expectations: []record.Expectation{held, held}}, evaluated: true},
		{name: "no expectations pass", exps: []record.Expectation{},
			want: verdict{status: record.StatusPass, expectations: []record.Expectation{}}, evaluated: true},
		{name: "one broke", exps: []record.Expectation{held, broke},
			want: verdict{status: record.StatusFail, expectations: []record.Expectation{held, broke}}, evaluated: true},
		{name: "an error wins over a failed expectation", infra: errors.New("server cmdb did not start: exit status 1"), exps: []record.Expectation{broke},
			want: verdict{status: record.StatusError, err: "server cmdb did not start: exit status 1", expectations: []record.Expectation{broke}}, evaluated: true},
		{name: "an endpoint failure has its class", infra: fmt.Errorf("model: %w", endpoint), exps: []record.Expectation{held},
			want: verdict{status: record.StatusError, err: "model: openai:m: connection refused (3 attempts)", class: "transport", expectations: []record.Expectation{held}}, evaluated: true},
		{name: "a replay miss fails unjudged", infra: fmt.Errorf("turn 1: %w", miss), exps: []record.Expectation{held},
			want: verdict{status: record.StatusFail, err: "cassette c.json: request 2 is not recorded (the cassette is empty); record it again with -record", class: record.ErrorReplayMiss}},
		{name: "no cassette fails unjudged", infra: &missingCassette{err: errors.New("no cassette x.json; record it with -record")}, exps: []record.Expectation{held},
			want: verdict{status: record.StatusFail, err: "no cassette x.json; record it with -record", class: record.ErrorReplayMiss}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evaluated := false
			got := decide(tt.infra, func() []record.Expectation {
				evaluated = true
				return tt.exps
			})
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(verdict{})); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
			if evaluated != tt.evaluated {
				t.Errorf("expectations evaluated: %v, want %v", evaluated, tt.evaluated)
			}
		})
	}
}

// TestFirstCause: what closing a case's wire says replaces what stopped
// its conversation only when it is a replay miss, or when nothing did.
func TestFirstCause(t *testing.T) {
	turn := errors.New("the case did not finish within its timeout of 1s")
	closing := errors.New("write cassette: disk full")
	miss := &missingCassette{err: errors.New("no cassette for server cmdb")}
	tests := []struct {
		name          string
		infra, closed error
		want          error
	}{
		{"nothing went wrong", nil, nil, nil},
		{"the conversation's error stays", turn, nil, turn},
		{"closing failed, nothing else", nil, closing, closing},
		{"the earlier error wins", turn, closing, turn},
		{"a miss on closing is the first cause", turn, miss, miss},
	}
	for _, tt := range tests {
		if got := firstCause(tt.infra, tt.closed); got != tt.want {
			t.Errorf("%s: firstCause = %v, want %v", tt.name, got, tt.want)
		}
	}
}
