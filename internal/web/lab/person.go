package lab

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hosteval/hosteval/internal/host"
)

// person is the lab as the host's person: its Elicitor and Approver. A
// question goes to every open page; the first answer wins. The host asks
// one question at a time and withdraws it (ends its context) when the call
// ends or the person's time runs out.
type person Lab

// Elicit implements host.Elicitor.
func (p *person) Elicit(ctx context.Context, req host.ElicitRequest) (host.ElicitAnswer, error) {
	l := (*Lab)(p)
	q := Question{Kind: "form", Server: req.Server, Tool: req.Tool, Key: req.Key, Mode: req.Mode,
		Message: req.Message, Schema: req.Schema, URL: req.URL}
	if req.Mode == "url" {
		// The host declines these before asking; a page never sends the
		// person to a page a server chose either.
		q.State, q.Why = host.ActionDecline, "a web page, not a form: declined"
		l.state.addItem(Item{Kind: "question", Question: &q})
		return host.ElicitAnswer{Action: host.ActionDecline}, nil
	}
	a, err := l.wait(ctx, l.state.ask(q, req.Schema))
	if err != nil {
		return host.ElicitAnswer{Action: host.ActionDecline}, err
	}
	return a.elicit, nil
}

// Approve implements host.Approver.
func (p *person) Approve(ctx context.Context, req host.ApprovalRequest) (bool, error) {
	l := (*Lab)(p)
	effect := "it is not read-only"
	if a := req.Annotations; a != nil && a.DestructiveHint != nil && *a.DestructiveHint {
		effect = "it may destroy data"
	}
	q := Question{Kind: "approval", Server: req.Server, Tool: req.Tool, Name: req.Name, Arguments: req.Arguments, Effect: effect}
	a, err := l.wait(ctx, l.state.ask(q, nil))
	if err != nil {
		return false, err
	}
	return a.approved, nil
}

// wait waits for the person's answer to q. The question ends without one
// when its context does (the call ended, or the person's time ran out) and
// when no page has been open for the page grace: then the answer is no.
func (l *Lab) wait(ctx context.Context, q *question) (answer, error) {
	select {
	case a := <-q.answer:
		return a, nil
	case <-ctx.Done():
		why := "withdrawn: the call ended before an answer"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why = "no answer in time: taken as no"
		}
		l.state.settle(q, "withdrawn", why)
		return answer{}, ctx.Err()
	case <-l.pages.gone():
		l.state.settle(q, "unanswered", "no page was open to answer it: taken as no")
		return answer{}, host.ErrNoAnswer
	}
}

// presence counts the pages following the lab's events. When none has
// been open for the grace, gone is closed: a question then gets no as its
// answer, so that closing the page never leaves a turn waiting. A page
// that opens again (a reload) makes a fresh gone.
type presence struct {
	mu     sync.Mutex
	grace  time.Duration
	pages  int
	ch     chan struct{}
	closed bool // ch is closed
	timer  *time.Timer
}

func newPresence(grace time.Duration) *presence {
	p := &presence{grace: grace, ch: make(chan struct{})}
	// Nobody has the page open yet: the same grace as after a close.
	p.timer = time.AfterFunc(grace, p.expire)
	return p
}

func (p *presence) gone() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ch
}

func (p *presence) open() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pages++
	p.timer.Stop()
	if p.closed {
		p.ch, p.closed = make(chan struct{}), false
	}
}

func (p *presence) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pages--
	if p.pages == 0 {
		p.timer.Reset(p.grace)
	}
}

func (p *presence) expire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pages == 0 && !p.closed {
		close(p.ch)
		p.closed = true
	}
}

// stop stops the timer, for a lab that closes.
func (p *presence) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer.Stop()
}
