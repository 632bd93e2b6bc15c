package host

import (
	"errors"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
)

// What a call's event keeps of the person's side (record.Call.Asks): each
// question put to the person, who asked it in which round, and the answer
// that went back, with the prepared answer that gave it or why the host
// said no for the person. A transcript shows it; the model never sees it.

// maxAskMessage bounds a server's question kept in an event.
const maxAskMessage = 1 << 10

// Why the host answered no for the person.
const (
	reasonURLMode     = "a web page, not a form: the host never sends the person to a page a server chose"
	reasonNoCanned    = "no canned answer: declined"
	reasonNoApproval  = "no canned approval: denied"
	reasonUnavailable = "no answer: declined"
)

// ask records one question and its answer on the call.
func (c *callState) ask(a record.Ask) {
	c.mu.Lock()
	c.asks = append(c.asks, a)
	c.mu.Unlock()
}

func (c *callState) setRoundN(n int) {
	c.mu.Lock()
	c.roundN = n
	c.mu.Unlock()
}

// questionAsk is a server's question as the event keeps it, before it is
// answered.
func questionAsk(server, key, mode string, p *mcp.ElicitParams, st *callState) record.Ask {
	st.mu.Lock()
	round := st.roundN
	st.mu.Unlock()
	a := record.Ask{
		Kind: record.AskElicitation, Round: round, Server: server, Key: key, Mode: mode,
		Message: text.Shorten(p.Message, maxAskMessage), URL: p.URL,
	}
	if props, ok := asObject(p.RequestedSchema)["properties"].(map[string]any); ok {
		for name := range props {
			a.Fields = append(a.Fields, name)
		}
		slices.Sort(a.Fields)
	}
	return a
}

// approvalAsk is the approval of a call as the event keeps it.
func approvalAsk(ap Approver, req ApprovalRequest, ok bool, err error, ms float64) record.Ask {
	a := record.Ask{Kind: record.AskApproval, Server: req.Server, Action: record.ApprovalDenied, PersonMS: record.RoundMS(ms)}
	if ok && err == nil {
		a.Action = record.ApprovalApproved
	}
	if r, isRuled := ap.(interface{ Rule(ApprovalRequest) string }); isRuled {
		a.Rule = r.Rule(req)
	}
	switch {
	case errors.Is(err, ErrNoAnswer):
		a.Reason = reasonNoApproval
	case err != nil:
		a.Reason = "no answer: denied (" + text.Shorten(err.Error(), 200) + ")"
	}
	return a
}

// noAnswerReason says why a question the Elicitor did not answer was
// declined.
func noAnswerReason(err error) string {
	if errors.Is(err, ErrNoAnswer) {
		return reasonNoCanned
	}
	return reasonUnavailable + " (" + text.Shorten(err.Error(), 200) + ")"
}
