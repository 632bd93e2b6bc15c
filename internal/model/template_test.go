package model

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTemplateGivesEachConversationItsOwnScript(t *testing.T) {
	tmpl := NewTemplate(Config{Scripted: []ScriptStep{
		{Call: "cmdb__get_asset {hostname: jump-prod-02}"},
		{Answer: "Camille Michel."},
	}})
	want := []Response{
		{ToolCalls: []ToolCall{{ID: "call_1", Name: "cmdb__get_asset", Arguments: `{"hostname":"jump-prod-02"}`}}},
		{Text: "Camille Michel."},
		{Text: ScriptDone},
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			m, err := tmpl.New()
			if err != nil {
				t.Error(err)
				return
			}
			var got []Response
			for range want {
				r, err := m.Next(context.Background(), Request{})
				if err != nil {
					t.Error(err)
					return
				}
				got = append(got, r)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("conversation (-want +got):\n%s", diff)
			}
		})
	}
	wg.Wait()
}

func TestTemplateSharesRulesAndReportsErrors(t *testing.T) {
	rules := NewTemplate(Config{Rules: &RulesConfig{Rules: []Rule{{Match: "owner", Call: "cmdb__get_asset"}}}})
	a, err := rules.New()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := rules.New()
	if a != b {
		t.Error("a rules model, which keeps no state, was built twice")
	}
	bad := NewTemplate(Config{Scripted: []ScriptStep{{Call: "x {"}}})
	for range 2 {
		if m, err := bad.New(); err == nil || m != nil {
			t.Errorf("bad script: model %v, err %v; want an error and no model", m, err)
		}
	}
}

func TestTemplateOfReusesWhatWasBuilt(t *testing.T) {
	cfg := Config{Scripted: []ScriptStep{{Answer: "one"}}}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := TemplateOf(cfg, m)
	a, _ := tmpl.New()
	b, _ := tmpl.New()
	if a == m || a == b {
		t.Fatal("a scripted conversation's model was handed out twice")
	}
	for _, c := range []Model{a, b} {
		if r, _ := c.Next(context.Background(), Request{}); r.Text != "one" {
			t.Errorf("first answer %q, want one", r.Text)
		}
	}
	if &a.(*Scripted).steps[0] != &m.(*Scripted).steps[0] {
		t.Error("the script was parsed again")
	}
}
