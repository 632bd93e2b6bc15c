// Command tickets is a fixture MCP server over stdio: an incident ticket desk
// whose one write action, open_ticket, asks the person first.
//
// open_ticket runs three guards, in order. It fails closed when the caller
// declared no elicitation capability. It answers a first call with
// input_required: one form, keyed "confirm", asking for a priority, and a
// requestState sealed with AES-256-GCM that binds the tool, a SHA-256 digest
// of the arguments, an expiry ten minutes ahead and a random single-use
// nonce. And it treats anything but an accepted form with a valid priority as
// no. A second round whose state is forged, edited, expired, sealed under
// another key or issued for other arguments is a JSON-RPC error -32602; one
// whose nonce was already used is a tool error. The same handler serves
// 2025-11-25 clients: the SDK turns its input requests into an
// elicitation/create request to the client and calls it again with the
// answer.
//
// Environment:
//
//	TICKETS_STATE_KEY     the sealing key, 64 hex characters (32 bytes), so that
//	                      several instances accept each other's states;
//	                      generated at start when unset
//	TICKETS_CLOCK_OFFSET  a Go duration (e.g. 11m) added to the server's clock,
//	                      so tests can age a state without waiting
//
// The set of used nonces lives in the process: another instance sharing the
// key does not know which confirmations this one has already consumed.
package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/servers/internal/fixture"
)

const (
	version        = "1.0.0"
	toolOpenTicket = "open_ticket"
	firstTicketID  = 4100
)

func main() { fixture.Main("tickets", run) }

func run(ctx context.Context, p *fixture.Process) error {
	key := newKey()
	if v := p.Getenv("TICKETS_STATE_KEY"); v != "" {
		var err error
		if key, err = parseKey(v); err != nil {
			return fixture.Usagef("TICKETS_STATE_KEY: %v", err)
		}
	}
	var offset time.Duration
	if v := p.Getenv("TICKETS_CLOCK_OFFSET"); v != "" {
		var err error
		if offset, err = time.ParseDuration(v); err != nil {
			return fixture.Usagef("TICKETS_CLOCK_OFFSET: want a Go duration such as 11m: %v", err)
		}
	}
	s, err := newSealer(key)
	if err != nil {
		return err
	}
	d := &desk{
		sealer: s,
		now:    func() time.Time { return time.Now().Add(offset) },
		next:   firstTicketID,
	}
	srv := p.NewServer(version, &mcp.ServerOptions{
		Instructions: "Incident tickets. Opening a ticket always asks the user to confirm it and to choose its priority first; " +
			"if they decline, no ticket is opened.",
	})
	d.addTools(srv)
	return p.Serve(ctx, srv, fixture.Hooks{})
}

// Ticket is an incident ticket.
type Ticket struct {
	ID       string `json:"id" jsonschema:"The ticket's id, e.g. INC-4100."`
	Host     string `json:"host" jsonschema:"The host the incident is about."`
	Summary  string `json:"summary" jsonschema:"What happened, as given when the ticket was opened."`
	Priority string `json:"priority" jsonschema:"P1 = drop everything, P2 = today, P3 = next business day. Chosen by the user."`
	Status   string `json:"status" jsonschema:"open or closed."`
}

type openTicketIn struct {
	Host    string `json:"host" jsonschema:"The exact hostname the incident is about, e.g. jump-prod-02. Look it up in the CMDB first; never guess it."`
	Summary string `json:"summary" jsonschema:"One or two sentences on what happened and what was seen, e.g. 'Brute force followed by a successful login from 203.0.113.77'."`
}

type listTicketsIn struct {
	Host string `json:"host,omitempty" jsonschema:"Only tickets about this exact hostname, e.g. jump-prod-02. Omit for every ticket."`
}

type listTicketsOut struct {
	Total   int      `json:"total" jsonschema:"How many tickets matched."`
	Tickets []Ticket `json:"tickets" jsonschema:"The matching tickets, oldest first."`
}

// desk holds the tickets opened by this process.
type desk struct {
	sealer *sealer
	nonces nonces
	now    func() time.Time

	mu      sync.Mutex
	next    int
	tickets []Ticket
}

// confirmSchema is the form the person fills in: flat and primitive, so any
// host can render it. A fresh copy each time: it leaves with the result.
func confirmSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"priority": map[string]any{
				"type":        "string",
				"enum":        []any{"P1", "P2", "P3"},
				"description": "P1 = drop everything, P3 = next business day",
			},
		},
		"required": []any{"priority"},
	}
}

// Messages the model reads. They say what happened and what to do next.
const (
	msgNoElicitation = "opening a ticket needs a host that can ask the user to confirm it, and this one can't. " +
		"No ticket was opened; tell the user to open it by hand."
	msgUsed = "this confirmation was already used: no ticket was opened by this call. " +
		"If the user wants another ticket, call open_ticket again so that they are asked again."
	msgNoPriority = "the confirmation came back without a valid priority (P1, P2 or P3): no ticket was opened."
)

