package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/hosteval/hosteval/internal/buildinfo"
	"github.com/hosteval/hosteval/internal/catalog"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/lint"
	"github.com/hosteval/hosteval/internal/scenario"
)

var lintCommand = command{
	name:        "lint",
	summary:     "check what a tool catalog tells the model: poisoning, gaps, cost",
	usage:       lintUsage,
	onInterrupt: cancelContext,
	run:         runLint,
}

const lintUsage = `usage: hosteval lint [flags] [scenario files or folders]

Starts the servers like hosteval catalog (the servers file, -servers,
-add; a server with catalog: FILE of catalog -save is read, not started),
or, given scenario files or folders, the servers their scenarios use
(each name once; -servers picks among them; the lint: sections of the
servers files they read apply),
lists every tool and each server's instructions, and checks what they tell
the model: hidden text, instructions aimed at the model, secrets asked
for, one server steering another's tools, contract gaps (descriptions,
annotations, schemas), ambiguous tools, and the catalog findings of cost.
Sends no tool call and needs no model. The rules, each with a bad and a
good example: docs/lint.md.

Each finding has a rule ID, a severity (error, warning, note), its place
(server, tool, field, JSON pointer), the text quoted with invisible
characters shown as <U+200B>, and a one-line fix.

The servers file's lint: section sets rule levels (rules: {ID: LEVEL},
LEVEL error, warning, note or off), suppressions (suppress: [{rule,
server, tool, reason}]) and fail_on; -rule and -suppress add to it and
win. Suppressed findings are listed with their reasons.

-pins FILE compares the catalogs with a lock of hosteval pin
(hosteval.lock): a tool whose definition changed since it was pinned, a
tool that appeared or vanished, changed instructions and a server not
pinned are findings of the rule pin-changed (an error), each with what
changed: the description's words, the schema's keys.

-format text (a table fitted to the terminal, then each finding in full),
json (a stable document: "kind": "hosteval.lint", "schema": 1) or sarif
(SARIF 2.1.0, for code scanning).

exit codes: 0 no finding at or above -fail-on; 1 one remains; 2 a usage or
configuration error; 3 a server could not be reached; 130 interrupted.

examples:
  hosteval lint
  hosteval lint -servers cmdb,tickets -format json
  hosteval lint -add 'memory=tools/node/node_modules/.bin/mcp-server-memory'
  hosteval lint -fail-on warning -rule param-description-missing=off
  hosteval lint -format sarif > lint.sarif
  hosteval lint -pins hosteval.lock
  hosteval lint scenarios/thirdparty/`

// ruleFlag is -rule ID=LEVEL, repeatable.
type ruleFlag map[string]lint.Severity

func (r *ruleFlag) String() string {
	if r == nil {
		return ""
	}
	var parts []string
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for k := range *r {
			if !yield(k) {
				return
			}
		}
	}) {
		parts = append(parts, id+"="+string((*r)[id]))
	}
	return strings.Join(parts, ",")
}

func (r *ruleFlag) Set(v string) error {
	id, level, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("%q: want ID=LEVEL (error, warning, note or off)", v)
	}
	l, err := lint.ParseLevel(level)
	if err != nil {
		return err
	}
	if lint.RuleByID(id) == nil {
		return lint.Config{Rules: map[string]lint.Severity{id: l}}.Check()
	}
	if *r == nil {
		*r = ruleFlag{}
	}
	(*r)[id] = l
	return nil
}

// suppressFlag is -suppress 'RULE:SERVER/TOOL=REASON', repeatable.
type suppressFlag []lint.Suppression

func (s *suppressFlag) String() string {
	if s == nil {
		return ""
	}
	var parts []string
	for _, x := range *s {
		parts = append(parts, x.String())
	}
	return strings.Join(parts, ",")
}

func (s *suppressFlag) Set(v string) error {
	head, reason, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(reason) == "" {
		return fmt.Errorf("%q: want RULE[:SERVER[/TOOL]]=REASON (a suppression needs its reason)", v)
	}
	rule, at, _ := strings.Cut(head, ":")
	server, tool, _ := strings.Cut(at, "/")
	sup := lint.Suppression{Rule: rule, Server: server, Tool: tool, Reason: strings.TrimSpace(reason), Source: "-suppress"}
	if err := (lint.Config{Suppress: []lint.Suppression{sup}}).Check(); err != nil {
		return err
	}
	*s = append(*s, sup)
	return nil
}

