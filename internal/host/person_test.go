package host

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestTerminalElicit(t *testing.T) {
	t.Parallel()
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"priority": map[string]any{"type": "string", "enum": []any{"P1", "P2", "P3"}, "description": "P1 = drop everything, P3 = next business day"},
			"notify":   map[string]any{"type": "boolean", "default": true},
			"hours":    map[string]any{"type": "integer"},
		},
		"required": []any{"priority"},
	}
	tests := []struct {
		name   string
		req    ElicitRequest
		input  string
		want   ElicitAnswer
		output []string // substrings of what the person sees
	}{
		{
			name:  "accept with values, a bad value asked again, a default left to the host",
			req:   ElicitRequest{Server: "tickets", Mode: "form", Message: "Open an incident ticket for jump-prod-02?", Schema: schema},
			input: "y\nP7\nP1\nsoon\n4\n\n",
			want:  ElicitAnswer{Action: ActionAccept, Content: map[string]any{"priority": "P1", "hours": int64(4)}},
			output: []string{
				"[tickets asks] Open an incident ticket for jump-prod-02?",
				"priority (string, required, one of P1, P2, P3): P1 = drop everything, P3 = next business day",
				"notify (boolean, default true)",
				"hours (integer)",
				"Accept? [y/N]",
				"priority must be one of the choices",
				"hours must be a whole number",
			},
		},
		{
			name: "titled choices, a multi-select and a length bound, checked as the host checks them",
			req: ElicitRequest{Server: "tickets", Mode: "form", Message: "Assign it?", Schema: map[string]any{
				"properties": map[string]any{
					"team": map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "sec", "title": "Security"}, map[string]any{"const": "ops", "title": "Operations"}}},
					"tags": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"vpn", "ssh"}}},
					"note": map[string]any{"type": "string", "minLength": 3},
				},
				"required": []any{"team", "tags"},
			}},
			input: "y\nvpn, web\nssh, vpn\nSecurity\nsec\nok\nfine\n",
			want:  ElicitAnswer{Action: ActionAccept, Content: map[string]any{"team": "sec", "tags": []any{"ssh", "vpn"}, "note": "fine"}},
			output: []string{
				"team (string, required, one of sec (Security), ops (Operations))",
				"tags (array, required, any of, comma-separated: vpn, ssh)",
				"team must be one of the choices",
				"tags web is not one of vpn, ssh",
				"note must be at least 3 characters long",
			},
		},
		{name: "anything but y declines", req: ElicitRequest{Server: "tickets", Mode: "form", Message: "Open?", Schema: schema},
			input: "sure\n", want: ElicitAnswer{Action: ActionDecline}, output: []string{"[tickets asks] Open?"}},
		{name: "end of input declines", req: ElicitRequest{Server: "tickets", Mode: "form", Message: "Open?", Schema: schema},
			input: "", want: ElicitAnswer{Action: ActionDecline}},
		{name: "end of input while filling cancels", req: ElicitRequest{Server: "tickets", Mode: "form", Message: "Open?", Schema: schema},
			input: "y\n", want: ElicitAnswer{Action: ActionCancel}},
		{name: "url mode is declined without a question", req: ElicitRequest{Server: "auth", Mode: "url", Message: "Sign in", URL: "https://example.com"},
			input: "y\n", want: ElicitAnswer{Action: ActionDecline}, output: []string{"not a form; declining"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			term := NewTerminal(NewLines(strings.NewReader(tt.input)), &out)
			got, err := term.Elicit(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			for _, o := range tt.output {
				if !strings.Contains(out.String(), o) {
					t.Errorf("the person did not see %q in:\n%s", o, out.String())
				}
			}
		})
	}
}

func TestTerminalApprove(t *testing.T) {
	t.Parallel()
	destructive := true
	tests := []struct {
		input string
		ann   *mcp.ToolAnnotations
		want  bool
		shown string
	}{
		{"y\n", nil, true, "it is not read-only"},
		{"yes\n", nil, true, ""},
		{"n\n", nil, false, ""},
		{"\n", nil, false, ""},
		{"", nil, false, ""},
		{"y\n", &mcp.ToolAnnotations{DestructiveHint: &destructive}, true, "it may destroy data"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		term := NewTerminal(NewLines(strings.NewReader(tt.input)), &out)
		got, err := term.Approve(context.Background(), ApprovalRequest{Server: "tickets", Tool: "open_ticket", Name: "tickets__open_ticket",
			Arguments: map[string]any{"host": "jump-prod-02"}, Annotations: tt.ann})
		if err != nil || got != tt.want {
			t.Errorf("input %q: approved %v (%v), want %v", tt.input, got, err, tt.want)
		}
		if !strings.Contains(out.String(), `tickets wants to run open_ticket {"host":"jump-prod-02"}`) || !strings.Contains(out.String(), tt.shown) {
			t.Errorf("input %q: shown %q", tt.input, out.String())
		}
	}
}

func TestCanned(t *testing.T) {
	t.Parallel()
	c := Canned{Answers: []CannedAnswer{
		{Server: "tickets", Key: "confirm", Action: ActionAccept, Content: map[string]any{"priority": "P1"}},
		{Server: "tickets", Action: ActionDecline},
	}}
	got, err := c.Elicit(context.Background(), ElicitRequest{Server: "tickets", Key: "confirm"})
	if err != nil || got.Action != ActionAccept || got.Content["priority"] != "P1" {
		t.Errorf("confirm: %+v, %v", got, err)
	}
	got.Content["priority"] = "P3" // the answer is a copy
	if again, _ := c.Elicit(context.Background(), ElicitRequest{Server: "tickets", Key: "confirm"}); again.Content["priority"] != "P1" {
		t.Errorf("a canned answer was changed through an earlier answer: %+v", again)
	}
	if got, _ := c.Elicit(context.Background(), ElicitRequest{Server: "tickets", Key: "other"}); got.Action != ActionDecline {
		t.Errorf("other key: %+v, want the second answer", got)
	}
	if _, err := c.Elicit(context.Background(), ElicitRequest{Server: "cmdb"}); err != ErrNoAnswer {
		t.Errorf("another server: err %v, want ErrNoAnswer", err)
	}
}
