package host

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/record"
)

// recordingElicitor answers every question with its answer and remembers
// what it was asked.
type recordingElicitor struct {
	mu     sync.Mutex
	answer ElicitAnswer
	err    error
	asked  []ElicitRequest
}

func (r *recordingElicitor) Elicit(_ context.Context, req ElicitRequest) (ElicitAnswer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, req)
	return r.answer, r.err
}

func startHost(t *testing.T, opts Options) *Host {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	h, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	for _, s := range h.Servers() {
		if s.Error != "" {
			t.Fatalf("server %s: %s", s.Name, s.Error)
		}
	}
	return h
}

func call(t *testing.T, h *Host, name, args string) (string, record.Call) {
	t.Helper()
	// A guard against a test that hangs, not a budget: the host's own
	// budgets are what the tests set.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	return h.Call(ctx, CallRequest{Name: name, Arguments: args, TraceID: NewID(), Step: 1})
}

func TestNamespaced(t *testing.T) {
	t.Parallel()
	tests := []struct{ server, tool, want string }{
		{"cmdb", "get_asset", "cmdb__get_asset"},
		{"fs", "read.file/v2", "fs__read_file_v2"},
		{"my server", "a b", "my_server__a_b"},
		{"s", strings.Repeat("x", 80), "s__" + strings.Repeat("x", 61)},
	}
	for _, tt := range tests {
		got := Namespaced(tt.server, tt.tool)
		if got != tt.want {
			t.Errorf("Namespaced(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
		if !regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`).MatchString(got) {
			t.Errorf("Namespaced(%q, %q) = %q: not a valid OpenAI tool name", tt.server, tt.tool, got)
		}
	}
}

// A collision is the configuration error of its server alone (issue 24):
// the server whose tools would become one name in the table offers none,
// and says why; the other servers' tools are all in the table. Each
// server here is a real one: the cmdb fixture with an alias of its own
// tool, a raw server listing one name twice, two servers whose names
// sanitise alike (the later one is refused).
func TestCollisionStaysWithItsServer(t *testing.T) {
	t.Parallel()
	dup := newRawServer(t, Revision20260728)
	dup.answer("tools/list", `{"tools":[`+rawTool("twice")+`,`+rawTool("twice")+`]}`)
	tests := []struct {
		name    string
		servers []ServerSpec
		refused string // the server refused
		want    string // its error
		tools   []string
	}{
		{"names equal once sanitised", []ServerSpec{fixture("cmdb", "FIXTURE_ALIAS=get.asset"), fixture("legacy")},
			"cmdb", `configuration error: its tools "get.asset" and "get_asset" both become "cmdb__get_asset" in the host's table: rename one`,
			[]string{"legacy__hello"}},
		{"one name twice", []ServerSpec{dup.spec("dup"), fixture("legacy")},
			"dup", `configuration error: its tools "twice" and "twice" both become "dup__twice" in the host's table: rename one`,
			[]string{"legacy__hello"}},
		{"servers whose names sanitise alike", []ServerSpec{memorySpec(t, "x.y", testServerOptions{}), memorySpec(t, "x_y", testServerOptions{})},
			"x_y", `configuration error: its tool "ask_forever" and tool "ask_forever" of server x.y both become "x_y__ask_forever" in the host's table: rename one, or give a server another name`,
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := Start(context.Background(), Options{Servers: tt.servers})
			if err != nil {
				t.Fatalf("Start: %v, want the host with the other servers", err)
			}
			defer h.Close()
			for _, s := range h.Servers() {
				if s.Name == tt.refused {
					if s.Error != tt.want || !s.ConfigError || s.Tools != 0 {
						t.Errorf("%s: error %q, config_error %t, %d tools\nwant %q, true, 0", s.Name, s.Error, s.ConfigError, s.Tools, tt.want)
					}
				} else if s.Error != "" {
					t.Errorf("%s: error %q, want none", s.Name, s.Error)
				}
			}
			var refusedTools, got []string
			for _, tool := range h.Tools() {
				if tool.Server == tt.refused {
					refusedTools = append(refusedTools, tool.Name)
				}
				got = append(got, tool.Name)
			}
			if len(refusedTools) > 0 {
				t.Errorf("the refused server offers %v, want nothing", refusedTools)
			}
			for _, name := range tt.tools {
				if !slices.Contains(got, name) {
					t.Errorf("tools %v: %s missing", got, name)
				}
			}
			if tt.refused == "x_y" && !slices.Contains(got, "x_y__ask_forever") {
				t.Errorf("tools %v: x.y's ask_forever missing", got)
			}
		})
	}
}

