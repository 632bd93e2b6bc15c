package lint

import (
	"context"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/internal/host"
)

// only is a configuration with every rule off but id.
func only(id string) Config {
	c := Config{Rules: map[string]Severity{}}
	for _, r := range rules {
		if r.ID != id {
			c.Rules[r.ID] = Off
		}
	}
	return c
}

// lintExample lints one of a rule's examples with that rule alone.
func lintExample(t *testing.T, r Rule, e Example) *Report {
	t.Helper()
	opts := Options{Config: only(r.ID), Namespace: host.Namespaced}
	opts.Config.LongTokens = e.LongTokens
	if e.Pinned != nil {
		lock, err := Pin(e.servers(true))
		if err != nil {
			t.Fatal(err)
		}
		opts.Pins, opts.PinsFile = lock, "hosteval.lock"
	}
	rep, err := Lint(context.Background(), e.servers(false), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestRuleExamples: every rule's bad example fires it, and its good example
// does not: the examples docs/lint.md shows are true.
func TestRuleExamples(t *testing.T) {
	ids := map[string]bool{}
	for _, r := range rules {
		t.Run(r.ID, func(t *testing.T) {
			if ids[r.ID] {
				t.Fatalf("rule ID %s twice", r.ID)
			}
			ids[r.ID] = true
			if r.Title == "" || r.Why == "" || r.Fix == "" || r.Group == "" || r.check == nil || r.Severity.rank() == 0 {
				t.Fatalf("rule %s lacks a title, why, fix, group, check or severity", r.ID)
			}
			bad := lintExample(t, r, r.Bad)
			if len(bad.Findings) == 0 {
				t.Errorf("the bad example does not fire %s", r.ID)
			}
			for _, f := range bad.Findings {
				if f.Rule != r.ID || f.Severity != r.Severity || f.Message == "" || f.Fix != r.Fix || f.Server == "" {
					t.Errorf("finding %+v: want rule %s at %s with a message and the fix", f, r.ID, r.Severity)
				}
				t.Logf("bad: %s: %s %q", f.Where(), f.Message, f.Text)
			}
			if !bad.Failed && r.Severity == Error {
				t.Errorf("an error finding does not fail the lint")
			}
			good := lintExample(t, r, r.Good)
			for _, f := range good.Findings {
				t.Errorf("the good example fires %s: %s: %s", r.ID, f.Where(), f.Message)
			}
		})
	}
}

// TestRuleGroupsInOrder: the table lists the groups together, in the order
// docs/lint.md shows them.
func TestRuleGroupsInOrder(t *testing.T) {
	order := []string{GroupHidden, GroupDirective, GroupShadow, GroupContract, GroupAmbiguity, GroupCost, GroupPins}
	at := 0
	for _, r := range rules {
		for at < len(order) && order[at] != r.Group {
			at++
		}
		if at == len(order) {
			t.Fatalf("rule %s of group %q is out of order", r.ID, r.Group)
		}
	}
	for _, r := range rules {
		if strings.ToLower(r.ID) != r.ID || strings.ContainsAny(r.ID, " _") {
			t.Errorf("rule ID %q: want lowercase words joined by -", r.ID)
		}
	}
}
