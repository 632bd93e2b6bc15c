package main

import (
	"encoding/base64"
	"errors"
	"sync"
	"testing"
	"time"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func TestSealerOpen(t *testing.T) {
	s, err := newSealer(testKey)
	if err != nil {
		t.Fatal(err)
	}
	other, err := newSealer([]byte("fedcba9876543210fedcba9876543210"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	args := digest(openTicketIn{Host: "jump-prod-02", Summary: "brute force"})
	token := s.issue(toolOpenTicket, args, now)
	flipped := func() string {
		b, _ := base64.RawURLEncoding.DecodeString(token)
		b[len(b)/2] ^= 0x01
		return base64.RawURLEncoding.EncodeToString(b)
	}()

	tests := []struct {
		name    string
		opener  *sealer
		token   string
		tool    string
		args    string
		now     time.Time
		wantErr bool
	}{
		{name: "genuine", opener: s, token: token, tool: toolOpenTicket, args: args, now: now.Add(9 * time.Minute)},
		{name: "expired", opener: s, token: token, tool: toolOpenTicket, args: args, now: now.Add(stateTTL), wantErr: true},
		{name: "other tool", opener: s, token: token, tool: "list_tickets", args: args, now: now, wantErr: true},
		{name: "other arguments", opener: s, token: token, tool: toolOpenTicket,
			args: digest(openTicketIn{Host: "jump-prod-01", Summary: "brute force"}), now: now, wantErr: true},
		{name: "one byte changed", opener: s, token: flipped, tool: toolOpenTicket, args: args, now: now, wantErr: true},
		{name: "other key", opener: other, token: token, tool: toolOpenTicket, args: args, now: now, wantErr: true},
		{name: "not base64", opener: s, token: "not base64!", tool: toolOpenTicket, args: args, now: now, wantErr: true},
		{name: "too short", opener: s, token: "AAAA", tool: toolOpenTicket, args: args, now: now, wantErr: true},
		{name: "empty", opener: s, token: "", tool: toolOpenTicket, args: args, now: now, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := tt.opener.open(tt.token, tt.tool, tt.args, tt.now)
			if tt.wantErr {
				if !errors.Is(err, errBadState) {
					t.Fatalf("open = %+v, %v; want errBadState", st, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Tool != toolOpenTicket || st.Args != args || len(st.Nonce) != 32 || !st.Expires.Equal(now.Add(stateTTL)) {
				t.Errorf("state = %+v", st)
			}
		})
	}
}

func TestSealerNoncesDiffer(t *testing.T) {
	s, err := newSealer(testKey)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	a, b := s.issue(toolOpenTicket, "d", now), s.issue(toolOpenTicket, "d", now)
	sa, _ := s.open(a, toolOpenTicket, "d", now)
	sb, _ := s.open(b, toolOpenTicket, "d", now)
	if a == b || sa.Nonce == sb.Nonce {
		t.Errorf("two states for the same call share a token or a nonce: %q %q", sa.Nonce, sb.Nonce)
	}
}

func TestNoncesUse(t *testing.T) {
	var n nonces
	now := time.Now()
	exp := now.Add(stateTTL)
	if !n.use("a", exp, now) {
		t.Fatal("first use of a refused")
	}
	if n.use("a", exp, now) {
		t.Fatal("second use of a accepted")
	}
	if !n.use("b", exp, now) {
		t.Fatal("first use of b refused")
	}
	// Once expired, a nonce is forgotten: its state is refused as expired anyway.
	n.use("c", exp, exp.Add(time.Second))
	if len(n.used) != 1 {
		t.Errorf("after expiry %d nonces remembered, want 1 (c)", len(n.used))
	}
}

func TestNoncesConcurrentReplay(t *testing.T) {
	var n nonces
	now := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for range 8 {
		wg.Go(func() {
			if n.use("same", now.Add(stateTTL), now) {
				mu.Lock()
				accepted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if accepted != 1 {
		t.Errorf("%d concurrent uses of one nonce accepted, want 1", accepted)
	}
}

func TestParseKey(t *testing.T) {
	tests := []struct {
		in      string
		wantErr bool
	}{
		{in: "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"},
		{in: "00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF"},
		{in: "0011", wantErr: true},
		{in: "zz112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", wantErr: true},
		{in: "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00", wantErr: true},
	}
	for _, tt := range tests {
		key, err := parseKey(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseKey(%q) = %v, wantErr %v", tt.in, err, tt.wantErr)
		}
		if err == nil && len(key) != 32 {
			t.Errorf("parseKey(%q) gave %d bytes, want 32", tt.in, len(key))
		}
	}
}