func runLint(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "lint", lintUsage)
	var hf hostFlags
	hf.register(fs)
	var adds addFlag
	fs.Var(&adds, "add", "add an ad-hoc stdio server: 'name=command arg arg' (repeatable; quote arguments with ' or \")")
	format := fs.String("format", "text", "what to print: text, json or sarif")
	failOn := fs.String("fail-on", "", "exit 1 when a finding at or above this remains: error, warning, note or none (default: the servers file's fail_on, else error)")
	var rules ruleFlag
	fs.Var(&rules, "rule", "give a rule a level: ID=LEVEL, LEVEL error, warning, note or off (repeatable)")
	var sups suppressFlag
	fs.Var(&sups, "suppress", "suppress a rule's findings: 'RULE:SERVER/TOOL=REASON' (SERVER and TOOL optional; repeatable)")
	longTokens := fs.Int("long-tokens", 0, fmt.Sprintf("flag descriptions over this many tokens (default: the servers file's long_tokens, else %d)", catalog.DefaultLongTokens))
	pins := fs.String("pins", "", "compare the catalogs with this lock of hosteval pin: what changed is a pin-changed finding")
	notes := fs.Bool("notes", false, "show notes in full too (else in the table only)")
	var layout layoutFlags
	layout.register(fs, false)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !slices.Contains([]string{"text", "json", "sarif"}, *format) {
		return usagef("-format %q: want text, json or sarif", *format)
	}
	if *longTokens < 0 {
		return usagef("-long-tokens %d: want 1 or more", *longTokens)
	}
	flagCfg := lint.Config{Rules: rules, Suppress: sups, LongTokens: *longTokens}
	if *failOn != "" {
		level, err := lint.ParseFailOn(*failOn)
		if err != nil {
			return usagef("-fail-on %w", err)
		}
		flagCfg.FailOn = level
	}
	lock, err := readPins(*pins)
	if err != nil {
		return err
	}
	ids := ruleIDs()
	var (
		settings []*scenario.LintSettings
		hopts    host.Options
	)
	if paths := fs.Args(); len(paths) > 0 {
		serversFileSet := false
		fs.Visit(func(f *flag.Flag) { serversFileSet = serversFileSet || f.Name == "servers-file" })
		if serversFileSet {
			// The scenarios name their servers files, whose servers and
			// lint: sections apply: another would be ignored.
			return usagef("-servers-file %s: the scenarios name their servers files; give scenario files or -servers-file, not both", hf.serversFile)
		}
		var cleanup func()
		hopts, settings, cleanup, err = lintScenarioOptions(ctx, e, &hf, adds, paths)
		if err != nil {
			return err
		}
		defer cleanup()
	} else {
		if len(adds) == 0 || hf.servers != "" {
			// The servers file is read for its servers: its lint: section
			// and lines too, first, so that its rule IDs are checked with
			// the rest of it.
			s, err := scenario.LoadLint(hf.serversFile, ids)
			if err != nil {
				return usageError{err}
			}
			settings = append(settings, s)
		}
		if hopts, err = catalogHostOptions(e, &hf, adds); err != nil {
			return err
		}
	}
	cfg := fileConfigs(settings).Merge(flagCfg)
	if err := hf.login(ctx); err != nil {
		return err
	}
	servers, err := lintServers(ctx, hopts, settings)
	if err != nil {
		return err
	}
	rep, err := lint.Lint(ctx, servers, lint.Options{Config: cfg, Namespace: host.Namespaced, Pins: lock, PinsFile: *pins})
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return usageError{err}
	}
	switch *format {
	case "json":
		err = rep.WriteJSON(e.stdout)
	case "sarif":
		err = rep.WriteSARIF(e.stdout, lint.SARIFOptions{Version: buildinfo.Read().Version})
	default:
		err = rep.WriteText(e.stdout, lint.TextOptions{Width: layout.width(e), Notes: *notes})
	}
	if err != nil {
		return err
	}
	if rep.Failed {
		err := failedf("%s", rep.Summary())
		if *format == "text" {
			return shown{err} // the summary ends the text
		}
		return err
	}
	return nil
}

