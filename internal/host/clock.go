package host

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The person's time is never a tool's time. A 2025-11-25 server asks its
// question (elicitation/create) inside the tools/call it is answering, so
// the round's timeout would run while the person reads and types. A
// roundClock is that timeout, stopped while the person is asked and started
// again, with what was left, when they answer.

// errRoundTimeout is the cause of a round's context that ran out of time.
var errRoundTimeout = errors.New("no answer within the tool timeout")

// unsentLimit is how much longer than its timeout a round may take to
// send its request: the host's own work, which only a host stuck for a
// minute or a broken transport takes.
const unsentLimit = time.Minute

// roundClock is one round's deadline, which can pause, and which a
// server's progress can move (extend).
type roundClock struct {
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	deadline time.Time     // while running
	left     time.Duration // while paused
	// timer is the round's one timer, made by the first arm and reset by
	// the others: a round arms it twice at least (the bound on sending,
	// then the timeout). due is when it was last armed to end the round:
	// a timer that fired for an earlier arming finds it in the future (or
	// the clock paused or stopped), and is ignored.
	timer   *time.Timer
	due     time.Time
	paused  int
	stopped bool
	// ran is the time the clock ran before it last started running
	// (at since): the round's tool time, the person's excluded.
	ran   time.Duration
	since time.Time
	// extended is set once extend moved the deadline.
	extended bool
	// unsent holds the clock (one pause) until the round's request starts
	// to go to the server (startRoundAtSend).
	unsent bool
}

// startRound returns the context of a round bounded by d, and its clock.
// Call stop when the round is over.
func startRound(ctx context.Context, d time.Duration) (context.Context, *roundClock) {
	rctx, cancel := context.WithCancelCause(ctx)
	now := time.Now()
	c := &roundClock{cancel: cancel, deadline: now.Add(d), since: now}
	c.mu.Lock()
	c.arm(d)
	c.mu.Unlock()
	return rctx, c
}

// startRoundAtSend is startRound for a round whose time starts when its
// request starts to go to the server (sent). The host's own work before
// that (encoding a large request, a busy machine's scheduling) is not the
// server's time: counted, a round's timeout could end before a byte went
// out, and what the host then says (no answer; the server stopped
// reading) would depend on the machine's load, not on the server. unsent
// bounds that work all the same: a request not sent within it ends the
// round as its timeout does.
func startRoundAtSend(ctx context.Context, d, unsent time.Duration) (context.Context, *roundClock) {
	rctx, cancel := context.WithCancelCause(ctx)
	c := &roundClock{cancel: cancel, left: d, paused: 1, unsent: true}
	c.mu.Lock()
	c.arm(unsent)
	c.mu.Unlock()
	return rctx, c
}

// sent starts the clock of a round of startRoundAtSend: its request
// starts to go to the server. Only the first call counts; a nil clock, or
// one of startRound, does nothing.
func (c *roundClock) sent() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.unsent {
		return
	}
	c.unsent = false
	c.timer.Stop()
	c.paused--
	if c.paused == 0 && !c.stopped {
		c.since = time.Now()
		c.deadline = c.since.Add(c.left)
		c.arm(c.left)
	}
}

// extend gives the round d more from now (progress from the server),
// but never more tool time in all than limit. It reports whether the
// deadline moved. A nil clock does nothing.
func (c *roundClock) extend(d, limit time.Duration) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return false
	}
	now := time.Now()
	ran := c.ran
	if c.paused == 0 {
		ran += now.Sub(c.since)
	}
	d = min(d, limit-ran)
	if c.paused > 0 {
		if d <= c.left {
			return false
		}
		c.left, c.extended = d, true
		return true
	}
	if d <= c.deadline.Sub(now) {
		return false
	}
	c.timer.Stop()
	c.deadline, c.extended = now.Add(d), true
	c.arm(d)
	return true
}

// wasExtended reports whether progress ever moved the round's deadline.
func (c *roundClock) wasExtended() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.extended
}

// arm starts the timer for d. The caller holds mu.
func (c *roundClock) arm(d time.Duration) {
	c.due = time.Now().Add(d)
	if c.timer == nil {
		c.timer = time.AfterFunc(d, c.fire)
		return
	}
	c.timer.Reset(d)
}

func (c *roundClock) fire() {
	c.mu.Lock()
	// While unsent, the timer is the bound on the host's own work. The
	// timer fires at or after due (both read the monotonic clock, due
	// first), so one that fires before due was armed for less.
	live := (c.paused == 0 || c.unsent) && !c.stopped && !time.Now().Before(c.due)
	c.mu.Unlock()
	if live {
		c.cancel(errRoundTimeout)
	}
}

// pause stops the clock; every pause needs a resume. A nil clock does
// nothing.
func (c *roundClock) pause() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused == 0 && !c.stopped {
		c.timer.Stop()
		c.left = max(time.Until(c.deadline), 0)
		c.ran += time.Since(c.since)
	}
	c.paused++
}

// resume starts the clock again with the time that was left.
func (c *roundClock) resume() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused--
	if c.paused == 0 && !c.stopped {
		c.since = time.Now()
		c.deadline = c.since.Add(c.left)
		c.arm(c.left)
	}
}

// stop ends the round and releases its context.
func (c *roundClock) stop() {
	c.mu.Lock()
	c.stopped = true
	c.timer.Stop()
	c.mu.Unlock()
	c.cancel(context.Canceled)
}
