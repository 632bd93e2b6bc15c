package host

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Pool keeps Shareable servers running for many hosts, so that a batch of
// cases pays for starting a slow server once. A shared server is connected
// once per distinct configuration (spec, protocol mode, elicitation on or
// off) and is never reset: it keeps whatever state earlier cases left, which
// is why only stateless servers, or servers whose state no expectation reads,
// should be marked shareable.
//
// Questions from a shared server go to the host whose call is in flight on
// it, or are declined when no host's is, or several hosts' are (a
// 2025-11-25 server's elicitation/create names no call: see asker.go). A
// shared server that died is started again on next use.
type Pool struct {
	opts Options // ServerLog, Wire, ConnectTimeout, TerminateGrace, ClientName

	mu    sync.Mutex
	conns map[string]*poolEntry
	// tables are the tool tables of hosts whose servers are all shared
	// (see table): a run's cases of one configuration build theirs once.
	tables Tables
}

type poolEntry struct {
	once sync.Once
	// ready is closed once conn and err are set.
	ready chan struct{}
	conn  *serverConn
	err   error
	// owner is the host used to connect: its options decide the client's
	// capabilities and where stderr goes.
	owner *Host
}

// NewPool returns an empty pool. Of opts, it uses the terminate grace, the
// client name, the Eras and Groups, and the ServerLog and Wire writers,
// which receive every shared server's stderr and traffic. The protocol mode,
// the elicitation capability and the connection budgets are those of the
// first host that asks for a server (and its Eras and Groups, when opts has
// none).
func NewPool(opts Options) *Pool {
	return &Pool{opts: opts, conns: map[string]*poolEntry{}}
}

func poolKey(spec ServerSpec, mode Mode, noElicitation bool) string {
	return strings.Join([]string{
		spec.Name, spec.Command, strings.Join(spec.Args, "\x00"), strings.Join(spec.Env, "\x00"), spec.Dir,
		spec.URL, fmt.Sprint(spec.Headers), strings.Join(spec.AutoRun, ","), string(mode), fmt.Sprint(noElicitation),
		fmt.Sprintf("%p", spec.Transport),
		// One handler per server per run: servers with other OAuth
		// configurations (other handlers) hold other tokens.
		fmt.Sprintf("%p", spec.OAuth),
	}, "\x01")
}

// get returns a connected server for spec, starting it on first use (or
// after it died). Concurrent callers for one configuration share one start.
func (p *Pool) get(ctx context.Context, spec ServerSpec, hostOpts Options) (*serverConn, error) {
	key := poolKey(spec, hostOpts.Protocol, hostOpts.NoElicitation)
	p.mu.Lock()
	e := p.conns[key]
	var dead *serverConn
	if e != nil && e.started() && e.conn != nil && e.conn.deadReason() != "" {
		dead, e = e.conn, nil
	}
	if e == nil {
		e = &poolEntry{ready: make(chan struct{})}
		p.conns[key] = e
	}
	p.mu.Unlock()
	if dead != nil {
		dead.close() // its process has ended: this only reaps it
	}
	e.once.Do(func() {
		defer close(e.ready)
		o := p.opts
		// The first case's connection settings start it.
		o.Protocol, o.NoElicitation, o.Paths = hostOpts.Protocol, hostOpts.NoElicitation, hostOpts.Paths
		o.Connect, o.Preflight = hostOpts.Connect, hostOpts.Preflight
		if o.Eras == nil {
			o.Eras = hostOpts.Eras
		}
		if o.Groups == nil {
			o.Groups = hostOpts.Groups
		}
		o = o.withDefaults()
		// The owner is a host of its own that only connects. A question
		// from the server goes to the host whose call is in flight on it
		// (see Host.legacyElicit), not to the owner.
		e.owner = &Host{opts: o, servers: map[string]*serverConn{}}
		if o.Wire != nil {
			// A shared server outlives every case: its trace has no
			// case to be bounded by (its stderr is).
			e.owner.wire = &wireTrace{w: o.Wire, start: time.Now(), budget: -1}
		}
		// The server outlives the case that started it: only the connect
		// deadline bounds its start, not the case's context.
		e.conn, e.err = e.owner.connect(context.WithoutCancel(ctx), spec)
		if e.conn != nil {
			e.owner.servers[spec.Name] = e.conn
			e.conn.shared = true
			e.conn.info.Shared = true
		}
	})
	if e.err != nil {
		p.mu.Lock()
		if p.conns[key] == e {
			delete(p.conns, key) // let a later case try again
		}
		p.mu.Unlock()
		return e.conn, e.err
	}
	return e.conn, nil
}

// table returns the table of a host whose servers are all the pool's: it
// is built once per configuration and shared, read-only, by every host
// that asks with the same one.
func (p *Pool) table(servers []*serverConn, opts Options) (*toolTable, error) {
	return p.tables.table(servers, opts)
}

// started reports whether the entry's connection attempt has ended.
func (e *poolEntry) started() bool {
	select {
	case <-e.ready:
		return true
	default:
		return false
	}
}

// EndInputs closes the connections of the pool's started stdio servers
// and their input, and returns once it has: each server's grace to exit
// starts now. Close, which waits out the grace and reaps them, usually
// runs in a goroutine of its own, and such a goroutine waited about a
// millisecond for a processor while its starter went on working.
func (p *Pool) EndInputs() {
	p.mu.Lock()
	var conns []*serverConn
	for _, e := range p.conns {
		// Only a process has an input to end and a grace; an HTTP
		// session's close (a DELETE) is left to Close.
		if e.started() && e.conn != nil && e.conn.proc != nil {
			conns = append(conns, e.conn)
		}
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.endInput)
	}
	wg.Wait()
}

// Close stops every shared server and waits until each is reaped.
func (p *Pool) Close() error {
	p.mu.Lock()
	entries := make([]*poolEntry, 0, len(p.conns))
	for _, e := range p.conns {
		entries = append(entries, e)
	}
	p.conns = map[string]*poolEntry{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range entries {
		<-e.ready // a start in flight finishes before it is stopped
		if e.conn != nil {
			wg.Go(e.conn.close)
		}
	}
	wg.Wait()
	return nil
}
