package model

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/record"
)

// lexicalTools is a small catalog as the host offers it.
func lexicalTools() []Tool {
	return []Tool{
		{Name: "cmdb__get_asset", Description: "[cmdb] Look up who owns one host, by its exact hostname.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"hostname":{"type":"string","description":"The exact hostname."}}}`)},
		{Name: "cmdb__find_assets", Description: "[cmdb] List hosts of a service and environment.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"env":{"type":"string","enum":["prod","staging","dev"]},"limit":{"type":"integer","pattern":"^[0-9]+$"}}}`)},
		{Name: "support__get_ticket", Description: "[support] Get one support ticket by its ID.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"ticket_id":{"type":"string","description":"A ticket ID.","pattern":"^T-\\d{5}$"}}}`)},
	}
}

func lexicalRequest(question string, tools []Tool) Request {
	data, _ := json.Marshal(tools)
	return Request{Messages: []Message{{Role: RoleUser, Content: question}}, Tools: tools, ToolsJSON: data}
}

func TestLexicalRouter(t *testing.T) {
	m, err := New(Config{Lexical: &LexicalConfig{MinScore: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "lexical" {
		t.Errorf("name = %q", m.Name())
	}
	tests := []struct {
		question string
		call     string // name and arguments, "" for none
		first    string // the best-ranked tool
	}{
		{"who owns the host jump-prod-02?", `cmdb__get_asset {}`, "cmdb__get_asset"},
		{"list the prod hosts of a service, 20 of them", `cmdb__find_assets {"env":"prod","limit":20}`, "cmdb__find_assets"},
		{"what does support ticket T-30002 say?", `support__get_ticket {"ticket_id":"T-30002"}`, "support__get_ticket"},
		{"what is the weather tomorrow?", "", ""},
	}
	for _, tt := range tests {
		resp, err := m.Next(context.Background(), lexicalRequest(tt.question, lexicalTools()))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if len(resp.ToolCalls) == 1 {
			got = resp.ToolCalls[0].Name + " " + resp.ToolCalls[0].Arguments
		}
		if got != tt.call {
			t.Errorf("%q: call %q (%s), want %q", tt.question, got, resp.Text, tt.call)
		}
		if tt.first == "" {
			if len(resp.Ranks) != 0 || resp.Text != "(lexical router: no tool: no tool shares a term with the question)" {
				t.Errorf("%q: ranks %v, text %q; want none", tt.question, resp.Ranks, resp.Text)
			}
			continue
		}
		if len(resp.Ranks) == 0 || resp.Ranks[0].Tool != tt.first {
			t.Errorf("%q: ranks %v, want %s first", tt.question, resp.Ranks, tt.first)
		}
	}
	// After a result, the router answers with it.
	resp, _ := m.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "q"}, {Role: RoleTool, Content: "the result"}}})
	if resp.Text != "the result" || len(resp.ToolCalls) != 0 {
		t.Errorf("after a result: %+v", resp)
	}
}

// TestLexicalRanksByHand: the ranks a record keeps, by the formula. The
// documents: get_thing = get, thing, one (3 terms); put_thing = put,
// thing (2); avgdl 2.5. "get a thing": get is in one document (idf
// ln(1 + 1.5/1.5) = ln 2 = 0.693147), thing in both (idf ln(1 + 0.5/2.5)
// = ln 1.2 = 0.182322).
func TestLexicalRanksByHand(t *testing.T) {
	tools := []Tool{{Name: "get_thing", Description: "one"}, {Name: "put_thing"}}
	m, _ := New(Config{Lexical: &LexicalConfig{MinScore: 1}})
	resp, err := m.Next(context.Background(), lexicalRequest("get a thing", tools))
	if err != nil {
		t.Fatal(err)
	}
	// get_thing, |d| = 3, norm = 0.25 + 0.75·3/2.5 = 1.15:
	//   get   0.693147·2.2/(1 + 1.2·1.15) = 0.640724
	//   thing 0.182322·2.2/2.38           = 0.168533   sum 0.809257
	// put_thing, |d| = 2, norm = 0.85: thing 0.182322·2.2/2.02 = 0.198568
	want := []record.Rank{{Tool: "get_thing", Score: 0.809257}, {Tool: "put_thing", Score: 0.198568}}
	if diff := cmp.Diff(want, resp.Ranks); diff != "" {
		t.Errorf("ranks (-want +got):\n%s", diff)
	}
	// Under min_score 1, nothing is called, and the text says why.
	if len(resp.ToolCalls) != 0 || resp.Text != "(lexical router: no tool: the best tool, get_thing, scored 0.809, under 1)" {
		t.Errorf("response %+v, want no call", resp)
	}
}

// TestLexicalIndexOncePerTable: a router indexes a tools array once,
// however many conversations ask over it; another array is another index.
func TestLexicalIndexOncePerTable(t *testing.T) {
	tmpl := NewTemplate(Config{Lexical: &LexicalConfig{}})
	var routers []*Lexical
	for range 3 {
		m, err := tmpl.New()
		if err != nil {
			t.Fatal(err)
		}
		m.Next(context.Background(), lexicalRequest("who owns a host?", lexicalTools()))
		routers = append(routers, m.(*Lexical))
	}
	if routers[0] != routers[1] || routers[1] != routers[2] || len(routers[0].indexes) != 1 {
		t.Fatalf("%d indexes, want one router with one", len(routers[0].indexes))
	}
	// Three arrays of the same bytes: one index, found by where each is.
	req := lexicalRequest("who owns a host?", lexicalTools())
	routers[0].Next(context.Background(), req)
	ix := routers[0].seen[&req.ToolsJSON[0]].ix
	if len(routers[0].seen) != 4 || ix == nil || ix != routers[0].index(req) {
		t.Errorf("%d arrays seen, want 4, each to the one index", len(routers[0].seen))
	}
	other := lexicalTools()
	other[0].Description = "[cmdb] Another description."
	routers[0].Next(context.Background(), lexicalRequest("who owns a host?", other))
	if len(routers[0].indexes) != 2 {
		t.Errorf("%d indexes after another table, want 2", len(routers[0].indexes))
	}
}

func TestLexicalConfigRefused(t *testing.T) {
	if _, err := New(Config{Lexical: &LexicalConfig{MinScore: -1}}); err == nil || err.Error() != "lexical.min_score: want 0 or more, got -1" {
		t.Errorf("error = %v", err)
	}
}
