package model

import "github.com/hosteval/hosteval/internal/model/replay"

// Wire is what a case's models share with the run around them: where their
// requests are recorded or replayed, cached, and limited. Every field is
// optional; the zero Wire sends every request straight to the endpoint.
type Wire struct {
	// Cassette records or replays the case's requests (one per case).
	Cassette *replay.Cassette
	// Cache answers requests seen before, in any case of any run.
	Cache *replay.Cache
	// Endpoints holds the limits and backoff of every endpoint of the
	// run (one per run).
	Endpoints *Endpoints
}

// Source says where a [Response] came from. A response that did not come
// from the endpoint carries the usage and latency recorded with it; the
// record marks it replayed.
type Source string

const (
	// FromEndpoint: the endpoint answered now.
	FromEndpoint Source = ""
	// FromCassette: replayed from the case's cassette.
	FromCassette Source = "cassette"
	// FromCache: answered from the response cache.
	FromCache Source = "cache"
)

// Using returns m with w applied when m talks to an endpoint, and m
// itself otherwise: a scripted or rules model decides the same way every
// time and has nothing to record, cache or limit.
func Using(m Model, w Wire) Model {
	if o, ok := m.(*OpenAI); ok {
		return o.With(w)
	}
	return m
}
