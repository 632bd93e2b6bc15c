package model

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/hosteval/hosteval/internal/yamlx"
)

// Limits bound how hard a run may press one endpoint (a base URL and a
// model), over all its cases together. Zero means no bound. In YAML:
//
//	limits: {concurrency: 4, requests_per_minute: 60, tokens_per_minute: 200000}
type Limits struct {
	// Concurrency is how many requests may be in flight at once.
	Concurrency int `yaml:"concurrency" doc:"Requests in flight at once." example:"4"`
	// RequestsPerMinute is spread evenly: one request every 60/N seconds.
	RequestsPerMinute int `yaml:"requests_per_minute" doc:"Requests per minute, spread evenly." example:"60"`
	// TokensPerMinute counts prompt and completion tokens. A request is
	// charged its estimate before it is sent (its body's bytes / 4 plus
	// max_tokens) and the difference to the usage reported after, so
	// that a minute's tokens stay near the bound.
	TokensPerMinute int `yaml:"tokens_per_minute" doc:"Prompt and completion tokens per minute (a request is charged its estimate, then its usage)." example:"100000"`
}

func (l Limits) check(prefix string) error {
	switch {
	case l.Concurrency < 0:
		return yamlx.Errorf(prefix+"limits.concurrency", "%d is negative", l.Concurrency)
	case l.RequestsPerMinute < 0:
		return yamlx.Errorf(prefix+"limits.requests_per_minute", "%d is negative", l.RequestsPerMinute)
	case l.TokensPerMinute < 0:
		return yamlx.Errorf(prefix+"limits.tokens_per_minute", "%d is negative", l.TokensPerMinute)
	}
	return nil
}

// Endpoints is the registry of the endpoints a run talks to, each with its
// limits and its backoff state, shared by every case of the run: a 429
// seen by one case slows them all. It also holds the run's HTTP
// connections to them, so that a case's request reuses the connection an
// earlier case's opened. The runner owns one per run; it is safe for
// concurrent use.
type Endpoints struct {
	client  *http.Client
	conns   *connSet
	library bool
	mu      sync.Mutex
	byName  map[string]*endpoint
}

// EndpointsOptions configures a registry. The zero value is usable.
type EndpointsOptions struct {
	// Concurrency is how many requests the run may have in flight to one
	// endpoint (its -concurrency): as many connections to each are kept
	// open between requests. A model request waits on the endpoint for
	// hundreds of milliseconds, so with the transport's default of 2 idle
	// connections most requests of a busy run would open a new one (a
	// TLS handshake each, and ports left in TIME_WAIT by the thousand).
	// Default: DefaultIdleConns.
	Concurrency int
	// RootCAs, when set, are the certificate authorities an https
	// endpoint must chain to instead of the system's (tests).
	RootCAs *x509.CertPool
	// Library has the models write every request with openai-go's
	// encoder instead of their own (encode.go): the switch back from
	// the fast path, which the runner sets from HOSTEVAL_TRANSPORT=sdk.
	Library bool
}

// DefaultIdleConns is the idle connections kept per endpoint when
// [EndpointsOptions] does not say the run's concurrency.
const DefaultIdleConns = 8

// NewEndpoints returns an empty registry; opts may be nil.
func NewEndpoints(opts *EndpointsOptions) *Endpoints {
	var o EndpointsOptions
	if opts != nil {
		o = *opts
	}
	conns := newConnSet()
	t := newTransport(o)
	t.DialContext = conns.dialer(t.DialContext)
	return &Endpoints{client: &http.Client{Transport: countingTransport{t, conns}}, conns: conns, library: o.Library, byName: map[string]*endpoint{}}
}

