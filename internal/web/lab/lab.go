// Package lab is `hosteval lab`: the host as a web page, where a person
// meets it. The host runs in the server process, so the servers stay
// connected while the person moves around the page, and a turn pauses
// while a server or the host waits for the person.
//
// The page shows the conversation on the left (questions, the steps the
// host takes, the calls the model proposes, the answers) and, on the right,
// a row per host.tool_call event as it happens, a call's details (its
// arguments, the result as the model saw it, the server's mcp.request lines
// joined on trace_id + step, the wire messages), and the logs of the host
// and the servers, filterable by trace_id, step and server. A server's
// question is a form rendered from its requestedSchema and an effect is an
// approval prompt; nothing reaches a server until the person presses a
// button, and the answer is checked against the form in the page, by the
// lab, and by the host before it is sent. With no model the page is a
// manual panel: the person picks a tool and fills in its arguments, and
// every check, form, row and log works the same.
//
// The state lives here, not in the page: every change is one numbered
// event, published to every open page by server-sent events, so several
// tabs see one conversation (one person answers; the others see the
// answer) and a reload restores it. A question nobody can answer because
// no page has been open for PageGrace is answered no, as is one that runs
// out of the person's time (host.Options.PersonTimeout); one whose call
// ends is withdrawn.
//
// Every string from a model, a server or a scenario reaches the page as
// JSON and is put into it as text (textContent), never as markup; the
// page's scripts are files (the Content-Security-Policy of internal/web
// allows no inline script).
package lab

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/lines"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/record"
)

// Options configure a lab.
type Options struct {
	// Host configures the host the lab starts. The lab is its person
	// (Elicitor, Approver) and hears its steps and calls; Log, ServerLog and
	// Wire, when set, still receive everything the page shows.
	Host host.Options
	// Model answers the person's questions; nil makes the page a manual
	// panel.
	Model model.Model
	// System is the system prompt of the conversation.
	System string
	// Title names the session on the page (a scenario's name).
	Title string
	// Suggestions are questions the page offers to ask (a scenario's turns).
	Suggestions []string
	// PageGrace is how long a question to the person waits for a page to
	// be open again after the last one closed, before it is answered no
	// (default 10s: a reload reconnects well within it).
	PageGrace time.Duration
}

// DefaultPageGrace is the default of Options.PageGrace.
const DefaultPageGrace = 10 * time.Second

// Lab is a running lab: a host, its conversation and the pages' state.
// Create it with Start, serve Handler, and stop it with Close.
type Lab struct {
	opts    Options
	h       *host.Host
	conv    *host.Conversation
	state   *state
	pages   *presence
	trace   string // the manual panel's trace: one per session, as in chat
	handler http.Handler

	// ctx ends when the lab closes: it bounds every turn.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex // guards the fields below
	step     int        // the manual panel's last step
	stopTurn context.CancelFunc
}

// Start starts the host with the lab as its person and returns the lab.
// It fails as host.Start does.
func Start(ctx context.Context, opts Options) (*Lab, error) {
	if opts.PageGrace <= 0 {
		opts.PageGrace = DefaultPageGrace
	}
	l := &Lab{opts: opts, state: newState(), pages: newPresence(opts.PageGrace), trace: host.NewID()}
	l.ctx, l.cancel = context.WithCancel(context.WithoutCancel(ctx))

	hopts := opts.Host
	hopts.Elicitor, hopts.Approver = (*person)(l), (*person)(l)
	hopts.Steps = l.state.addStep
	hopts.Calls = l.state.addCall
	hopts.Log = tee(hopts.Log, lines.NewWriter(func(line []byte) { l.state.addLog("host", line) }))
	hopts.ServerLog = tee(hopts.ServerLog, lines.NewWriter(func(line []byte) { l.state.addLog("server", line) }))
	hopts.Wire = tee(hopts.Wire, lines.NewWriter(l.state.addWire))
	h, err := host.Start(ctx, hopts)
	if err != nil {
		l.cancel()
		l.pages.stop()
		l.state.close()
		return nil, err
	}
	l.h = h
	if opts.Model != nil {
		l.conv = h.NewConversation(opts.Model, opts.System)
	}
	l.state.setSetup(l.describe())
	l.handler = l.routes()
	return l, nil
}

// Close ends the running turn, stops the servers and closes every page's
// event stream.
func (l *Lab) Close() error {
	l.cancel()
	l.pages.stop()
	l.wg.Wait()
	err := l.h.Close()
	l.state.close()
	return err
}

// Handler serves the page, its scripts, its state and its events.
func (l *Lab) Handler() http.Handler { return l.handler }

// Servers describes the host's servers, as host.Host.Servers does.
func (l *Lab) Servers() []record.Server { return l.h.Servers() }

