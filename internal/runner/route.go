package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/scenario"
)

// Route-only cases (a dataset's mode: route) end at the model's first
// answer and send nothing to any server: not a call, and not the
// handshake and listing of a case's own servers either. A run lists each
// live server they use once, the first time a case needs it, and every
// route-only case offers its tools from that listing as a catalog (a
// catalog file's server needs no listing at all). So a route-only case
// starts no process, and the run's cases of one configuration share one
// tool table (host.Tables).

// listings are the tools of the live servers a run's route-only cases
// use, listed once per server and connection setting.
type listings struct {
	// log receives the listed servers' stderr (their request logs): the
	// run's shared-servers.jsonl, nil without one.
	log     io.Writer
	mu      sync.Mutex
	entries map[string]*listingEntry
}

type listingEntry struct {
	once sync.Once
	cat  *host.Catalog
	err  error
}

// listingKey identifies a server and how it is connected: what could make
// it list other tools.
func listingKey(spec host.ServerSpec, o host.Options) string {
	return strings.Join([]string{
		spec.Name, spec.Command, strings.Join(spec.Args, "\x00"), strings.Join(spec.Env, "\x00"), spec.Dir,
		fmt.Sprint(spec.InheritEnv), spec.URL, fmt.Sprint(spec.Headers), fmt.Sprintf("%p/%p", spec.OAuth, spec.Transport),
		string(o.Protocol), fmt.Sprint(o.NoElicitation),
	}, "\x01")
}

// route makes the servers of c's host options o catalogs: each live
// server is listed once per run, a catalog file's is one already. o are
// c's options with ${CASE_DIR} as written (c.HostOptions): a server that
// uses a case folder is listed in a folder of its own, once. The error
// names a server that did not list its tools.
func (ls *listings) route(ctx context.Context, c *scenario.Case, o *host.Options) error {
	for i, spec := range o.Servers {
		if spec.Catalog != nil {
			continue
		}
		key := listingKey(spec, *o)
		ls.mu.Lock()
		if ls.entries == nil {
			ls.entries = map[string]*listingEntry{}
		}
		e := ls.entries[key]
		if e == nil {
			e = &listingEntry{}
			ls.entries[key] = e
		}
		ls.mu.Unlock()
		e.once.Do(func() { e.cat, e.err = list(ctx, c, i, *o, ls.log) })
		if e.err != nil {
			return e.err
		}
		o.Servers[i] = host.ServerSpec{Name: spec.Name, AutoRun: spec.AutoRun, Catalog: e.cat}
	}
	return nil
}

// list connects the i-th server of o with o's connection settings, copies
// out its tools as it listed them, and stops it.
func list(ctx context.Context, c *scenario.Case, i int, o host.Options, log io.Writer) (*host.Catalog, error) {
	spec := o.Servers[i]
	if c.UsesCaseDir() {
		// A case's folder is the case's; the listing gets one of its own.
		tmp, err := os.MkdirTemp("", "hosteval-listing-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir, err := PrepareCaseDir(c, tmp)
		if err != nil {
			return nil, err
		}
		spec = c.HostOptionsIn(dir).Servers[i]
	}
	lo := host.Options{
		Servers: []host.ServerSpec{spec}, Protocol: o.Protocol, NoElicitation: o.NoElicitation,
		Budgets: budget.Budgets{Connect: o.Connect},
		Eras:    o.Eras, Groups: o.Groups, TerminateGrace: o.TerminateGrace, ClientName: o.ClientName,
		ServerLog: log,
	}
	// The listing outlives the case that asked for it: every later case
	// uses it. Only the connect budget bounds it.
	h, err := host.Start(context.WithoutCancel(ctx), lo)
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", spec.Name, err)
	}
	defer h.Close()
	if s := h.Servers()[0]; s.Error != "" {
		return nil, fmt.Errorf("server %s did not start: %s", spec.Name, s.Error)
	}
	cat := h.Catalog(spec.Name)
	if cat == nil {
		return nil, fmt.Errorf("server %s did not list its tools", spec.Name)
	}
	return cat, nil
}