func TestInputRequired(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		tool      string
		answer    ElicitAnswer
		err       error
		wantText  string // a substring of what the model reads
		wantAsked int    // questions that reached the Elicitor
		want      record.Call
	}{
		{
			name: "two questions in one round, defaults filled", tool: "two_questions",
			answer:   ElicitAnswer{Action: ActionAccept, Content: map[string]any{"color": "red"}},
			wantText: `"first":{"action":"accept","content":{"color":"red","size":3}}`, wantAsked: 2,
			want: record.Call{Outcome: "ok", AskedUser: true, Rounds: 2, Elicitations: 2, InputKeys: []string{"first", "second"}},
		},
		{
			name: "decline is sent as decline", tool: "two_questions", answer: ElicitAnswer{Action: ActionDecline},
			wantText: `"second":{"action":"decline"`, wantAsked: 2,
			want: record.Call{Outcome: "ok", AskedUser: true, Rounds: 2, Elicitations: 2, Declined: 2, InputKeys: []string{"first", "second"}},
		},
		{
			name: "no answer is a decline", tool: "two_questions", err: ErrNoAnswer,
			wantText: `"first":{"action":"decline"`, wantAsked: 2,
			want: record.Call{Outcome: "ok", AskedUser: true, Rounds: 2, Elicitations: 2, Declined: 2, InputKeys: []string{"first", "second"}},
		},
		{
			name: "url mode is declined without asking", tool: "url_ask", answer: ElicitAnswer{Action: ActionAccept},
			wantText: `"login":{"action":"decline"`, wantAsked: 0,
			want: record.Call{Outcome: "ok", AskedUser: true, Rounds: 2, Elicitations: 1, Declined: 1, InputKeys: []string{"login"}},
		},
		{
			name: "state-only input_required is retried", tool: "state_only",
			wantText: `{"rounds":3}`, wantAsked: 0,
			want: record.Call{Outcome: "ok", Rounds: 3},
		},
		{
			name: "rounds are capped", tool: "ask_forever", answer: ElicitAnswer{Action: ActionAccept},
			wantText: "still wanted more input after 3 rounds", wantAsked: 3,
			want: record.Call{Outcome: "error", AskedUser: true, Rounds: 3, Elicitations: 3, InputKeys: []string{"again", "again", "again"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			el := &recordingElicitor{answer: tt.answer, err: tt.err}
			h := startHost(t, Options{Servers: []ServerSpec{memorySpec(t, "t", testServerOptions{})}, Elicitor: el, Budgets: budget.Budgets{MaxRounds: 3}})
			text, ev := call(t, h, "t__"+tt.tool, "{}")
			if !strings.Contains(text, tt.wantText) {
				t.Errorf("text = %s\nwant it to contain %s", text, tt.wantText)
			}
			got := record.Call{Outcome: ev.Outcome, AskedUser: ev.AskedUser, Rounds: ev.Rounds,
				Elicitations: ev.Elicitations, Declined: ev.Declined, InputKeys: ev.InputKeys}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
			if len(el.asked) != tt.wantAsked {
				t.Errorf("the person was asked %d times, want %d", len(el.asked), tt.wantAsked)
			}
			for _, q := range el.asked {
				if q.Server != "t" || q.Mode != "form" || q.Tool != tt.tool {
					t.Errorf("question = %+v, want server t, mode form, tool %s", q, tt.tool)
				}
			}
		})
	}
}

func TestCallChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		opts     Options
		tool     string
		args     string
		harness  bool
		want     record.Call
		wantText string
	}{
		{name: "unknown tool", tool: "delete_everything", args: "{}",
			want:     record.Call{Outcome: "unknown_tool", Server: "-", Tool: "delete_everything", ArgKeys: []string{}},
			wantText: `error: there is no tool named "delete_everything". Use only the tools you were given.`},
		{name: "invalid JSON", tool: "t__two_questions", args: `{"a": `,
			want:     record.Call{Outcome: "bad_arguments", Server: "t", Tool: "two_questions", ArgKeys: []string{}},
			wantText: `error: the arguments were not valid JSON. Send one JSON object, e.g. {"name": "value"}.`},
		{name: "not an object", tool: "t__two_questions", args: `[1, 2]`,
			want:     record.Call{Outcome: "bad_arguments", Server: "t", Tool: "two_questions", ArgKeys: []string{}},
			wantText: `error: the arguments must be a JSON object, not an array.`},
		{name: "two objects", tool: "t__two_questions", args: `{} {}`,
			want:     record.Call{Outcome: "bad_arguments", Server: "t", Tool: "two_questions", ArgKeys: []string{}},
			wantText: `error: the arguments were not valid JSON. Send one JSON object, e.g. {"name": "value"}.`},
		{name: "too large", opts: Options{Budgets: budget.Budgets{MaxArgBytes: 20}}, tool: "t__two_questions", args: `{"b": "0123456789", "a": 1}`,
			want:     record.Call{Outcome: "bad_arguments", Server: "t", Tool: "two_questions", ArgKeys: []string{"a", "b"}},
			wantText: `error: the arguments are 27 bytes, over the host's limit of 20. Send less.`},
		{name: "not read-only: denied by default", tool: "t__write_thing", args: "",
			want:     record.Call{Outcome: "denied", Server: "t", Tool: "write_thing", ArgKeys: []string{}, Approval: "denied"},
			wantText: "error: the user did not approve running t__write_thing, so nothing was done. Don't retry unless they ask for it."},
		{name: "not read-only: approved", opts: Options{Approver: CannedApprovals{Tools: []string{"t__write*"}}}, tool: "t__write_thing", args: "",
			want:     record.Call{Outcome: "ok", Server: "t", Tool: "write_thing", ArgKeys: []string{}, Approval: "approved", Rounds: 1},
			wantText: `{"rounds":1}`},
		{name: "allow-list hides a tool", opts: Options{Allow: []string{"t__state_only"}}, tool: "t__two_questions", args: "{}",
			want:     record.Call{Outcome: "unknown_tool", Server: "-", Tool: "t__two_questions", ArgKeys: []string{}},
			wantText: `error: there is no tool named "t__two_questions". Use only the tools you were given.`},
		{name: "deny-list hides a tool", opts: Options{Deny: []string{"t__two_questions"}}, tool: "t__two_questions", args: "{}",
			want:     record.Call{Outcome: "unknown_tool", Server: "-", Tool: "t__two_questions", ArgKeys: []string{}},
			wantText: `error: there is no tool named "t__two_questions". Use only the tools you were given.`},
		{name: "the harness may call a hidden tool", opts: Options{Allow: []string{"t__state_only"}}, tool: "t__write_thing", args: "{}", harness: true,
			want:     record.Call{Outcome: "ok", Server: "t", Tool: "write_thing", ArgKeys: []string{}, Approval: "auto", Rounds: 1},
			wantText: `{"rounds":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Servers = []ServerSpec{memorySpec(t, "t", testServerOptions{})}
			h := startHost(t, opts)
			req := CallRequest{Name: tt.tool, Arguments: tt.args, TraceID: NewID(), Step: 1}
			var text string
			var ev record.Call
			if tt.harness {
				text, ev = h.Check(context.Background(), req)
			} else {
				text, ev = h.Call(context.Background(), req)
			}
			if text != tt.wantText {
				t.Errorf("text = %q\nwant   %q", text, tt.wantText)
			}
			got := record.Call{Outcome: ev.Outcome, Server: ev.Server, Tool: ev.Tool, ArgKeys: ev.ArgKeys, Approval: ev.Approval, Rounds: ev.Rounds}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
			if ev.ResultBytes != len(text) {
				t.Errorf("result_bytes = %d, want %d", ev.ResultBytes, len(text))
			}
		})
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 3000) // 6000 bytes, two-byte runes
	got := clip(long, 4000)
	if len(got) > 4000 {
		t.Errorf("clipped to %d bytes, want at most 4000", len(got))
	}
	if !strings.HasSuffix(got, "[result cut to 4000 bytes by the host: ask for less, e.g. with a filter or a smaller limit]") {
		t.Errorf("clipped text does not end with the note: ...%s", got[len(got)-120:])
	}
	if !json.Valid([]byte(`"` + got[:len(got)-120] + `"`)) {
		t.Errorf("clip cut a character in two")
	}
	// A budget smaller than the note: the note, whole, not its tail.
	if got, want := clip(long, 60), "\n[result cut to 60 bytes by the host: ask for less, e.g. with a filter or a smaller limit]"; got != want {
		t.Errorf("clip to 60 = %q, want %q", got, want)
	}
}

// The host declares exactly what it implements: elicitation (forms, and
// url only to decline it), and no roots, sampling or anything else; with
// NoElicitation, nothing at all. Checked on both revisions, as the server
// received them.
func TestDeclaredCapabilities(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode          Mode
		noElicitation bool
		want          string
	}{
		{ModeAuto, false, `{"elicitation":{"form":{},"url":{}}}`},
		{ModeLegacy, false, `{"elicitation":{"form":{},"url":{}}}`},
		{ModeAuto, true, `{}`},
		{ModeLegacy, true, `{}`},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/no-elicitation=%v", tt.mode, tt.noElicitation), func(t *testing.T) {
			h := startHost(t, Options{Servers: []ServerSpec{memorySpec(t, "t", testServerOptions{})}, Protocol: tt.mode, NoElicitation: tt.noElicitation})
			if text, _ := call(t, h, "t__caps", "{}"); text != tt.want {
				t.Errorf("the server saw %s, want %s", text, tt.want)
			}
		})
	}
}
