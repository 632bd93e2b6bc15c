package host

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hosteval/hosteval/internal/record"
)

// TestAsksRecorded checks that a call's event keeps each question put to
// the person and the answer that went back, with the prepared answer that
// gave it or why the host said no, over both eras of elicitation; and the
// arguments the model proposed when nothing was sent.
func TestAsksRecorded(t *testing.T) {
	t.Parallel()
	const question = "Open an incident ticket for jump-prod-02?\n\nbrute force"
	approvals := CannedApprovals{Tools: []string{"cmdb__*", "tickets__open_ticket"}, Rules: []string{"s.yaml:11"}}
	approved := record.Ask{Kind: record.AskApproval, Server: "tickets", Action: record.ApprovalApproved, Rule: "approvals[1]"}
	tests := []struct {
		name     string
		protocol Mode
		answers  []CannedAnswer
		want     []record.Ask
	}{{
		name:    "declined by a canned answer",
		answers: []CannedAnswer{{Server: "tickets", Message: regexp.MustCompile("(?i)delete"), Action: ActionAccept}, {Key: "confirm", Action: ActionDecline, Rule: "s.yaml:9"}},
		want: []record.Ask{approved, {Kind: record.AskElicitation, Round: 1, Server: "tickets", Key: "confirm", Mode: "form",
			Message: question, Fields: []string{"priority"}, Action: ActionDecline, Rule: "s.yaml:9"}},
	}, {
		name: "no canned answer",
		want: []record.Ask{approved, {Kind: record.AskElicitation, Round: 1, Server: "tickets", Key: "confirm", Mode: "form",
			Message: question, Fields: []string{"priority"}, Action: ActionDecline, Reason: reasonNoCanned}},
	}, {
		name:     "accepted over 2025-11-25, by an answer without a rule",
		protocol: ModeLegacy,
		answers:  []CannedAnswer{{Action: ActionAccept, Content: map[string]any{"priority": "P2"}}},
		want: []record.Ask{approved, {Kind: record.AskElicitation, Round: 1, Server: "tickets", Mode: "form",
			Message: question, Fields: []string{"priority"}, Action: ActionAccept, Content: map[string]any{"priority": "P2"}, Rule: "elicitation[0]"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := startHost(t, Options{Servers: []ServerSpec{fixture("cmdb"), fixture("tickets")}, Protocol: tt.protocol,
				Approver: approvals, Elicitor: Canned{Answers: tt.answers}})
			_, ev := call(t, h, "tickets__open_ticket", `{"host": "jump-prod-02", "summary": "brute force"}`)
			if diff := cmp.Diff(tt.want, ev.Asks, cmpopts.IgnoreFields(record.Ask{}, "PersonMS")); diff != "" {
				t.Errorf("asks (-want +got):\n%s", diff)
			}
			if ev.Proposed != "" {
				t.Errorf("proposed = %q for a call that was sent (its arguments are in arguments)", ev.Proposed)
			}
		})
	}

	t.Run("denied and unknown", func(t *testing.T) {
		t.Parallel()
		h := startHost(t, Options{Servers: []ServerSpec{fixture("tickets")}})
		_, ev := call(t, h, "tickets__open_ticket", `{"host": "jump-prod-02"}`)
		want := []record.Ask{{Kind: record.AskApproval, Server: "tickets", Action: record.ApprovalDenied}}
		if diff := cmp.Diff(want, ev.Asks, cmpopts.IgnoreFields(record.Ask{}, "PersonMS")); diff != "" {
			t.Errorf("asks of a call nobody approved (-want +got):\n%s", diff)
		}
		if ev.Proposed != `{"host": "jump-prod-02"}` || ev.Arguments != nil {
			t.Errorf("a denied call: proposed %q, arguments %v; want what the model wrote, nothing sent", ev.Proposed, ev.Arguments)
		}
		_, ev = call(t, h, "tickets__close_everything", `["not", "an", "object"]`)
		if ev.Outcome != record.OutcomeUnknownTool || ev.Proposed != `["not", "an", "object"]` || len(ev.Asks) != 0 {
			t.Errorf("an unknown tool: outcome %s, proposed %q, asks %v", ev.Outcome, ev.Proposed, ev.Asks)
		}
	})
}

func TestCannedApprovalsRule(t *testing.T) {
	c := CannedApprovals{Tools: []string{"a__x", "b__*"}, Rules: []string{"f.yaml:3"}}
	for name, want := range map[string]string{"a__x": "f.yaml:3", "b__y": "approvals[1]", "c__z": ""} {
		if got := c.Rule(ApprovalRequest{Name: name}); got != want {
			t.Errorf("Rule(%s) = %q, want %q", name, got, want)
		}
	}
}
