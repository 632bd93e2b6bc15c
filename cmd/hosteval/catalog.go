package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hosteval/hosteval/internal/catalog"
	"github.com/hosteval/hosteval/internal/catalog/toolsfile"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/text"
)

var catalogCommand = command{
	name:        "catalog",
	summary:     "measure what a tool catalog costs in model context",
	usage:       catalogUsage,
	onInterrupt: cancelContext,
	run:         runCatalog,
}

const catalogUsage = `usage: hosteval catalog [flags]

Starts the servers and measures the tools array the host sends with every
model request, from its exact bytes (o200k_base tokens): per tool its size,
its marginal cost (the array with it minus the array without it), and the
split between description, parameters schema and envelope; per server; per
turn of -requests model requests. Then the findings, each with the bytes
and tokens at stake: a "$schema" in input schemas, the same "$defs" block
repeated in several tools, "<", ">" and "&" (what a host that escapes them
pays), long descriptions, and the "[server] " prefix the host adds.

-as names the form counted (the report says which): sent (the default) is
the array as hosteval sends it, with server__tool names and "[server] "
before each description; listed is the tools as their servers listed them,
in the same function format: each tool's own name and description. Both
carry each inputSchema exactly as its server sent it (key order and all):
listed is what a host that forwards tools unchanged sends, what a server
author compares. -before compares only with a catalog of the same form.

-json writes the measure as a JSON document ("kind": "hosteval.catalog",
"schema": 1); -before compares with such a document, tool by tool.

-save FILE also writes the one server's tools as its tools/list returned
them (every page, each tool byte for byte, "kind": "hosteval.tools"): a
scenario's server {name: X, catalog: FILE} stands in for the server with
it, so that route-only evals of its catalog need neither the server nor
its credentials (docs/scenarios.md, datasets). With
-add and no -servers, only the added servers run and the servers file is
not read. The catalog is not printed when a server does not start: a
partial catalog would compare as tools removed. Needs no model.

exit codes: 0 measured; 2 a usage or configuration error; 3 a server would
not start; 130 interrupted.

examples:
  hosteval catalog
  hosteval catalog -servers cmdb,tickets -requests 5
  hosteval catalog -add 'memory=tools/node/node_modules/.bin/mcp-server-memory'
  hosteval catalog -servers support -json > catalog.json
  hosteval catalog -servers support -as listed
  hosteval catalog -servers support -before catalog.json
  hosteval catalog -servers cmdb -save scenarios/catalogs/cmdb.json`

func runCatalog(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "catalog", catalogUsage)
	var hf hostFlags
	hf.register(fs)
	var adds addFlag
	fs.Var(&adds, "add", "add an ad-hoc stdio server: 'name=command arg arg' (repeatable; quote arguments with ' or \")")
	requests := fs.Int("requests", catalog.DefaultRequests, "model requests per turn: each sends the whole tools array")
	asJSON := fs.Bool("json", false, "write the JSON document instead of tables")
	before := fs.String("before", "", "compare with this file, the -json output of an earlier catalog")
	longTokens := fs.Int("long-tokens", catalog.DefaultLongTokens, "flag descriptions over this many tokens")
	as := fs.String("as", catalog.FormSent, "the form counted: sent (as hosteval sends it) or listed (as the servers list their tools)")
	save := fs.String("save", "", "write the one server's tools, as its tools/list returned them, to this file (a scenario's catalog:)")
	var layout layoutFlags
	layout.register(fs, false)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *requests < 1 {
		return usagef("-requests %d: want 1 or more", *requests)
	}
	if *longTokens < 1 {
		return usagef("-long-tokens %d: want 1 or more", *longTokens)
	}
	if *as != catalog.FormSent && *as != catalog.FormListed {
		return usagef("-as %q: want sent or listed", *as)
	}
	opts := catalog.Options{RequestsPerTurn: *requests, LongTokens: *longTokens, Form: *as}
	if *before != "" {
		prev, err := readCatalog(*before)
		if err != nil {
			return usagef("-before: %w", err)
		}
		if prev.Form != *as {
			return usagef("-before: %s was counted as %s, and this catalog as %s: compare like with like (-as %s)", *before, prev.Form, *as, prev.Form)
		}
		opts.Before = prev
	}
	hopts, err := catalogHostOptions(e, &hf, adds)
	if err != nil {
		return err
	}
	if err := hf.login(ctx); err != nil {
		return err
	}
	var saveTools func(*host.Host) error
	if *save != "" {
		if len(hopts.Servers) != 1 {
			return usagef("-save writes one server's tools: name one server with -servers or -add (got %d)", len(hopts.Servers))
		}
		saveTools = func(h *host.Host) error { return saveCatalog(e, h, hopts.Servers[0].Name, *save) }
	}
	entries, array, err := offeredTools(ctx, hopts, *as, saveTools)
	if err != nil {
		return err
	}
	c, err := catalog.Measure(ctx, entries, array, opts)
	if err != nil {
		return err
	}
	if *asJSON {
		return c.WriteJSON(e.stdout)
	}
	out := fitLines(e.stdout, layout.width(e))
	return errors.Join(c.WriteText(out, layout.width(e), wideHint), out.Close())
}

