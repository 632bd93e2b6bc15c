package model

import (
	"context"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	tests := []struct {
		yaml     string
		wantName string
		wantNext string // the first answer or call name
	}{
		{"scripted: [{answer: hello}]", "scripted", "hello"},
		{"scripted: []", "scripted", ScriptDone},
		{"scripted: [{call: 'cmdb__get_asset {hostname: a}'}]", "scripted", "cmdb__get_asset"},
		{`rules: {name: bikes, rules: [{match: 'B-\d+', call: bikes__get_bike}]}`, "rules:bikes", "bikes__get_bike"},
		{"rules: {}", "rules", DefaultRulesFallback},
		{"openai: {base_url: 'http://127.0.0.1:1/v1', model: gpt-oss-120b}", "openai:gpt-oss-120b", ""},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			var cfg Config
			if err := decodeStrict(t, tt.yaml, &cfg); err != nil {
				t.Fatal(err)
			}
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Name(); got != tt.wantName {
				t.Errorf("Name() = %q, want %q", got, tt.wantName)
			}
			if tt.wantNext == "" {
				return // an endpoint model: nothing to ask here
			}
			r, err := m.Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "is B-104 free?"}}})
			if err != nil {
				t.Fatal(err)
			}
			got := r.Text
			if len(r.ToolCalls) > 0 {
				got = r.ToolCalls[0].Name
			}
			if got != tt.wantNext {
				t.Errorf("first step = %q, want %q", got, tt.wantNext)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		yaml string
		want string
	}{
		{"{}", "no model: want one of scripted, rules, openai or lexical"},
		{"{scripted: [{answer: x}], rules: {}}", "want only one of scripted, rules, openai or lexical"},
		{"scripted: [{answer: x}, {call: 'a [1]'}]", "scripted[1].call: arguments of a: line 1: want a mapping"},
		{"rules: {rules: [{match: '(', call: t}]}", "rules.rules[0].match: error parsing regexp"},
		{"rules: {answers: [{template: '{{'}]}", "rules.answers[0].template: template:"},
		{"openai: {base_url: 'http://localhost:8000/v1'}", "openai.model: required (or set HOSTEVAL_MODEL)"},
		{"openai: {model: m, max_retries: -2}", "openai.max_retries: -2 is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			var cfg Config
			if err := decodeStrict(t, tt.yaml, &cfg); err != nil {
				t.Fatal(err)
			}
			m, err := New(cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New error = %v, want it to contain %q", err, tt.want)
			}
			if m != nil {
				t.Errorf("New returned a non-nil Model %#v with its error", m)
			}
		})
	}
}
