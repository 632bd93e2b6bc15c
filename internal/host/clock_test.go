package host

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// The round's clock on synctest's fake time: each step waits (time.Sleep
// in a bubble only moves the fake clock) and says exactly when the
// round's context must have ended, to the nanosecond, however busy the
// machine.

// ended reports whether the round's context ended, and with what cause.
func ended(ctx context.Context) (bool, error) {
	synctest.Wait() // every timer that is due has fired
	if ctx.Err() == nil {
		return false, nil
	}
	return true, context.Cause(ctx)
}

func TestRoundClock(t *testing.T) {
	tests := []struct {
		name string
		// run drives the clock of a round of 10s.
		run      func(c *roundClock)
		want     time.Duration // when the timeout fires, from the start
		extended bool          // progress moved the deadline
	}{
		{"runs out at its budget", func(c *roundClock) {}, 10 * time.Second, false},
		{"a pause stops it: the person's time is not the tool's", func(c *roundClock) {
			time.Sleep(4 * time.Second)
			c.pause()
			time.Sleep(time.Hour)
			c.resume()
		}, time.Hour + 10*time.Second, false},
		{"pauses nest: it runs again after the last resume", func(c *roundClock) {
			time.Sleep(time.Second)
			c.pause()
			c.pause()
			time.Sleep(time.Minute)
			c.resume()
			time.Sleep(time.Minute)
			c.resume()
		}, 2*time.Minute + 10*time.Second, false},
		{"progress gives the round its budget again from now", func(c *roundClock) {
			time.Sleep(8 * time.Second)
			if !c.extend(10*time.Second, time.Minute) {
				t.Error("extend(10s) at 8s did not move the deadline")
			}
		}, 18 * time.Second, true},
		{"progress never gives more than the limit in all", func(c *roundClock) {
			time.Sleep(8 * time.Second)
			c.extend(10*time.Second, 12*time.Second)
		}, 12 * time.Second, true},
		{"progress that would shorten the round changes nothing", func(c *roundClock) {
			time.Sleep(time.Second)
			if c.extend(5*time.Second, time.Minute) {
				t.Error("extend(5s) at 1s of a 10s round moved the deadline")
			}
		}, 10 * time.Second, false},
		{"progress while paused counts from the resume, tool time only", func(c *roundClock) {
			time.Sleep(9 * time.Second)
			c.pause()
			time.Sleep(time.Hour)
			c.extend(10*time.Second, 15*time.Second) // 9s ran: 6s more at most
			c.resume()
		}, 9*time.Second + time.Hour + 6*time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				ctx, c := startRound(context.Background(), 10*time.Second)
				defer c.stop()
				tt.run(c)
				// Just before the deadline the round is alive; at it,
				// it ends with the tool timeout.
				if wait := tt.want - time.Since(start) - time.Nanosecond; wait > 0 {
					time.Sleep(wait)
				}
				if done, cause := ended(ctx); done {
					t.Fatalf("the round ended at %v (%v), want at %v", time.Since(start), cause, tt.want)
				}
				time.Sleep(time.Nanosecond)
				done, cause := ended(ctx)
				if !done || !errors.Is(cause, errRoundTimeout) {
					t.Fatalf("at %v: ended %v, cause %v; want the tool timeout", time.Since(start), done, cause)
				}
				if got := c.wasExtended(); got != tt.extended {
					t.Errorf("wasExtended = %v, want %v", got, tt.extended)
				}
			})
		})
	}
}

// TestRoundClockStop: a stopped round ends with Canceled, never with the
// tool timeout, even when its timer was due.
func TestRoundClockStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, c := startRound(context.Background(), time.Second)
		time.Sleep(time.Second - time.Nanosecond)
		c.stop()
		time.Sleep(time.Hour)
		if done, cause := ended(ctx); !done || !errors.Is(cause, context.Canceled) {
			t.Fatalf("ended %v, cause %v; want Canceled", done, cause)
		}
		if c.extend(time.Minute, time.Hour) {
			t.Error("extend moved the deadline of a stopped round")
		}
	})
}

// TestRoundClockAtSend: a round of startRoundAtSend runs from its send,
// not from its start: the host's own time before (a busy machine, a large
// request to encode) is not the server's. A request never sent ends the
// round at the bound on the host's work, with the tool timeout's cause.
func TestRoundClockAtSend(t *testing.T) {
	tests := []struct {
		name string
		run  func(c *roundClock)
		want time.Duration // when the timeout fires, from the start
	}{
		{"runs from the send", func(c *roundClock) {
			time.Sleep(50 * time.Second)
			c.sent()
		}, 50*time.Second + 10*time.Second},
		{"only the first send counts", func(c *roundClock) {
			time.Sleep(time.Second)
			c.sent()
			time.Sleep(5 * time.Second)
			c.sent()
		}, time.Second + 10*time.Second},
		{"a pause after the send stops it", func(c *roundClock) {
			time.Sleep(time.Second)
			c.sent()
			time.Sleep(2 * time.Second)
			c.pause()
			time.Sleep(time.Hour)
			c.resume()
		}, time.Hour + time.Second + 10*time.Second},
		{"never sent: the bound on the host's work", func(c *roundClock) {}, time.Minute + 10*time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				ctx, c := startRoundAtSend(context.Background(), 10*time.Second, time.Minute+10*time.Second)
				defer c.stop()
				tt.run(c)
				if wait := tt.want - time.Since(start) - time.Nanosecond; wait > 0 {
					time.Sleep(wait)
				}
				if done, cause := ended(ctx); done {
					t.Fatalf("the round ended at %v (%v), want at %v", time.Since(start), cause, tt.want)
				}
				time.Sleep(time.Nanosecond)
				if done, cause := ended(ctx); !done || !errors.Is(cause, errRoundTimeout) {
					t.Fatalf("at %v: ended %v, cause %v; want the tool timeout", time.Since(start), done, cause)
				}
			})
		})
	}
}

// TestRoundClockAllocs: a round's clock is armed twice at least (the bound
// on sending, then its timeout), and again after each pause, on one
// timer: 5 allocations for a round sent, paused and resumed, where a
// timer and a func per arming made 9.
func TestRoundClockAllocs(t *testing.T) {
	ctx := context.Background()
	const most = 5
	if got := testing.AllocsPerRun(100, func() {
		_, c := startRoundAtSend(ctx, 10*time.Second, time.Minute)
		c.sent()
		c.pause()
		c.resume()
		c.stop()
	}); got > most {
		t.Errorf("a round (sent, paused, resumed, stopped): %.0f allocations, want at most %d", got, most)
	}
}