// lintServers starts the host and copies out each server's catalog as it
// listed it, with its instructions, then stops the servers. A server that
// does not start fails the lint (exit 3): a catalog linted in part would
// pass for a clean one.
func lintServers(ctx context.Context, opts host.Options, settings []*scenario.LintSettings) ([]lint.Server, error) {
	h, err := host.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if err := serverErrors(h); err != nil {
		return nil, err
	}
	var out []lint.Server
	for _, spec := range opts.Servers {
		c := h.Catalog(spec.Name)
		if c == nil {
			return nil, fmt.Errorf("server %s did not connect", spec.Name)
		}
		s := lint.Server{Name: spec.Name, ServerName: c.ServerName, ServerVersion: c.ServerVersion, Protocol: c.Protocol,
			Instructions: c.Instructions, Tools: c.Tools}
		for _, set := range settings {
			if line, ok := set.Lines[spec.Name]; ok {
				s.Source, s.Line = set.File, line
				break
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// ruleIDs are the IDs of lint's rules, which the scenario loader checks
// a lint: section's against.
func ruleIDs() []string {
	var ids []string
	for _, r := range lint.Rules() {
		ids = append(ids, r.ID)
	}
	return ids
}

// lintSettings reads the lint: sections of servers files (a problem in
// one is a usage error, exit 2).
func lintSettings(files []string) ([]*scenario.LintSettings, error) {
	var out []*scenario.LintSettings
	for _, f := range files {
		s, err := scenario.LoadLint(f, ruleIDs())
		if err != nil {
			return nil, usageError{err}
		}
		out = append(out, s)
	}
	return out, nil
}

// fileConfigs are the servers files' lint: sections as one configuration:
// a later file's levels win, every suppression applies.
func fileConfigs(settings []*scenario.LintSettings) lint.Config {
	var cfg lint.Config
	for _, s := range settings {
		cfg = cfg.Merge(fileConfig(s))
	}
	return cfg
}

// fileConfig is a servers file's lint: section as lint's configuration
// (the loader checked its rule IDs and levels).
func fileConfig(s *scenario.LintSettings) lint.Config {
	c := lint.Config{FailOn: lint.Severity(s.FailOn), LongTokens: s.LongTokens}
	if len(s.Rules) > 0 {
		c.Rules = map[string]lint.Severity{}
		for id, level := range s.Rules {
			c.Rules[id] = lint.Severity(level)
		}
	}
	for _, x := range s.Suppress {
		c.Suppress = append(c.Suppress, lint.Suppression{Rule: x.Rule, Server: x.Server, Tool: x.Tool, Reason: x.Reason, Source: x.Source})
	}
	return c
}

// lintScenarioOptions are the host options of the servers the scenarios at
// paths use (each name once, as the first case that uses it defines it;
// -servers picks among them), with the added ones, and the lint: sections
// of the servers files the scenarios read. A server that uses ${CASE_DIR}
// gets a fresh folder, which cleanup removes.
func lintScenarioOptions(ctx context.Context, e *env, hf *hostFlags, adds addFlag, paths []string) (host.Options, []*scenario.LintSettings, func(), error) {
	none := func() {}
	suite, err := scenario.LoadContext(ctx, paths...)
	if err != nil {
		if ctx.Err() != nil {
			return host.Options{}, nil, none, err
		}
		return host.Options{}, nil, none, usageError{err}
	}
	hf.logins = newLogins(e, hf.open, hf.budgets.PersonTimeout)
	cases, err := suite.Cases(scenario.CaseOptions{Repeat: 1, OAuth: hf.logins.build})
	if err != nil {
		return host.Options{}, nil, none, usageError{err}
	}
	opts, err := hf.optionsWithoutServers(e)
	if err != nil {
		return host.Options{}, nil, none, err
	}
	settings, err := lintSettings(suite.ServersFiles)
	if err != nil {
		return host.Options{}, nil, none, err
	}
	dir, err := os.MkdirTemp("", "hosteval-lint-")
	if err != nil {
		return host.Options{}, nil, none, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	want := splitList(hf.servers)
	seen := map[string]bool{}
	for _, c := range cases {
		own := c.ServerNames()
		for _, spec := range c.HostOptionsIn(dir).Servers {
			if !slices.Contains(own, spec.Name) {
				continue // a sample of a catalog: distractors
			}
			if seen[spec.Name] || (len(want) > 0 && !slices.Contains(want, spec.Name)) {
				continue
			}
			seen[spec.Name] = true
			opts.Servers = append(opts.Servers, spec)
		}
	}
	for _, name := range want {
		if !seen[name] {
			cleanup()
			return host.Options{}, nil, none, usagef("-servers: no scenario of %s uses a server %q", strings.Join(paths, " "), name)
		}
	}
	for _, a := range adds {
		if seen[a.Name] {
			cleanup()
			return host.Options{}, nil, none, usagef("-add %s: a scenario has a server of that name", a.Name)
		}
		opts.Servers = append(opts.Servers, a)
	}
	return opts, settings, cleanup, nil
}
