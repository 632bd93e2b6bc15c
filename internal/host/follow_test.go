package host

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/record"
)

// The tool table follows the server: support with FIXTURE_GROW adds
// escalate after its first call, and says so before answering it. The next
// model request is offered escalate, the change is an event, and the
// model's call of it runs. Over stdio, on both revisions (2026-07-28 hears
// it on its subscriptions/listen stream).
func TestToolTableFollowsTheServer(t *testing.T) {
	t.Parallel()
	for _, mode := range []Mode{ModeAuto, ModeLegacy} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			var log logLines
			h := startHost(t, Options{Servers: []ServerSpec{fixture("support", "FIXTURE_GROW=escalate")}, Protocol: mode, Log: &log})
			before := h.ToolDefs()
			m := script(t, `
- call: "support__get_ticket {ticket_id: T-30001}"
- call: "support__escalate {}"
- answer: Escalated.
`)
			res, err := h.NewConversation(m, "").Ask(context.Background(), "escalate T-30001")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"support__get_ticket ok", "support__escalate ok"}, outcomes(res.Calls)); diff != "" {
				t.Fatalf("calls (-want +got):\n%s", diff)
			}
			after := h.ToolDefs()
			if after.Tools != before.Tools+1 || after.Bytes <= before.Bytes {
				t.Errorf("catalog %+v after, %+v before: want one more tool", after, before)
			}
			want := []record.ToolChange{{
				Operation: record.OpToolsChanged, SessionID: h.SessionID(), TraceID: res.TraceID, Turn: 1, Index: 2,
				Server: "support", Added: []string{"escalate"}, Tools: after.Tools, ToolDefBytes: after.Bytes, ToolDefTokens: after.Tokens,
			}}
			if diff := cmp.Diff(want, res.ToolChanges, cmpIgnoreTime); diff != "" {
				t.Errorf("tool changes (-want +got):\n%s", diff)
			}
			var sizes []int
			for _, r := range res.Requests {
				sizes = append(sizes, r.ToolDefBytes)
			}
			if diff := cmp.Diff([]int{before.Bytes, after.Bytes, after.Bytes}, sizes); diff != "" {
				t.Errorf("tool-definition bytes per model request (-want +got):\n%s", diff)
			}
			if got := log.entries(map[string]any{"operation": record.OpToolsChanged, "server": "support"}); len(got) != 1 {
				t.Errorf("%d host.tools_changed log lines, want 1", len(got))
			}
		})
	}
}

// A table never changes under a model request: the calls of one answer are
// checked against the table that request was given, even when a call of it
// made the server add the tool the next call names.
func TestToolTableDoesNotChangeMidRequest(t *testing.T) {
	t.Parallel()
	h := startHost(t, Options{Servers: []ServerSpec{fixture("support", "FIXTURE_GROW=escalate")}})
	m := script(t, `
- calls: ["support__get_ticket {ticket_id: T-30001}", "support__escalate {}"]
- call: "support__escalate {}"
- answer: Escalated.
`)
	res, err := h.NewConversation(m, "").Ask(context.Background(), "escalate T-30001")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"support__get_ticket ok", "support__escalate unknown_tool", "support__escalate ok"}
	if diff := cmp.Diff(want, outcomes(res.Calls)); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if len(res.ToolChanges) != 1 || res.ToolChanges[0].Index != 2 {
		t.Errorf("tool changes %+v, want one, first offered with model request 2", res.ToolChanges)
	}
}

