package host

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/record"
)

// Progress: the host sends a progress token with every round, records what
// the server reports on the call, and with ProgressExtends lets each report
// give the round the tool timeout again, up to MaxToolTime. support's slow
// search reports every 0.1 s; each tool timeout is at least 30 times that
// gap, so a busy machine does not decide, and each search outlasts its
// timeout, so only the extension lets it finish.
func TestProgress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		env         []string
		toolTimeout time.Duration
		extends     bool
		maxToolTime time.Duration
		outcome     string
		text        string // a prefix of the text for the model
		extended    bool
	}{
		{"recorded, no extension: the timeout holds", []string{"SUPPORT_SLOW_SECONDS=600"}, 3 * time.Second, false, 0,
			record.OutcomeTimeout, "error: no answer within 3 seconds.", false},
		{"extends up to the maximum", []string{"SUPPORT_SLOW_SECONDS=8"}, 5 * time.Second, true, time.Hour,
			record.OutcomeOK, `{"query":"return window"`, true},
		{"the maximum holds", []string{"SUPPORT_SLOW_SECONDS=600"}, 3 * time.Second, true, 5 * time.Second,
			record.OutcomeTimeout, "error: no answer: the server reported progress, but the host waits at most 5 seconds for a call (and 3 seconds after the last progress).", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := fixture("support", append(tt.env, "SUPPORT_PROGRESS_SECONDS=0.1")...)
			h := startHost(t, Options{Servers: []ServerSpec{spec}, Budgets: budget.Budgets{ToolTimeout: tt.toolTimeout, ProgressExtends: tt.extends, MaxToolTime: tt.maxToolTime}})
			text, ev := call(t, h, "support__search_knowledge", `{"query": "return window"}`)
			if ev.Outcome != tt.outcome || !strings.HasPrefix(text, tt.text) {
				t.Fatalf("outcome %s, text %q; want %s, %q...", ev.Outcome, text, tt.outcome, tt.text)
			}
			p := ev.Progress
			if p == nil || p.Count < 1 || p.Message != "searching larkfield's policies" || p.Total == nil || p.Progress <= 0 || p.Progress > *p.Total {
				t.Fatalf("progress %+v: want the server's reports", p)
			}
			if (p.Extended > 0) != tt.extended {
				t.Errorf("extended %d times, want extended: %t", p.Extended, tt.extended)
			}
			if tt.extends && ev.ServerMS < float64(tt.toolTimeout.Milliseconds()) {
				t.Errorf("server_ms %v: the call ended within one tool timeout (%v), not by the extension", ev.ServerMS, tt.toolTimeout)
			}
			if tt.name == "the maximum holds" && ev.ServerMS < 5000 {
				t.Errorf("server_ms %v: the call ended before the maximum of 5 s", ev.ServerMS)
			}
		})
	}
}

// The progress token is the host's own, one per round, and the server's
// reports for another token change nothing.
func TestProgressTokenOnEveryRound(t *testing.T) {
	t.Parallel()
	srv := newToolServer(t, func(req rawMessage, send func(string)) {
		var p struct {
			Meta struct {
				Token string `json:"progressToken"`
			} `json:"_meta"`
			State *string `json:"requestState"`
		}
		json.Unmarshal(req.Params, &p)
		send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"someone-else","progress":9}}`)
		send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + p.Meta.Token + `","progress":1,"total":2,"message":"half"}}`)
		if p.State == nil {
			send(rawResult(req.ID, `{"resultType":"input_required","requestState":"s"}`))
			return
		}
		send(rawResult(req.ID, `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`))
	}, "confirm")
	h := startRaw(t, srv.spec("raw"), Options{})
	_, ev := call(t, h, "raw__confirm", `{}`)
	if ev.Outcome != record.OutcomeOK || ev.Rounds != 2 {
		t.Fatalf("outcome %s after %d rounds, want ok after 2", ev.Outcome, ev.Rounds)
	}
	var tokens []string
	for _, m := range srv.messages("tools/call") {
		var p struct {
			Meta struct {
				Token string `json:"progressToken"`
			} `json:"_meta"`
		}
		json.Unmarshal(m.Params, &p)
		tokens = append(tokens, p.Meta.Token)
	}
	if len(tokens) != 2 || tokens[0] == "" || tokens[1] == "" || tokens[0] == tokens[1] {
		t.Errorf("progress tokens %q, want one of its own per round", tokens)
	}
	if p := ev.Progress; p == nil || p.Count != 2 || p.Progress != 1 || p.Total == nil || *p.Total != 2 || p.Message != "half" {
		t.Errorf("progress %+v, want the 2 reports for the call's own tokens", p)
	}
}