// newTransport is the standard library's default transport with room for
// o.Concurrency connections to each endpoint, kept open between requests. It speaks HTTP/2 to an
// https endpoint that offers it (ALPN), multiplexing the run's requests
// on few connections; plain http stays HTTP/1.1, as vLLM, Ollama and
// llama.cpp's server speak no cleartext HTTP/2.
func newTransport(o EndpointsOptions) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	idle := o.Concurrency
	if idle <= 0 {
		idle = DefaultIdleConns
	}
	t.MaxIdleConnsPerHost = idle
	t.MaxIdleConns = 0 // bounded per endpoint, not overall
	if o.Concurrency > 0 {
		// A request finding no idle connection dials a new one, even
		// when one is about to be put back (a response read, its
		// connection not yet idle): on a busy machine a run at
		// concurrency 64 opened half again as many connections as it
		// had cases, closing the surplus. No more requests are in flight
		// than the run's concurrency, so waiting for a connection never
		// waits for long.
		t.MaxConnsPerHost = o.Concurrency
	}
	t.ForceAttemptHTTP2 = true
	if o.RootCAs != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12}
	}
	return t
}

// CloseIdle closes the run's connections that no request is using; the
// runner calls it when the run ends. With no request in flight it closes
// every connection the run opened, a background dial's too (connSet), and
// one such dial finishing later is closed at once. A later request opens
// a new one.
func (r *Endpoints) CloseIdle() {
	r.client.CloseIdleConnections()
	r.conns.closeAll()
}

// Register declares an endpoint and its limits. Registering it again
// with other non-zero limits is an error naming both, so that two
// scenarios cannot silently disagree on one endpoint; the runner
// registers every model of a run before it starts. An endpoint a model
// reaches without being registered gets the limits of the first model
// that reaches it.
func (r *Endpoints) Register(cfg OpenAIConfig) error {
	_, err := r.endpoint(cfg, true)
	return err
}

// EndpointStats is what one endpoint went through during a run.
type EndpointStats struct {
	// Endpoint is the base URL and the model, e.g.
	// "http://localhost:8000/v1 gpt-oss-120b".
	Endpoint string `json:"endpoint"`
	Requests int64  `json:"requests"`
	// Throttled counts 429 answers.
	Throttled int64 `json:"throttled,omitempty"`
	// Waited is the time requests spent waiting for a slot, the rate
	// limits or a 429's pause, summed over requests.
	Waited time.Duration `json:"waited_ns,omitempty"`
}

// Stats returns every endpoint's counts, in name order.
func (r *Endpoints) Stats() []EndpointStats {
	r.mu.Lock()
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range r.byName {
			if !yield(n) {
				return
			}
		}
	})
	eps := make([]*endpoint, 0, len(names))
	for _, n := range names {
		eps = append(eps, r.byName[n])
	}
	r.mu.Unlock()
	out := make([]EndpointStats, 0, len(eps))
	for _, e := range eps {
		e.mu.Lock()
		out = append(out, EndpointStats{Endpoint: e.name, Requests: e.sent, Throttled: e.throttles, Waited: e.waited})
		e.mu.Unlock()
	}
	return out
}

func endpointName(cfg OpenAIConfig) string {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	return strings.TrimRight(base, "/") + " " + cfg.Model
}

func (r *Endpoints) endpoint(cfg OpenAIConfig, strict bool) (*endpoint, error) {
	name := endpointName(cfg)
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.byName[name]
	if !ok {
		e = newEndpoint(name, cfg.Limits, cfg.MaxRetryDelay)
		r.byName[name] = e
		return e, nil
	}
	if strict && cfg.Limits != (Limits{}) && e.limits != (Limits{}) && cfg.Limits != e.limits {
		return nil, fmt.Errorf("endpoint %s: limits %+v here, %+v elsewhere in the run: give them once", name, cfg.Limits, e.limits)
	}
	return e, nil
}

// Backoff of an endpoint after a 429 without Retry-After: 0.5 s doubling
// with each 429 in a row, up to the model's max_retry_delay or this.
const maxThrottleBackoff = 8 * time.Second

