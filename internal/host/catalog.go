package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/record"
)

// Catalog is a server's tools as a catalog file holds them (hosteval
// catalog -save writes one from a live server, each tool as tools/list
// returned it): a server whose tools the host offers without starting
// anything. A route-only case (which scores the model's first answer and
// sends nothing) needs no more of a server, so a third-party catalog can be
// evaluated without the server or its credentials; a call of one of its
// tools in a whole conversation is answered by the host with an error
// saying the server is not connected, and nothing is sent anywhere.
//
// A Catalog is read-only once made and may serve many hosts at once: each
// spec (name and auto-run list) gets one connection of its own, shared by
// every host, so that a run's tables over the same catalogs are built once
// (see Tables).
type Catalog struct {
	// Source names where the tools came from, in records and in the error
	// a call gets: a file, or "server <name>" for a listing kept by a run.
	Source string
	// Server is the server's name where the tools were listed, "" when
	// unknown; Protocol, ServerName and ServerVersion are what it said
	// when the catalog was made.
	Server        string
	Protocol      string
	ServerName    string
	ServerVersion string
	// Instructions are the server's instructions (its answer to
	// server/discover or initialize): text the model may be given, and
	// that hosteval lint reads and pins.
	Instructions string
	// Tools are the tools, each as the server wrote it.
	Tools []json.RawMessage

	once    sync.Once
	listing *listing
	err     error

	mu    sync.Mutex
	conns map[string]*serverConn
}

// NewCatalog returns a catalog of tools, each a tool object as tools/list
// returns it; it checks that each has a name, and that no name repeats.
func NewCatalog(source string, tools []json.RawMessage) (*Catalog, error) {
	c := &Catalog{Source: source, Tools: tools}
	if _, err := c.list(); err != nil {
		return nil, err
	}
	return c, nil
}

// Names are the tools' names, in order.
func (c *Catalog) Names() []string {
	l, err := c.list()
	if err != nil {
		return nil
	}
	return l.names()
}

// TaskOnly are the names of the tools that only run as tasks: the host
// never offers them (see tasks.go).
func (c *Catalog) TaskOnly() []string {
	l, err := c.list()
	if err != nil {
		return nil
	}
	return l.taskOnly
}

// Subset returns a catalog of the tools at the given indexes, in that
// order, from the same server.
func (c *Catalog) Subset(source string, indexes []int) *Catalog {
	sub := &Catalog{Source: source, Server: c.Server, Protocol: c.Protocol, ServerName: c.ServerName, ServerVersion: c.ServerVersion,
		Instructions: c.Instructions}
	for _, i := range indexes {
		sub.Tools = append(sub.Tools, c.Tools[i])
	}
	return sub
}

// list reads the tools once: each with the SDK's decoder, as a page of
// tools/list would be.
func (c *Catalog) list() (*listing, error) {
	c.once.Do(func() {
		l := &listing{}
		seen := map[string]bool{}
		var errs []error
		for i, raw := range c.Tools {
			var t mcp.Tool
			if err := json.Unmarshal(raw, &t); err != nil {
				errs = append(errs, fmt.Errorf("tool %d: %w", i+1, err))
				continue
			}
			name, taskSupport, ok := readToolHead(raw, PathsFast)
			switch {
			case !ok || name == "":
				errs = append(errs, fmt.Errorf("tool %d has no name", i+1))
				continue
			case seen[name]:
				errs = append(errs, fmt.Errorf("tool %q is listed twice", name))
				continue
			}
			seen[name] = true
			if taskSupport == "required" {
				l.taskOnly = append(l.taskOnly, name)
			}
			compact, err := compactJSON(raw)
			if err != nil {
				errs = append(errs, fmt.Errorf("tool %q: %w", name, err))
				continue
			}
			l.tools = append(l.tools, &t)
			l.raw = append(l.raw, compact)
		}
		c.listing, c.err = l, errors.Join(errs...)
	})
	return c.listing, c.err
}

// conn returns the catalog's connection for spec: made once per name and
// auto-run list, and never closed.
func (c *Catalog) conn(spec ServerSpec, mode Mode) (*serverConn, error) {
	l, err := c.list()
	if err != nil {
		return nil, fmt.Errorf("%w: server %s: %s: %w", ErrConfig, spec.Name, c.Source, err)
	}
	key := spec.Name + "\x00" + strings.Join(spec.AutoRun, "\x00") + "\x00" + fmt.Sprint(spec.AutoRun == nil) + "\x00" + string(mode)
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.conns[key]; ok {
		return s, nil
	}
	s := &serverConn{spec: spec, catalog: c, listing: l}
	s.info = record.Server{Operation: record.OpConnect, Time: time.Now().UTC(), Name: spec.Name, Mode: string(mode),
		Protocol: c.Protocol, ServerName: c.ServerName, ServerVersion: c.ServerVersion, Tools: len(l.tools),
		EraReason: "catalog: " + c.Source}
	if c.conns == nil {
		c.conns = map[string]*serverConn{}
	}
	c.conns[key] = s
	return s, nil
}

// Catalog returns the tools a connected server listed, each as it wrote
// them, with what it said of itself: what catalog -save writes, and what
// a run keeps of a server whose cases only route. Nil for a server that
// did not connect.
func (h *Host) Catalog(server string) *Catalog {
	s := h.servers[server]
	if s == nil || (s.sess() == nil && s.catalog == nil) {
		return nil
	}
	if s.catalog != nil {
		return s.catalog
	}
	l := s.currentListing()
	c := &Catalog{Source: "a listing of server " + server, Server: server, Protocol: s.info.Protocol, ServerName: s.info.ServerName,
		ServerVersion: s.info.ServerVersion, Tools: l.raw}
	if res := s.sess().InitializeResult(); res != nil {
		c.Instructions = res.Instructions
	}
	c.once.Do(func() { c.listing = l })
	return c
}

// Tables keeps the tool tables of a run's hosts whose servers are all
// shared or catalogs, so that every case of one configuration uses one
// table, built and measured once. The zero value is ready; it is safe for
// concurrent use.
type Tables struct {
	mu     sync.Mutex
	tables map[string]*toolTable
}

// table returns the table of servers under opts, building it once.
func (ts *Tables) table(servers []*serverConn, opts Options) (*toolTable, error) {
	key := tableKey(servers, opts)
	ts.mu.Lock()
	t, ok := ts.tables[key]
	ts.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := buildTable(servers, opts)
	if err != nil {
		return nil, err
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if prev, ok := ts.tables[key]; ok {
		return prev, nil // built meanwhile by another host: one table per key
	}
	if ts.tables == nil {
		ts.tables = map[string]*toolTable{}
	}
	ts.tables[key] = t
	return t, nil
}