// catalogHostOptions builds the host options: the servers file's servers
// (unless only -add servers are asked for) and the added ones.
func catalogHostOptions(e *env, hf *hostFlags, adds addFlag) (host.Options, error) {
	options := hf.options
	if len(adds) > 0 && hf.servers == "" {
		// An ad-hoc measure of one server must not need the servers file.
		options = hf.optionsWithoutServers
	}
	opts, err := options(e)
	if err != nil {
		return host.Options{}, err
	}
	for _, a := range adds {
		if slices.ContainsFunc(opts.Servers, func(s host.ServerSpec) bool { return s.Name == a.Name }) {
			return host.Options{}, usagef("-add %s: the servers file has a server of that name", a.Name)
		}
		opts.Servers = append(opts.Servers, a)
	}
	if len(opts.Servers) == 0 {
		return host.Options{}, usagef("no servers: name some with -servers or -add")
	}
	return opts, nil
}

// offeredTools starts the host, copies out the offered tools and the tools
// array in the form asked for, and stops the servers before the (slower)
// measure. A server that does not start fails it: a partial catalog would
// compare as tools removed.
func offeredTools(ctx context.Context, opts host.Options, form string, save func(*host.Host) error) ([]catalog.Entry, []byte, error) {
	h, err := host.Start(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	defer h.Close()
	var unknown error
	if names := h.UnknownNames(); len(names) > 0 {
		unknown = fmt.Errorf("-tools names tools no server offers: %s", strings.Join(names, ", "))
	}
	if err := serverErrors(h); err != nil {
		// A server that is down is the cause: the names it would offer
		// look unknown.
		return nil, nil, errors.Join(err, unknown)
	}
	if unknown != nil {
		return nil, nil, usageError{unknown}
	}
	if save != nil {
		if err := save(h); err != nil {
			return nil, nil, err
		}
	}
	var entries []catalog.Entry
	if form == catalog.FormSent {
		for _, t := range h.Offered() {
			entries = append(entries, catalog.Entry{Name: t.Name, Server: t.Server, Def: t.Def})
		}
		return entries, h.ToolsJSON(), nil
	}
	// As listed: the same tools, each as its server wrote it.
	defs := make([][]byte, 0, len(h.Offered()))
	for _, t := range h.Offered() {
		def, err := t.ListedDef()
		if err != nil {
			return nil, nil, fmt.Errorf("tool %s of server %s: %w", t.MCP.Name, t.Server, err)
		}
		entries = append(entries, catalog.Entry{Name: t.MCP.Name, Server: t.Server, Def: def})
		defs = append(defs, def)
	}
	array := append(append([]byte("["), bytes.Join(defs, []byte(","))...), ']')
	return entries, array, nil
}

func readCatalog(path string) (*catalog.Catalog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := catalog.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// saveCatalog writes the server's tools, as it listed them, to path.
func saveCatalog(e *env, h *host.Host, server, path string) error {
	c := h.Catalog(server)
	if c == nil {
		return fmt.Errorf("-save: server %s did not connect", server)
	}
	var b bytes.Buffer
	err := toolsfile.Write(&b, toolsfile.Tools{Server: server, Protocol: c.Protocol, ServerName: c.ServerName,
		ServerVersion: c.ServerVersion, Instructions: c.Instructions, Tools: c.Tools})
	if err != nil {
		return fmt.Errorf("-save: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("-save: %w", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("-save: %w", err)
	}
	fmt.Fprintf(e.stderr, "catalog: saved the %s of %s to %s\n", text.Count(len(c.Tools), "tool"), server, path)
	return nil
}
