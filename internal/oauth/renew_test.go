package oauth

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/oauth2"
)

// TestRenewMargin runs requests on fake time against a token endpoint that
// gives tokens of a given lifetime, and counts the renewals: within a tenth
// of its life of expiry (at most a minute), once per token.
func TestRenewMargin(t *testing.T) {
	tests := []struct {
		name     string
		lifetime time.Duration
		every    time.Duration // between requests
		for_     time.Duration // how long requests are made
		fail     bool          // every renewal fails
		want     int           // renewals
	}{
		// The storm this fixes: 14 refreshes in 4 s, one per request.
		{name: "3 s token, 4 s of requests", lifetime: 3 * time.Second, every: 100 * time.Millisecond, for_: 4 * time.Second, want: 1},
		{name: "hour token, 2 h of requests", lifetime: time.Hour, every: time.Minute, for_: 2 * time.Hour, want: 2},
		// A failed renewal is not tried again while the token lives.
		{name: "failing, while the token lives", lifetime: 3 * time.Second, every: 100 * time.Millisecond, for_: 2950 * time.Millisecond, fail: true, want: 1},
		// After it expired, each request tries: there is nothing to send.
		{name: "failing, after expiry", lifetime: 3 * time.Second, every: 100 * time.Millisecond, for_: 3250 * time.Millisecond, fail: true, want: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := 0
				issue := func() *oauth2.Token {
					n++
					return &oauth2.Token{AccessToken: fmt.Sprint("at-", n), Expiry: time.Now().Add(tt.lifetime)}
				}
				first := issue()
				renewals := 0
				r := newRenewer(first, func(old *oauth2.Token) (*oauth2.Token, error) {
					renewals++
					if tt.fail {
						return nil, errors.New("the token endpoint is down")
					}
					return issue(), nil
				})
				start := time.Now()
				for time.Since(start) <= tt.for_ {
					tok, err := r.Token()
					if alive(tok, time.Now()) != (err == nil) {
						t.Fatalf("at %v: token %v, error %v: want a live token or an error", time.Since(start), tok, err)
					}
					time.Sleep(tt.every)
				}
				if renewals != tt.want {
					t.Errorf("%d renewals, want %d", renewals, tt.want)
				}
			})
		})
	}
}

func TestRenewMarginScales(t *testing.T) {
	tests := []struct{ lifetime, want time.Duration }{
		{3 * time.Second, 300 * time.Millisecond},
		{time.Minute, 6 * time.Second},
		{10 * time.Minute, time.Minute},
		{24 * time.Hour, time.Minute},
		{-time.Second, 0},
	}
	for _, tt := range tests {
		if got := renewMargin(tt.lifetime); got != tt.want {
			t.Errorf("renewMargin(%v) = %v, want %v", tt.lifetime, got, tt.want)
		}
	}
}
