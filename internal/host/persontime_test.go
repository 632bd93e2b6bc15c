package host

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/record"
)

// slowPerson takes its time: it answers after a while, or, with wait set,
// only when its context ends (a person who walked away, or a form the host
// withdrew). It says whether its context ended.
type slowPerson struct {
	after  time.Duration
	wait   bool
	answer ElicitAnswer
	asked  chan struct{} // closed when first asked

	mu        sync.Mutex
	once      sync.Once
	withdrawn int
}

func newSlowPerson(after time.Duration, wait bool) *slowPerson {
	return &slowPerson{after: after, wait: wait, asked: make(chan struct{}),
		answer: ElicitAnswer{Action: ActionAccept, Content: map[string]any{"priority": "P2"}}}
}

func (p *slowPerson) take(ctx context.Context) bool {
	p.once.Do(func() { close(p.asked) })
	var timeout <-chan time.Time
	if !p.wait {
		timeout = time.After(p.after)
	}
	select {
	case <-timeout:
		return true
	case <-ctx.Done():
		p.mu.Lock()
		p.withdrawn++
		p.mu.Unlock()
		return false
	}
}

func (p *slowPerson) Elicit(ctx context.Context, _ ElicitRequest) (ElicitAnswer, error) {
	if !p.take(ctx) {
		return ElicitAnswer{}, ctx.Err()
	}
	return p.answer, nil
}

func (p *slowPerson) Approve(ctx context.Context, _ ApprovalRequest) (bool, error) {
	if !p.take(ctx) {
		return false, ctx.Err()
	}
	return true, nil
}

func (p *slowPerson) withdrawals() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.withdrawn
}

// TestPersonTimeIsNotToolTime: the person answers a server's question
// long after the tool timeout would have run out, in both eras: in
// 2025-11-25 the question comes inside the round, whose clock stops while
// the person answers.
func TestPersonTimeIsNotToolTime(t *testing.T) {
	t.Parallel()
	const (
		toolTimeout = 2 * time.Second
		personTime  = 3 * time.Second
	)
	for _, mode := range []Mode{ModeAuto, ModeLegacy} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			person := newSlowPerson(personTime, false)
			h := startHost(t, Options{Servers: []ServerSpec{fixture("tickets")}, Protocol: mode, Budgets: budget.Budgets{ToolTimeout: toolTimeout},
				Elicitor: person, Approver: CannedApprovals{Tools: []string{"tickets__open_ticket"}}})
			text, ev := call(t, h, "tickets__open_ticket", `{"host": "jump-prod-02", "summary": "brute force then login"}`)
			if ev.Outcome != record.OutcomeOK || !strings.Contains(text, `"priority":"P2"`) {
				t.Errorf("outcome %s, text %q; want ok, a P2 ticket", ev.Outcome, text)
			}
			if ev.PersonMS < float64(personTime.Milliseconds()) {
				t.Errorf("person_ms = %.0f, want at least %d", ev.PersonMS, personTime.Milliseconds())
			}
			if ev.ServerMS >= float64(personTime.Milliseconds()) {
				t.Errorf("server_ms %.0f counts the person's time (person_ms %.0f)", ev.ServerMS, ev.PersonMS)
			}
		})
	}
}

