package view

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/report"
)

// viewRun is a run of four cases of two scenarios: a#0 passes, a#1 fails
// two of its three expectations after a call timed out, b/terse#0 could
// not run, and
// b/terse#1 passes with Camille in its answer.
func viewRun() *snapshot {
	calls := func(outcomes ...string) []record.Call {
		var cs []record.Call
		for _, o := range outcomes {
			cs = append(cs, record.Call{Name: "cmdb__get_asset", Outcome: o})
		}
		return cs
	}
	recs := []record.Record{
		{Schema: 1, CaseID: "a#0", Index: 1, Scenario: "a", Model: "scripted", Status: record.StatusPass, Calls: calls("ok", "ok")},
		{Schema: 1, CaseID: "a#1", Index: 2, Scenario: "a", Model: "scripted", Repeat: 1, Status: record.StatusFail, Calls: calls("ok", "timeout"),
			Turns: []record.Turn{{Question: "who owns jump-prod-02?", Answer: "nobody"}},
			Expectations: []record.Expectation{
				{Name: "answer contains Camille", Detail: `got "nobody"`},
				{Name: "unknown_tools=0", Passed: true},
				{Name: "tool cmdb__get_asset outcome=ok", Detail: "outcome=timeout"},
			}},
		{Schema: 1, CaseID: "b/terse#0", Index: 3, Scenario: "b", Variant: "terse", Model: "scripted", Status: record.StatusError,
			Error: "server cmdb did not start: exit status 1"},
		{Schema: 1, CaseID: "b/terse#1", Index: 4, Scenario: "b", Variant: "terse", Model: "scripted", Repeat: 1, Status: record.StatusPass, Calls: calls("ok"),
			Turns: []record.Turn{{Question: "who owns jump-prod-02?", Answer: "Camille Michel."}}},
	}
	return &snapshot{key: "k", records: recs, summary: report.Aggregate(&record.Run{Dir: "k", Records: recs})}
}

// TestRunView: the run page's model from records, for each filter of the
// cases table, without HTTP.
func TestRunView(t *testing.T) {
	// Why is every failed expectation, with what was found, not only
	// the first (joined here with " | ").
	type row struct{ CaseID, Status, Why, Outcomes string }
	all := []row{
		{"b/terse#0", record.StatusError, "server cmdb did not start: exit status 1", ""},
		{"a#1", record.StatusFail, `answer contains Camille: got "nobody" | tool cmdb__get_asset outcome=ok: outcome=timeout`, "timeout=1"},
		{"a#0", record.StatusPass, "", ""},
		{"b/terse#1", record.StatusPass, "", ""},
	}
	tests := []struct {
		name     string
		f        filter
		want     []row
		wantPage int
		hasWhy   bool
	}{
		{name: "all, those that did not pass first", f: filter{Page: 1}, want: all, wantPage: 1, hasWhy: true},
		{name: "did not pass", f: filter{Status: "failed", Page: 1}, want: all[:2], wantPage: 1, hasWhy: true},
		{name: "passed", f: filter{Status: record.StatusPass, Page: 1}, want: all[2:], wantPage: 1},
		{name: "errored", f: filter{Status: record.StatusError, Page: 1}, want: all[:1], wantPage: 1, hasWhy: true},
		{name: "a scenario", f: filter{Scenario: "b", Page: 1}, want: []row{all[0], all[3]}, wantPage: 1, hasWhy: true},
		{name: "a variant", f: filter{Variant: "terse", Page: 1}, want: []row{all[0], all[3]}, wantPage: 1, hasWhy: true},
		{name: "a model no case ran", f: filter{Model: "openai:gpt-oss-120b", Page: 1}, want: nil, wantPage: 1},
		{name: "an outcome", f: filter{Outcome: "timeout", Page: 1}, want: all[1:2], wantPage: 1, hasWhy: true},
		// A failed expectation's name and an answer are searched; a
		// passed expectation's would not be.
		{name: "text, any case", f: filter{Q: "camille", Page: 1}, want: []row{all[1], all[3]}, wantPage: 1, hasWhy: true},
		{name: "a page past the last is the last", f: filter{Page: 7}, want: all, wantPage: 1, hasWhy: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := runView(viewRun(), tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var got []row
			for _, c := range data.Cases {
				r := row{CaseID: c.CaseID, Status: c.Status, Why: strings.Join(c.Why, " | ")}
				for _, o := range c.Outcomes {
					r.Outcomes += fmt.Sprintf("%s=%d", o.Outcome, o.N)
				}
				got = append(got, r)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("cases (-want +got):\n%s", diff)
			}
			if data.Total != 4 || data.Matched != len(tt.want) || data.Page != tt.wantPage || data.Pages != 1 || data.HasWhy != tt.hasWhy {
				t.Errorf("total %d, matched %d, page %d of %d, has why %v; want 4, %d, %d of 1, %v",
					data.Total, data.Matched, data.Page, data.Pages, data.HasWhy, len(tt.want), tt.wantPage, tt.hasWhy)
			}
			if data.PrevURL != "" || data.NextURL != "" || data.ClearURL != "/runs/k/#cases" {
				t.Errorf("prev %q, next %q, clear %q; want none, none, /runs/k/#cases", data.PrevURL, data.NextURL, data.ClearURL)
			}
		})
	}
}

