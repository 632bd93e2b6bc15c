package host

import (
	"log/slog"
	"slices"
)

// Whose question is it? A 2025-11-25 server's elicitation/create request
// names no call. With one host per server there is only ever one call in
// flight to charge it to. A Pool's shared server serves many hosts at once
// (server-everything, shared across a batch's cases): while calls of two
// hosts are in flight on it, a question may come from either, and putting
// it to the first host's person would show one case's person another
// case's question, and answer it for them. The host declines it instead:
// the person's default is no.

// asker returns the call a question from s is for: the oldest call in
// flight on s when every call in flight is of one host. Otherwise it
// returns nil and the hosts whose calls are in flight (none, or several).
func (s *serverConn) asker() (*callState, []*Host) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var hosts []*Host
	for _, c := range s.calls {
		if c.host != nil && !slices.Contains(hosts, c.host) {
			hosts = append(hosts, c.host)
		}
	}
	if len(hosts) != 1 {
		return nil, hosts
	}
	for _, c := range s.calls {
		if c.host != nil {
			return c, hosts
		}
	}
	return nil, nil
}

// noteUnattributed tells each host with a call in flight that a question
// of server was declined because it could not be attributed.
func noteUnattributed(server string, hosts []*Host) {
	for _, h := range hosts {
		h.logf(slog.LevelWarn, "server asked a question that names no call while calls of several sessions were in flight on it: declined",
			"server", server, "sessions", len(hosts))
		h.step("host", server+" asked a question while other sessions' calls were in flight on it: declined, it could be for any of them", nil)
	}
}