// TestCallEndingWithdrawsTheQuestion: a call that ends while the person
// has a form open (the turn was cancelled) withdraws the form: the
// Elicitor's context ends, whether or not the server withdraws its own
// request (the raw peer, like the TypeScript servers, does not).
func TestCallEndingWithdrawsTheQuestion(t *testing.T) {
	t.Parallel()
	tickets := CallRequest{Name: "tickets__open_ticket", Arguments: `{"host": "jump-prod-02", "summary": "brute force then login"}`}
	tests := []struct {
		name string
		spec ServerSpec
		mode Mode
		req  CallRequest
	}{
		{"2026-07-28: a question between rounds", fixture("tickets"), ModeAuto, tickets},
		{"2025-11-25: a question inside the round", fixture("tickets"), ModeLegacy, tickets},
		{"2025-11-25: a server that never withdraws its question", rawPeerSpec(t, "peer"), ModeAuto, CallRequest{Name: "peer__ask"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			person := newSlowPerson(0, true)
			h := startHost(t, Options{Servers: []ServerSpec{tt.spec}, Protocol: tt.mode,
				Elicitor: person, Approver: CannedApprovals{Tools: []string{"tickets__open_ticket"}}})
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-person.asked
				cancel()
			}()
			req := tt.req
			req.TraceID, req.Step = NewID(), 1
			done := make(chan record.Call, 1)
			go func() {
				_, ev := h.Call(ctx, req)
				done <- ev
			}()
			select {
			case ev := <-done:
				if ev.Outcome != record.OutcomeError || ev.Error != "the call was cancelled before the server answered." {
					t.Errorf("outcome %s, error %q; want a cancelled call", ev.Outcome, ev.Error)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the call did not end after its context was cancelled")
			}
			// The form is withdrawn with the call, not when the host closes.
			deadline := time.Now().Add(10 * time.Second)
			for person.withdrawals() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := person.withdrawals(); n != 1 {
				t.Errorf("the person's form was withdrawn %d times while the host ran, want 1", n)
			}
		})
	}
}

// TestPersonTimeout: a person who does not answer within PersonTimeout
// answers no, to a question and to an approval.
func TestPersonTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		mode     Mode
		approve  bool // the slow person approves (and is asked the question)
		want     string
		wantText string
	}{
		{"question, 2026-07-28", ModeAuto, false, record.OutcomeToolError, "declined: no ticket was opened"},
		{"question, 2025-11-25", ModeLegacy, false, record.OutcomeToolError, "declined: no ticket was opened"},
		{"approval", ModeAuto, true, record.OutcomeDenied, "did not approve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			person := newSlowPerson(0, true)
			opts := Options{Servers: []ServerSpec{fixture("tickets")}, Protocol: tt.mode, Budgets: budget.Budgets{PersonTimeout: 200 * time.Millisecond},
				Elicitor: person, Approver: CannedApprovals{Tools: []string{"tickets__open_ticket"}}}
			if tt.approve {
				opts.Approver = person
			}
			h := startHost(t, opts)
			text, ev := call(t, h, "tickets__open_ticket", `{"host": "jump-prod-02", "summary": "brute force then login"}`)
			if ev.Outcome != tt.want || !strings.Contains(text, tt.wantText) {
				t.Errorf("outcome %s, text %q; want %s, containing %q", ev.Outcome, text, tt.want, tt.wantText)
			}
			if n := person.withdrawals(); n != 1 {
				t.Errorf("the person's wait ended %d times, want 1", n)
			}
		})
	}
}

// TestTerminalTakesNoLineAfterWithdrawal: a withdrawn form stops reading at
// once, and the line typed next goes to the next reader (the chat's
// prompt), not to the withdrawn form.
func TestTerminalTakesNoLineAfterWithdrawal(t *testing.T) {
	t.Parallel()
	r, w := io.Pipe()
	defer w.Close()
	lines := NewLines(r)
	var out strings.Builder
	term := NewTerminal(lines, &out)
	ctx, cancel := context.WithCancel(context.Background())
	answered := make(chan error, 1)
	go func() {
		_, err := term.Elicit(ctx, ElicitRequest{Server: "tickets", Mode: "form", Message: "Open?"})
		answered <- err
	}()
	cancel()
	if err := <-answered; !errors.Is(err, context.Canceled) {
		t.Errorf("Elicit = %v, want context.Canceled", err)
	}
	go w.Write([]byte("/quit\n"))
	line, err := lines.Next(context.Background())
	if line != "/quit" || err != nil {
		t.Errorf("the next reader got %q, %v; want /quit", line, err)
	}
}

func TestLines(t *testing.T) {
	t.Parallel()
	lines := NewLines(strings.NewReader("one\r\ntwo\n\nlast"))
	var got []string
	for {
		line, err := lines.Next(context.Background())
		if err != nil {
			if err != io.EOF {
				t.Fatalf("Next: %v", err)
			}
			break
		}
		got = append(got, line)
	}
	if want := []string{"one", "two", "", "last"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines = %q, want %q", got, want)
	}
}
