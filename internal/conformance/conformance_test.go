package conformance

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/oauth"
)

func tool(name string, offered bool, schema any) *host.Tool {
	return &host.Tool{Name: host.Namespaced(Server, name), Server: Server, Offered: offered, MCP: &mcp.Tool{Name: name, InputSchema: schema}}
}

func TestPlans(t *testing.T) {
	tools := []*host.Tool{
		tool("a", true, nil),
		tool("b", false, nil), // dropped by the host: never called
		tool("json_schema_2020_12_tool", true, map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}),
	}
	tests := []struct {
		scenario string
		ctx      map[string]any
		want     []Call
		err      string
	}{
		{"initialize", nil, nil, ""},
		{"tools_call", nil, []Call{{"add_numbers", `{"a": 5, "b": 3}`}}, ""},
		{"sep-2322-client-request-state", nil, []Call{
			{"test_mrtr_echo_state", `{}`}, {"test_mrtr_no_state", `{}`}, {"test_mrtr_unrelated", `{}`}, {"test_mrtr_no_result_type", `{}`},
		}, ""},
		{"http-standard-headers", nil, []Call{{"a", `{}`}, {"json_schema_2020_12_tool", `{}`}}, ""},
		{"http-invalid-tool-headers", nil, []Call{{"a", `{"region": "us-west1"}`}, {"json_schema_2020_12_tool", `{"region": "us-west1"}`}}, ""},
		{"http-custom-headers", map[string]any{"toolCalls": []any{
			map[string]any{"name": "x", "arguments": map[string]any{"k": "v"}},
			map[string]any{"name": "y"},
		}}, []Call{{"x", `{"k":"v"}`}, {"y", `{}`}}, ""},
		{"http-custom-headers", map[string]any{}, nil, "MCP_CONFORMANCE_CONTEXT has no toolCalls list"},
		{"http-custom-headers", map[string]any{"toolCalls": []any{map[string]any{"arguments": 1}}}, nil, "MCP_CONFORMANCE_CONTEXT toolCalls[0] has no name"},
		{"json-schema-2020-12-preservation", nil, []Call{{"json_schema_echo", `{"schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}}`}}, ""},
		{"auth/dpop", nil, []Call{{"test-tool", `{}`}}, ""},
	}
	plans := Plans()
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			plan, ok := plans[tt.scenario]
			if !ok {
				t.Fatalf("no plan for %s", tt.scenario)
			}
			got, err := plan(tools, tt.ctx)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("echo needs the schema tool", func(t *testing.T) {
		_, err := plans["json-schema-2020-12-preservation"](tools[:1], nil)
		if err == nil || !strings.Contains(err.Error(), "no json_schema_2020_12_tool") {
			t.Errorf("err = %v, want no json_schema_2020_12_tool", err)
		}
	})
	t.Run("every auth scenario has a plan", func(t *testing.T) {
		n := 0
		for name := range plans {
			if strings.HasPrefix(name, "auth/") {
				n++
			}
		}
		if n != 33 {
			t.Errorf("%d auth/ plans, want 33", n)
		}
	})
}

func TestMode(t *testing.T) {
	for _, tt := range []struct {
		revision string
		want     host.Mode
	}{
		{"", host.ModeAuto},
		{"2026-07-28", host.ModePinned},
		{"2027-01-01", host.ModePinned},
		{"2025-11-25", host.ModeLegacy},
		{"2025-06-18", host.ModeLegacy},
	} {
		if got := Mode(tt.revision); got != tt.want {
			t.Errorf("Mode(%q) = %q, want %q", tt.revision, got, tt.want)
		}
	}
}

func TestModel(t *testing.T) {
	m, err := Model([]Call{{"add_numbers", `{"a": 5, "b": 3}`}, {"bad", `{not json`}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "go"}}}
	first, err := m.Next(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range first.ToolCalls {
		got = append(got, c.Name+" "+c.Arguments)
	}
	// Both calls in one message, the arguments sent as written.
	if want := []string{`conf__add_numbers {"a": 5, "b": 3}`, `conf__bad {not json`}; !slices.Equal(got, want) {
		t.Errorf("first step = %q, want %q", got, want)
	}
	req.Messages = append(req.Messages, model.Message{Role: model.RoleAssistant, ToolCalls: first.ToolCalls})
	for _, c := range first.ToolCalls {
		req.Messages = append(req.Messages, model.Message{Role: model.RoleTool, ToolCallID: c.ID, Content: "ok"})
	}
	last, err := m.Next(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if last.Text != "done" || len(last.ToolCalls) != 0 {
		t.Errorf("last step = %+v, want the answer done", last)
	}
}

func TestOAuth(t *testing.T) {
	preregistered := map[string]any{"client_id": "c1", "client_secret": "s1"}
	tests := []struct {
		scenario string
		ctx      map[string]any
		want     oauth.Config
		ok       bool
	}{
		{"tools_call", nil, oauth.Config{}, false},
		{"auth/metadata-default", nil, oauth.Config{ClientMetadataURL: ClientMetadataURL}, true},
		{"auth/pre-registration", preregistered, oauth.Config{ClientMetadataURL: ClientMetadataURL, ClientID: "c1", ClientSecret: "s1"}, true},
		// A client id without a secret is no pre-registered client the suite gives.
		{"auth/basic-cimd", map[string]any{"client_id": "c1"}, oauth.Config{ClientMetadataURL: ClientMetadataURL}, true},
		{"auth/client-credentials-basic", preregistered, oauth.Config{Flow: oauth.FlowClientCredentials, ClientID: "c1", ClientSecret: "s1"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			got, ok := OAuth(tt.scenario, tt.ctx)
			if ok != tt.ok {
				t.Fatalf("ok = %t, want %t", ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Transformer("secret", func(s oauth.Secret) string { return string(s) })); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			if ok {
				if err := got.Validate(); err != nil {
					t.Errorf("the config is not valid: %v", err)
				}
			}
		})
	}
}
