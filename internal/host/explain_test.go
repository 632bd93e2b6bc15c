package host

import (
	"testing"

	"github.com/hosteval/hosteval/internal/record"
)

func TestExplain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ev   record.Call
		want string
	}{
		{record.Call{Outcome: "ok", Server: "cmdb", Tool: "get_asset", ResultBytes: 212},
			"get_asset on cmdb answered: 212 bytes went back to the model."},
		{record.Call{Outcome: "ok", Server: "cmdb", Tool: "find_assets", ResultBytes: 4000, RawBytes: 9120, Clipped: true},
			"find_assets on cmdb answered: 4000 bytes went back to the model, cut from 9120 to the result budget."},
		{record.Call{Outcome: "tool_error", Server: "tickets", Tool: "open_ticket", Error: "the user declined: no ticket was opened. Don't retry unless they ask again."},
			"open_ticket on tickets reported a failure: the user declined: no ticket was opened. Don't retry unless they ask again."},
		{record.Call{Outcome: "unknown_tool", Server: "-", Tool: "delete_everything", Name: "delete_everything"},
			`No tool is named "delete_everything", so nothing was sent.`},
		{record.Call{Outcome: "bad_arguments", Server: "cmdb", Tool: "get_asset", Error: `the arguments were not valid JSON. Send one JSON object, e.g. {"name": "value"}.`},
			"Nothing was sent: the arguments were not valid JSON."},
		{record.Call{Outcome: "denied", Server: "tickets", Tool: "open_ticket"}, "Not approved, so nothing was sent to tickets."},
		{record.Call{Outcome: "timeout", Server: "support", Tool: "search_knowledge"}, "search_knowledge on support did not answer in time; it may still finish the work."},
		{record.Call{Outcome: "error", Server: "chaos", Tool: "crash", Error: "the server chaos stopped working during the call (it exited with status 3), so its tools can't be used now"},
			"The call failed: the server chaos stopped working during the call (it exited with status 3), so its tools can't be used now."},
	}
	for _, tt := range tests {
		if got := Explain(tt.ev); got != tt.want {
			t.Errorf("Explain(%s)\n got %q\nwant %q", tt.ev.Outcome, got, tt.want)
		}
	}
}
