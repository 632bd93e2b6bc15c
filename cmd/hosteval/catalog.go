package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/hosteval/hosteval/internal/catalog"
	"github.com/hosteval/hosteval/internal/host"
)

var catalogCommand = command{
	name:    "catalog",
	summary: "measure what a tool catalog costs in model context",
	usage:   catalogUsage,
	run:     runCatalog,
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

-json writes the measure as a JSON document ("kind": "hosteval.catalog",
"schema": 1); -before compares with such a document, tool by tool. With
-add and no -servers, only the added servers run and the servers file is
not read. The catalog is not printed when a server does not start: a
partial catalog would compare as tools removed. Needs no model.

exit codes: 0 measured; 2 a usage error; 3 a server would not start.

examples:
  hosteval catalog
  hosteval catalog -servers cmdb,tickets -requests 5
  hosteval catalog -add 'everything=node tools/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js'
  hosteval catalog -servers support -json > catalog.json
  hosteval catalog -servers support -before catalog.json`

func runCatalog(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "catalog", catalogUsage)
	var hf hostFlags
	hf.register(fs)
	var adds addFlag
	fs.Var(&adds, "add", "add an ad-hoc stdio server: 'name=command arg arg' (repeatable; quote arguments with ' or \")")
	requests := fs.Int("requests", catalog.DefaultRequests, "model requests per turn: each sends the whole tools array")
	asJSON := fs.Bool("json", false, "write the JSON document instead of tables")
	before := fs.String("before", "", "compare with this file, the -json output of an earlier catalog")
	longTokens := fs.Int("long-tokens", catalog.DefaultLongTokens, "flag descriptions over this many tokens")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		return usageErr(e, "catalog: unexpected argument %q", fs.Arg(0))
	}
	if *requests < 1 {
		return usageErr(e, "catalog: -requests %d: want 1 or more", *requests)
	}
	if *longTokens < 1 {
		return usageErr(e, "catalog: -long-tokens %d: want 1 or more", *longTokens)
	}
	opts := catalog.Options{RequestsPerTurn: *requests, LongTokens: *longTokens}
	if *before != "" {
		prev, err := readCatalog(*before)
		if err != nil {
			return usageErr(e, "catalog: -before: %v", err)
		}
		opts.Before = prev
	}
	hopts, err := catalogHostOptions(&hf, adds)
	if err != nil {
		return usageErr(e, "catalog: %v", err)
	}

	ctx, stop := cancelOnInterrupt(ctx, e)
	defer stop()
	entries, array, code := offeredTools(ctx, e, hopts)
	if code != exitOK {
		return code
	}
	c, err := catalog.Measure(ctx, entries, array, opts)
	if err != nil {
		fmt.Fprintf(e.stderr, "hosteval: catalog: %v\n", err)
		if ctx.Err() != nil {
			return exitSignaled
		}
		return exitInfra
	}
	if *asJSON {
		err = c.WriteJSON(e.stdout)
	} else {
		err = c.WriteText(e.stdout)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "hosteval: catalog: %v\n", err)
		return exitInfra
	}
	return exitOK
}

// catalogHostOptions builds the host options: the servers file's servers
// (unless only -add servers are asked for) and the added ones.
func catalogHostOptions(hf *hostFlags, adds addFlag) (host.Options, error) {
	options := hf.options
	if len(adds) > 0 && hf.servers == "" {
		// An ad-hoc measure of one server must not need the servers file.
		options = hf.optionsWithoutServers
	}
	opts, err := options()
	if err != nil {
		return host.Options{}, err
	}
	for _, a := range adds {
		if slices.ContainsFunc(opts.Servers, func(s host.ServerSpec) bool { return s.Name == a.Name }) {
			return host.Options{}, fmt.Errorf("-add %s: the servers file has a server of that name", a.Name)
		}
		opts.Servers = append(opts.Servers, a)
	}
	if len(opts.Servers) == 0 {
		return host.Options{}, errors.New("no servers: name some with -servers or -add")
	}
	return opts, nil
}

// offeredTools starts the host, copies out the offered tools and the tools
// array, and stops the servers before the (slower) measure.
func offeredTools(ctx context.Context, e *env, opts host.Options) ([]catalog.Entry, []byte, int) {
	h, err := host.Start(ctx, opts)
	if err != nil {
		fmt.Fprintf(e.stderr, "hosteval: catalog: %v\n", err)
		if ctx.Err() != nil {
			return nil, nil, exitSignaled
		}
		return nil, nil, exitInfra
	}
	defer h.Close()
	code := exitOK
	for _, s := range h.Servers() {
		if s.Error != "" {
			fmt.Fprintf(e.stderr, "hosteval: catalog: server %s: %s\n", s.Name, s.Error)
			code = exitInfra
		}
	}
	if unknown := h.UnknownNames(); len(unknown) > 0 {
		fmt.Fprintf(e.stderr, "hosteval: catalog: -tools names tools no server offers: %s\n", strings.Join(unknown, ", "))
		if code == exitOK {
			code = exitUsage
		}
	}
	if code != exitOK {
		return nil, nil, code
	}
	var entries []catalog.Entry
	for _, t := range h.Offered() {
		entries = append(entries, catalog.Entry{Name: t.Name, Server: t.Server, Def: t.Def})
	}
	return entries, h.ToolsJSON(), exitOK
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

// cancelOnInterrupt cancels ctx on Ctrl-C. The returned func stops
// watching and waits for the watcher.
func cancelOnInterrupt(ctx context.Context, e *env) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	if e.interrupts == nil {
		return ctx, cancel
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-e.interrupts:
			cancel()
		case <-ctx.Done():
		}
	})
	return ctx, func() {
		cancel()
		wg.Wait()
	}
}

// addFlag is the repeatable -add flag: ad-hoc stdio servers.
type addFlag []host.ServerSpec

var addName = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

func (a *addFlag) String() string {
	if a == nil {
		return ""
	}
	names := make([]string, len(*a))
	for i, s := range *a {
		names[i] = s.Name
	}
	return strings.Join(names, ",")
}

func (a *addFlag) Set(v string) error {
	name, cmdline, ok := strings.Cut(v, "=")
	if !ok {
		return errors.New("want name=command [args]")
	}
	if !addName.MatchString(name) {
		return fmt.Errorf("server name %q: want letters, digits, _ and -", name)
	}
	words, err := splitCommand(cmdline)
	if err != nil {
		return fmt.Errorf("server %s: %w", name, err)
	}
	if len(words) == 0 {
		return fmt.Errorf("server %s: no command", name)
	}
	for _, s := range *a {
		if s.Name == name {
			return fmt.Errorf("server %s is added twice", name)
		}
	}
	*a = append(*a, host.ServerSpec{Name: name, Command: words[0], Args: words[1:]})
	return nil
}

// splitCommand splits a command line into words the way a shell would for
// the simple cases: spaces separate, '...' is literal, "..." and a
// backslash escape the next character. Nothing is expanded.
func splitCommand(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			w.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if escaped {
		return nil, errors.New("a backslash ends the command")
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