// Over Streamable HTTP, on a 2026-07-28 server: the notification comes on
// the subscriptions/listen stream, through the HTTP tap. The server also
// removes a tool and changes another's description.
func TestToolTableFollowsAnHTTPServer(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "changing", Version: "1"}, nil)
	told := make(chan struct{}, 1)
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "notifications/tools/list_changed" {
				select {
				case told <- struct{}{}:
				default:
				}
			}
			return res, err
		}
	})
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	var once sync.Once
	mcp.AddTool(s, &mcp.Tool{Name: "old", Description: "Going away.", Annotations: readOnly},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, lookupOut, error) {
			return nil, lookupOut{Value: "old"}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "unlock", Description: "Unlock more tools.", Annotations: readOnly},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, lookupOut, error) {
			once.Do(func() {
				mcp.AddTool(s, &mcp.Tool{Name: "secret", Description: "Unlocked.", Annotations: readOnly},
					func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, lookupOut, error) {
						return nil, lookupOut{Value: "secret"}, nil
					})
				mcp.AddTool(s, &mcp.Tool{Name: "unlock", Description: "Already unlocked.", Annotations: readOnly},
					func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, lookupOut, error) {
						return nil, lookupOut{Value: "again"}, nil
					})
				s.RemoveTools("old")
				select {
				case <-told: // written before this answer
				case <-ctx.Done():
				}
			})
			return nil, lookupOut{Value: "unlocked"}, nil
		})
	srv := newStreamableServer(t, s)
	var wire logLines
	h := startHost(t, Options{Servers: []ServerSpec{httpSpec("web", srv)}, Wire: &wire})
	if s := h.Servers()[0]; s.Protocol != Revision20260728 {
		t.Fatalf("protocol %s, want 2026-07-28", s.Protocol)
	}
	// Over HTTP the notification comes on the listen stream, which nothing
	// orders with the call's own answer: the model's second request waits
	// until the host has read it, so the third at the latest is given the
	// new table.
	m := &waitingModel{Model: script(t, `
- call: "web__unlock {}"
- call: "web__unlock {}"
- call: "web__secret {}"
- answer: Done.
`), index: 2, wait: func() {
		wire.waitFor(t, map[string]any{"server": "web", "method": "notifications/tools/list_changed"}, 10*time.Second)
	}}
	res, err := h.NewConversation(m, "").Ask(context.Background(), "unlock")
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, c := range res.Calls {
		results = append(results, c.Result)
	}
	want := []string{`{"key":"","value":"unlocked"}`, `{"key":"","value":"again"}`, `{"key":"","value":"secret"}`}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if len(res.ToolChanges) != 1 {
		t.Fatalf("tool changes %+v, want one", res.ToolChanges)
	}
	c := res.ToolChanges[0]
	if (c.Index != 2 && c.Index != 3) || !slices.Equal(c.Added, []string{"secret"}) || !slices.Equal(c.Removed, []string{"old"}) || !slices.Equal(c.Changed, []string{"unlock"}) {
		t.Errorf("change %+v: want secret added, old removed, unlock changed, by request 3", c)
	}
	if strings.Contains(string(h.ToolsJSON()), "web__old") {
		t.Errorf("the removed tool is still offered: %s", h.ToolsJSON())
	}
}

// waitingModel is a model that calls wait before its request number index
// (of the turn) is answered.
type waitingModel struct {
	model.Model
	index int
	wait  func()
	n     int
}

func (m *waitingModel) Next(ctx context.Context, req model.Request) (model.Response, error) {
	m.n++
	if m.n == m.index {
		m.wait()
	}
	return m.Model.Next(ctx, req)
}

// outcomes lists each call's name and outcome.
func outcomes(calls []record.Call) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Name + " " + c.Outcome
	}
	return out
}

// cmpIgnoreTime leaves out the time of events.
var cmpIgnoreTime = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Time" }, cmp.Ignore())