// endpoint is one base URL and model: its slots, its rate limiters and the
// pause a 429 puts on every request to it.
type endpoint struct {
	name     string
	limits   Limits
	maxPause time.Duration
	slots    chan struct{} // nil: no concurrency bound
	reqRate  *rate.Limiter // nil: no request rate
	tokRate  *rate.Limiter // nil: no token rate
	// configured is the request rate configured, which a run of 429s
	// lowers and successes restore.
	configured rate.Limit

	mu          sync.Mutex
	pausedUntil time.Time
	strikes     int // 429s in a row
	sent        int64
	throttles   int64
	waited      time.Duration
}

func newEndpoint(name string, l Limits, maxPause time.Duration) *endpoint {
	if maxPause <= 0 {
		maxPause = maxThrottleBackoff
	}
	e := &endpoint{name: name, limits: l, maxPause: maxPause}
	if l.Concurrency > 0 {
		e.slots = make(chan struct{}, l.Concurrency)
	}
	if l.RequestsPerMinute > 0 {
		e.configured = rate.Limit(float64(l.RequestsPerMinute) / 60)
		e.reqRate = rate.NewLimiter(e.configured, 1)
	}
	if l.TokensPerMinute > 0 {
		e.tokRate = rate.NewLimiter(rate.Limit(float64(l.TokensPerMinute)/60), l.TokensPerMinute)
	}
	return e
}

// acquire waits until a request of about estimate tokens may be sent:
// for a slot, for the rate limits, and until any pause a 429 put on the
// endpoint is over. The returned release frees the slot and charges the
// tokens the answer reported (0 when unknown).
func (e *endpoint) acquire(ctx context.Context, estimate int) (release func(used int), err error) {
	start := time.Now()
	if e.slots != nil {
		select {
		case e.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	free := func() {
		if e.slots != nil {
			<-e.slots
		}
	}
	estimate = min(max(estimate, 1), max(e.limits.TokensPerMinute, 1))
	for {
		if err := e.waitPause(ctx); err != nil {
			free()
			return nil, err
		}
		if e.reqRate != nil {
			if err := e.reqRate.Wait(ctx); err != nil {
				free()
				return nil, err
			}
		}
		if e.tokRate != nil {
			if err := e.tokRate.WaitN(ctx, estimate); err != nil {
				free()
				return nil, err
			}
		}
		// A 429 may have paused the endpoint while this request waited
		// for its turn; it waits for the pause too.
		e.mu.Lock()
		paused := time.Now().Before(e.pausedUntil)
		if !paused {
			e.sent++
			e.waited += time.Since(start)
		}
		e.mu.Unlock()
		if !paused {
			break
		}
	}
	return func(used int) {
		if e.tokRate != nil && used > estimate {
			e.tokRate.ReserveN(time.Now(), min(used-estimate, e.limits.TokensPerMinute))
		}
		free()
	}, nil
}

func (e *endpoint) waitPause(ctx context.Context) error {
	for {
		e.mu.Lock()
		d := time.Until(e.pausedUntil)
		e.mu.Unlock()
		if d <= 0 {
			return nil
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}

// throttled records a 429 and pauses every request to the endpoint: for
// the Retry-After the server asked (given), or for a backoff that doubles
// with each 429 in a row. A request rate, when set, is halved; successes
// bring it back. It returns the pause.
func (e *endpoint) throttled(retryAfter time.Duration, given bool) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.throttles++
	pause := retryAfter
	if !given {
		pause = min(500*time.Millisecond<<min(e.strikes, 16), e.maxPause)
		pause -= time.Duration(rand.Int64N(int64(pause/4) + 1)) // jitter, so cases do not return in step
	}
	e.strikes++
	if until := time.Now().Add(pause); until.After(e.pausedUntil) {
		e.pausedUntil = until
	}
	if e.reqRate != nil {
		e.reqRate.SetLimit(max(e.reqRate.Limit()/2, e.configured/16))
	}
	return pause
}

// succeeded ends a run of 429s and lets a halved request rate recover by
// a tenth of the configured rate per success.
func (e *endpoint) succeeded() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.strikes = 0
	if e.reqRate != nil {
		if l := e.reqRate.Limit(); l < e.configured {
			e.reqRate.SetLimit(min(l+e.configured/10, e.configured))
		}
	}
}