// TestRunViewChoices: the filter's choices are the run's scenarios,
// models and variants (a case without a variant adds none), the current
// one selected.
func TestRunViewChoices(t *testing.T) {
	data, err := runView(viewRun(), filter{Scenario: "b", Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]choice{
		"scenarios": {{"", "all", false}, {"a", "a", false}, {"b", "b", true}},
		"models":    {{"", "all", true}, {"scripted", "scripted", false}},
		"variants":  {{"", "all", true}, {"terse", "terse", false}},
	}
	got := map[string][]choice{"scenarios": data.Scenarios, "models": data.Models, "variants": data.Variants}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("choices (-want +got):\n%s", diff)
	}
	if data.State != "incomplete" || data.GateVerdict != nil || data.Gates != "" {
		t.Errorf("state %q, gate verdict %v, gates %q; want incomplete and no gates", data.State, data.GateVerdict, data.Gates)
	}
}

// TestRunViewPages: 101 cases are two pages, the second of one case, each
// linking to the other with the filter kept.
func TestRunViewPages(t *testing.T) {
	var recs []record.Record
	for i := range 101 {
		recs = append(recs, record.Record{Schema: 1, CaseID: fmt.Sprintf("a#%d", i), Index: i + 1, Scenario: "a", Model: "scripted",
			Repeat: i, Status: record.StatusPass})
	}
	snap := &snapshot{key: "k", records: recs, summary: report.Aggregate(&record.Run{Dir: "k", Records: recs})}
	tests := []struct {
		f                  filter
		n, from, to        int
		prevURL, nextURL   string
		firstN, matchedAll int
	}{
		{f: filter{Page: 1}, n: 100, from: 1, to: 100, nextURL: "/runs/k/?page=2#cases", firstN: 1, matchedAll: 101},
		{f: filter{Page: 2}, n: 1, from: 101, to: 101, prevURL: "/runs/k/#cases", firstN: 101, matchedAll: 101},
		{f: filter{Scenario: "a", Page: 2}, n: 1, from: 101, to: 101, prevURL: "/runs/k/?scenario=a#cases", firstN: 101, matchedAll: 101},
	}
	for _, tt := range tests {
		data, err := runView(snap, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		if len(data.Cases) != tt.n || data.From != tt.from || data.To != tt.to || data.Pages != 2 || data.Matched != tt.matchedAll {
			t.Errorf("%+v: %d cases, %d-%d, %d pages, %d matched; want %d, %d-%d, 2, %d",
				tt.f, len(data.Cases), data.From, data.To, data.Pages, data.Matched, tt.n, tt.from, tt.to, tt.matchedAll)
			continue
		}
		if data.PrevURL != tt.prevURL || data.NextURL != tt.nextURL || data.Cases[0].N != tt.firstN {
			t.Errorf("%+v: prev %q, next %q, first case %d; want %q, %q, %d", tt.f, data.PrevURL, data.NextURL, data.Cases[0].N, tt.prevURL, tt.nextURL, tt.firstN)
		}
	}
}