// newStreamableServer serves s over Streamable HTTP (stateless: 2026-07-28)
// and returns its URL.
func newStreamableServer(t *testing.T, s *mcp.Server) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// A server that says its tools changed while the host lists them (as
// server-everything does: it registers tools on notifications/initialized,
// and its notices come before the listing's answer) is listed again in the
// connect, once: the first model request is offered the second listing
// and lists nothing more, and no change is recorded, as none came while
// the model could see the tools. A second listing that fails leaves the
// first, and the first model request tries again.
func TestConnectListsAgainWhenToldDuringTheListing(t *testing.T) {
	t.Parallel()
	const changed = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	tests := []struct {
		name       string
		second     func(id json.RawMessage) string
		wantTools  []string // after the connect
		wantLists  int      // tools/list requests once the model was asked
		wantChange bool
	}{
		{"listed again", func(id json.RawMessage) string {
			return rawResult(id, `{"tools":[`+rawTool("first")+`,`+rawTool("late")+`]}`)
		}, []string{"raw__first", "raw__late"}, 2, false},
		{"second listing fails", func(id json.RawMessage) string {
			return rawError(id, -32603, "busy")
		}, []string{"raw__first"}, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newRawServer(t, Revision20251125)
			var mu sync.Mutex
			lists := 0
			srv.on("tools/list", func(req rawMessage, send func(string)) {
				mu.Lock()
				lists++
				n := lists
				mu.Unlock()
				switch n {
				case 1:
					send(changed)
					send(rawResult(req.ID, `{"tools":[`+rawTool("first")+`]}`))
				case 2:
					send(tt.second(req.ID))
				default:
					send(rawResult(req.ID, `{"tools":[`+rawTool("first")+`,`+rawTool("late")+`]}`))
				}
			})
			srv.on("tools/call", func(req rawMessage, send func(string)) {
				send(rawResult(req.ID, `{"content":[{"type":"text","text":"fine"}]}`))
			})
			h := startRaw(t, srv.spec("raw"), Options{Protocol: ModeLegacy})
			var names []string
			for _, tool := range h.Tools() {
				names = append(names, tool.Name)
			}
			if diff := cmp.Diff(tt.wantTools, names); diff != "" {
				t.Errorf("tools after the connect (-want +got):\n%s", diff)
			}
			if got := h.Servers()[0].Tools; got != len(tt.wantTools) {
				t.Errorf("connect record: %d tools, want %d", got, len(tt.wantTools))
			}
			res, err := h.NewConversation(script(t, `
- call: "raw__late {}"
- answer: done
`), "").Ask(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"raw__late ok"}, outcomes(res.Calls)); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if got := len(srv.messages("tools/list")); got != tt.wantLists {
				t.Errorf("%d tools/list requests, want %d", got, tt.wantLists)
			}
			if got := len(res.ToolChanges) > 0; got != tt.wantChange {
				t.Errorf("tool changes %+v, want some: %t", res.ToolChanges, tt.wantChange)
			}
		})
	}
}

// lineServer is a stdio server in bash that reads its requests a line at a
// time, as a Node server's event loop does while it is busy: its stdin
// holds what it has not read. On notifications/initialized it adds a
// tool; with NOTICE=early it says so (list_changed) 200 ms later, before
// it reads on (the host has written tools/list by then, and it is still
// unread); with NOTICE=late it says so as it answers the listing, having
// read its request. Each tools/list is a line of LISTS.
const lineServer = `
while IFS= read -r line; do
  id=
  [[ $line =~ \"id\":([0-9]+) ]] && id=${BASH_REMATCH[1]}
  case "$line" in
  *'"method":"initialize"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"line","version":"1"}}}\n' "$id" ;;
  *'"method":"notifications/initialized"'*)
    if [ "$NOTICE" = early ]; then
      sleep 0.2
      printf '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
      sleep 0.1
    fi ;;
  *'"method":"tools/list"'*)
    echo list >> "$LISTS"
    [ "$NOTICE" = late ] && [ ! -s "$LISTS.told" ] && echo told > "$LISTS.told" &&
      printf '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
    printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"first","inputSchema":{"type":"object"}},{"name":"late","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}\n' "$id" ;;
  *'"method":"tools/call"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"fine"}]}}\n' "$id" ;;
  *'"id":'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
  esac
done
`

// A change notice the server wrote before it had read the listing's
// request (the request still unread in its stdin, nothing written after
// it) is one the listing reflects: the connect does not list again. One
// written once the request was read may be later than the answer's
// making: the connect lists again. Neither is a change the model sees.
func TestConnectListsAgainOnlyWhenTheNoticeMayBeLater(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		notice    string
		wantLists int
	}{{"early", 1}, {"late", 2}} {
		t.Run(tt.notice, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			prog, lists := filepath.Join(dir, "server.sh"), filepath.Join(dir, "lists")
			if err := os.WriteFile(prog, []byte(lineServer), 0o644); err != nil {
				t.Fatal(err)
			}
			h := startHost(t, Options{Protocol: ModeLegacy, Servers: []ServerSpec{{
				Name: "line", Command: "bash", Args: []string{prog}, Env: []string{"NOTICE=" + tt.notice, "LISTS=" + lists},
			}}})
			res, err := h.NewConversation(script(t, `
- call: "line__late {}"
- answer: done
`), "").Ask(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"line__late ok"}, outcomes(res.Calls)); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			data, _ := os.ReadFile(lists)
			if got := strings.Count(string(data), "list\n"); got != tt.wantLists {
				t.Errorf("%d tools/list requests, want %d", got, tt.wantLists)
			}
			if len(res.ToolChanges) != 0 {
				t.Errorf("tool changes %+v, want none", res.ToolChanges)
			}
		})
	}
}