// errBusy is the answer to a question or a call while one is running:
// the person sees one thing happen at a time.
var errBusy = errors.New("a turn is running: wait for its answer, or stop it")

// ask runs one user turn on its own goroutine, owned by the lab.
func (l *Lab) ask(question string) error {
	if l.conv == nil {
		return errors.New("no model is configured: call a tool from the panel instead")
	}
	ctx, err := l.begin()
	if err != nil {
		return err
	}
	turn := l.state.addUser(question)
	l.wg.Go(func() {
		defer l.end()
		res, err := l.conv.Ask(ctx, question)
		switch {
		case ctx.Err() != nil:
			l.state.addItem(Item{Kind: "error", Turn: turn, TraceID: res.TraceID, Text: l.stoppedText()})
		case err != nil:
			l.state.addItem(Item{Kind: "error", Turn: turn, TraceID: res.TraceID, Text: "The model did not answer: " + err.Error() + ". Ask again."})
		default:
			text := res.Answer
			if res.Truncated != "" {
				text += " [cut short by the endpoint (finish_reason " + res.Truncated + "): not a whole answer]"
			}
			l.state.addItem(Item{Kind: "answer", Turn: turn, TraceID: res.TraceID, Text: text, Stopped: res.Stopped})
		}
	})
	return nil
}

// call runs one call of the manual panel on its own goroutine, owned by
// the lab: the host's Call, with every check it makes for a model's call.
func (l *Lab) call(name, arguments string) error {
	ctx, err := l.begin()
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.step++
	step := l.step
	l.mu.Unlock()
	l.state.addItem(Item{Kind: "call", Name: name, Arguments: arguments, TraceID: l.trace, Step: step})
	l.wg.Go(func() {
		defer l.end()
		// No model request lists the tools again in a manual panel: a
		// server that said they changed is listed before each call, and
		// the page shows the new table.
		if changes := l.h.Refresh(ctx, l.trace); len(changes) > 0 {
			l.state.changeSetup(l.describe())
		}
		text, ev := l.h.Call(ctx, host.CallRequest{Name: name, Arguments: arguments, TraceID: l.trace, Step: step})
		l.state.addItem(Item{Kind: "result", Name: name, TraceID: l.trace, Step: step, Outcome: ev.Outcome,
			Text: host.Explain(ev), Result: text})
	})
	return nil
}

// begin marks the lab busy and returns the context of what runs.
func (l *Lab) begin() (context.Context, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopTurn != nil {
		return nil, errBusy
	}
	if l.ctx.Err() != nil {
		return nil, errors.New("the lab is closing")
	}
	ctx, cancel := context.WithCancel(l.ctx)
	l.stopTurn = cancel
	l.state.setBusy(true)
	return ctx, nil
}

func (l *Lab) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopTurn()
	l.stopTurn = nil
	l.state.setBusy(false)
}

// stop cancels what runs: the model request or the call in flight ends,
// and a question to the person is withdrawn.
func (l *Lab) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopTurn != nil {
		l.stopTurn()
	}
}

func (l *Lab) stoppedText() string {
	if l.ctx.Err() != nil {
		return "The lab stopped before the turn finished."
	}
	return "Stopped: what was in flight was cancelled."
}

// describe is what the page shows before anything happens: the session,
// its servers and its tools.
func (l *Lab) describe() setup {
	s := setup{
		Title: l.opts.Title, SessionID: l.h.SessionID(), Manual: l.conv == nil,
		Suggestions: l.opts.Suggestions, Servers: l.h.Servers(), ToolDefs: l.h.ToolDefs(),
	}
	if l.opts.Model != nil {
		s.Model = l.opts.Model.Name()
	}
	eff := l.opts.Host.Effective()
	s.Limits = map[string]any{
		"max_steps": eff.MaxSteps, "max_result_bytes": eff.MaxResultBytes, "tool_timeout": eff.ToolTimeout.String(),
		"person_timeout": durationOrNone(eff.PersonTimeout), "protocol": string(eff.Protocol),
	}
	for _, t := range l.h.Tools() {
		s.Tools = append(s.Tools, toolInfo{
			Name: t.Name, Server: t.Server, Tool: t.MCP.Name, Title: t.MCP.Title, Description: t.Description,
			AutoRun: t.AutoRun, Offered: t.Offered, InputSchema: t.MCP.InputSchema,
		})
	}
	return s
}

func durationOrNone(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return d.String()
}

// tee writes to both writers; the user's w first. Either may be nil.
func tee(w io.Writer, lab io.Writer) io.Writer {
	if w == nil {
		return lab
	}
	return io.MultiWriter(w, lab)
}