func (d *desk) addTools(srv *mcp.Server) {
	ticketSchema := fixture.Schema[Ticket](func(props map[string]*jsonschema.Schema) {
		props["priority"].Enum = []any{"P1", "P2", "P3"}
		props["status"].Enum = []any{"open", "closed"}
	})
	mcp.AddTool(srv, &mcp.Tool{
		Name:  toolOpenTicket,
		Title: "Open an incident ticket",
		Description: "Open an incident ticket about one host. Before anything is created the user is asked to confirm it " +
			"and to choose its priority (P1-P3); if they decline, no ticket is opened and you should not retry unless they ask. " +
			"Returns the new ticket, e.g. {\"id\": \"INC-4100\", \"priority\": \"P1\", ...}. " +
			"Only say a ticket was opened when this returns its id.",
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    false,
			DestructiveHint: new(false), // it adds a ticket and changes nothing else
			IdempotentHint:  false,      // every accepted call opens another ticket
			OpenWorldHint:   new(false),
		},
		InputSchema: fixture.Schema[openTicketIn](func(props map[string]*jsonschema.Schema) {
			props["host"].MinLength = new(1)
			props["host"].MaxLength = new(253)
			props["host"].Examples = []any{"jump-prod-02"}
			props["summary"].MinLength = new(3)
			props["summary"].MaxLength = new(500)
		}),
		OutputSchema: ticketSchema,
	}, d.openTicket)

	mcp.AddTool(srv, &mcp.Tool{
		Name:  "list_tickets",
		Title: "List incident tickets",
		Description: "List the incident tickets opened so far, oldest first, optionally only those about one host " +
			"(e.g. host jump-prod-02). Returns {total, tickets}. Use it to check whether a ticket already exists before opening one.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
		InputSchema: fixture.Schema[listTicketsIn](func(props map[string]*jsonschema.Schema) {
			props["host"].MaxLength = new(253)
		}),
		OutputSchema: fixture.Schema[listTicketsOut](func(props map[string]*jsonschema.Schema) {
			props["tickets"].Items = ticketSchema
		}),
	}, d.listTickets)
}

func (d *desk) openTicket(_ context.Context, req *mcp.CallToolRequest, in openTicketIn) (*mcp.CallToolResult, *Ticket, error) {
	// Guard 1: never decide on the person's behalf.
	if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
		return nil, nil, errors.New(msgNoElicitation)
	}
	now := d.now()
	sum := digest(in)
	// Guard 2: ask, unless this is a genuine second round. Answers sent
	// without a state are ignored: nobody was asked.
	if req.Params.RequestState == "" {
		return d.ask(in, sum, now), nil, nil
	}
	st, err := d.sealer.open(req.Params.RequestState, toolOpenTicket, sum, now)
	if err != nil {
		// A protocol error, not a tool error: only a broken or hostile
		// client sends one, and the SDK passes a *jsonrpc.Error through.
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid or expired requestState"}
	}
	answer, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult)
	if !ok {
		return d.ask(in, sum, now), nil, nil // a genuine state without the answer: ask again
	}
	if !d.nonces.use(st.Nonce, st.Expires, now) {
		return nil, nil, errors.New(msgUsed)
	}
	// Guard 3: anything but accept is no.
	switch answer.Action {
	case "accept":
	case "decline":
		return nil, nil, errors.New("the user declined: no ticket was opened. Don't retry unless they ask again.")
	case "cancel":
		return nil, nil, errors.New("the user closed the form: no ticket was opened. Don't retry unless they ask again.")
	default:
		return nil, nil, fmt.Errorf("the confirmation came back with an unknown action %q: no ticket was opened.", answer.Action)
	}
	priority, _ := answer.Content["priority"].(string)
	if !slices.Contains([]string{"P1", "P2", "P3"}, priority) {
		return nil, nil, errors.New(msgNoPriority)
	}
	t := d.open(in.Host, in.Summary, priority)
	return nil, &t, nil
}

func (d *desk) ask(in openTicketIn, argsDigest string, now time.Time) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{
			"confirm": &mcp.ElicitParams{
				Mode:            "form",
				Message:         fmt.Sprintf("Open an incident ticket for %s?\n\n%s", in.Host, in.Summary),
				RequestedSchema: confirmSchema(),
			},
		},
		RequestState: d.sealer.issue(toolOpenTicket, argsDigest, now),
	}
}

func (d *desk) open(host, summary, priority string) Ticket {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := Ticket{
		ID:       fmt.Sprintf("INC-%d", d.next),
		Host:     host,
		Summary:  summary,
		Priority: priority,
		Status:   "open",
	}
	d.next++
	d.tickets = append(d.tickets, t)
	return t
}

func (d *desk) listTickets(_ context.Context, _ *mcp.CallToolRequest, in listTicketsIn) (*mcp.CallToolResult, listTicketsOut, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := listTicketsOut{Tickets: []Ticket{}}
	for _, t := range d.tickets {
		if in.Host == "" || t.Host == in.Host {
			out.Tickets = append(out.Tickets, t)
		}
	}
	out.Total = len(out.Tickets)
	return nil, out, nil
}
