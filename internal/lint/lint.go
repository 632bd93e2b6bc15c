// Package lint checks what a tool catalog tells the model before anyone
// trusts it. A tool's name, title, description and schemas, and a server's
// instructions, go straight into the model's context: they are where tool
// poisoning lives (instructions aimed at the model, text a person cannot
// see, one server steering the use of another's tools) and where a catalog
// silently changes after it was reviewed. The package owns the rules over
// a catalog (hidden text, instructions aimed at the model, cross-server
// shadowing, contract gaps, ambiguity, cost), the pins of a catalog
// (hosteval.lock) and what changed since, and the findings' layouts: a
// table, a JSON document and SARIF 2.1.0 for code scanning.
//
// It never connects to anything: its input is each server's tools as it
// listed them and its instructions (cmd/hosteval connects through the
// host, or reads the files of catalog -save). Every rule has a stable ID,
// a default severity, a one-line fix, and a bad and a good example:
// docs/lint.md is generated from the rule table, and a test runs every
// example through its rule (the bad must fire, the good must not).
//
// A finding names its exact place: the server, the tool, the field and a
// JSON pointer into the tool as listed ("/inputSchema/properties/notes/
// description"; "/instructions" for the server's instructions), with the
// offending text quoted, invisible characters shown as <U+200B>.
//
// The JSON document (Report) is versioned: "kind" is "hosteval.lint" and
// "schema" is 1.
package lint

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
)

// Document identification.
const (
	Kind   = "hosteval.lint"
	Schema = 1
)

// Severity is how much a finding matters: error, warning or note. Off, in
// a configuration, turns a rule off.
type Severity string

// Severities, and the levels a configuration may give a rule.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Note    Severity = "note"
	Off     Severity = "off"
	// None, as -fail-on, fails on nothing.
	None Severity = "none"
)

// Enum lists the levels a rule can be given in a servers file's lint:
// section (yamlx reads it, and the JSON Schema lists it).
func (Severity) Enum() []string {
	return []string{string(Error), string(Warning), string(Note), string(Off)}
}

// rank orders severities: note < warning < error; off and none are below.
func (s Severity) rank() int {
	switch s {
	case Error:
		return 3
	case Warning:
		return 2
	case Note:
		return 1
	}
	return 0
}

// ParseLevel reads a rule's level: error, warning, note or off.
func ParseLevel(s string) (Severity, error) {
	switch v := Severity(strings.ToLower(strings.TrimSpace(s))); v {
	case Error, Warning, Note, Off:
		return v, nil
	}
	return "", fmt.Errorf("level %q: want error, warning, note or off", s)
}

// ParseFailOn reads -fail-on: error, warning, note or none.
func ParseFailOn(s string) (Severity, error) {
	switch v := Severity(strings.ToLower(strings.TrimSpace(s))); v {
	case Error, Warning, Note, None:
		return v, nil
	}
	return "", fmt.Errorf("%q: want error, warning, note or none", s)
}

// Server is one server's catalog as the host listed it.
type Server struct {
	// Name is the server's name in the host: the prefix of its tools.
	Name string
	// ServerName, ServerVersion and Protocol are what the server said of
	// itself, and the revision negotiated.
	ServerName    string
	ServerVersion string
	Protocol      string
	// Instructions are the server's instructions.
	Instructions string
	// Tools are its tools, each as it wrote it in tools/list.
	Tools []json.RawMessage
	// Source and Line say where the server is defined (a servers file, a
	// scenario file, a saved catalog): SARIF's physical location of its
	// findings. Empty for a server given on the command line.
	Source string
	Line   int
}

// Options configure Lint. The zero value lints with every rule at its
// default severity and fails on errors.
type Options struct {
	Config Config
	// Pins, if set, is the lock the catalog is compared with (rule
	// pin-changed); PinsFile names it in findings.
	Pins     *Lock
	PinsFile string
	// Unreached are the servers the caller could not list (they did not
	// start or connect): the report names them, not linted, with why.
	Unreached []Unreached
	// Namespace is the name the host gives a server's tool (server__tool,
	// made safe for model APIs: host.Namespaced), for name-collision.
	// Default: server + "__" + tool, unchanged.
	Namespace func(server, tool string) string
}

// Config is what a servers file's lint: section and the flags set: each
// rule's level, the suppressions, and where the lint fails.
type Config struct {
	// Rules gives rules a severity other than their own, or turns them
	// off, by ID.
	Rules map[string]Severity
	// Suppress are findings suppressed per tool, each with its reason.
	Suppress []Suppression
	// FailOn is the least severity that fails the lint (default error;
	// None never fails).
	FailOn Severity
	// LongTokens flags descriptions over this many tokens (rule
	// cost-long-description; default that of hosteval catalog, 150).
	LongTokens int
}

// Merge returns c with o over it: o's levels win rule by rule, the
// suppressions of both apply, and o's FailOn and LongTokens win when set.
func (c Config) Merge(o Config) Config {
	out := Config{Rules: map[string]Severity{}, FailOn: cmp.Or(o.FailOn, c.FailOn), LongTokens: cmp.Or(o.LongTokens, c.LongTokens)}
	for k, v := range c.Rules {
		out.Rules[k] = v
	}
	for k, v := range o.Rules {
		out.Rules[k] = v
	}
	out.Suppress = append(slices.Clone(c.Suppress), o.Suppress...)
	return out
}

// Check reports a rule ID no rule has, a level that is not one, and a
// suppression without a rule or a reason.
func (c Config) Check() error {
	var problems []string
	for _, id := range slices.Sorted(mapKeys(c.Rules)) {
		if RuleByID(id) == nil {
			problems = append(problems, fmt.Sprintf("rule %q: no such rule%s", id, suggestRule(id)))
		} else if _, err := ParseLevel(string(c.Rules[id])); err != nil {
			problems = append(problems, fmt.Sprintf("rule %s: %v", id, err))
		}
	}
	for _, s := range c.Suppress {
		if err := s.check(); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if c.FailOn != "" {
		if _, err := ParseFailOn(string(c.FailOn)); err != nil {
			problems = append(problems, "fail_on "+err.Error())
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("lint configuration: %s", strings.Join(problems, "; "))
	}
	return nil
}

// Suppression silences one rule's findings on one tool (or on a whole
// server, for its instructions), for a reason that is kept and listed.
type Suppression struct {
	Rule string `json:"rule"`
	// Server and Tool narrow it: empty matches every server or tool (a
	// server-level finding, such as one on instructions, has no tool).
	Server string `json:"server,omitempty"`
	Tool   string `json:"tool,omitempty"`
	Reason string `json:"reason"`
	// Source says where it was written (servers.yaml:12, -suppress).
	Source string `json:"source,omitempty"`
}

func (s Suppression) check() error {
	where := s.Source
	if where != "" {
		where += ": "
	}
	switch {
	case s.Rule == "":
		return fmt.Errorf("%ssuppression without a rule", where)
	case RuleByID(s.Rule) == nil:
		return fmt.Errorf("%ssuppression of rule %q: no such rule%s", where, s.Rule, suggestRule(s.Rule))
	case strings.TrimSpace(s.Reason) == "":
		return fmt.Errorf("%ssuppression of %s: a suppression needs its reason", where, s.Rule)
	}
	return nil
}

// String is the suppression as a person reads it: rule at server/tool.
func (s Suppression) String() string {
	at := cmp.Or(s.Server, "*")
	if s.Tool != "" {
		at += "/" + s.Tool
	}
	return s.Rule + " at " + at
}

// matches reports whether s covers f, given the servers f's server is
// also known as.
func (s Suppression) matches(f *Finding, aliases []string) bool {
	if s.Rule != f.Rule || (s.Tool != "" && s.Tool != f.Tool) {
		return false
	}
	return s.Server == "" || s.Server == f.Server || slices.Contains(aliases, s.Server)
}

// Finding is one place where a rule fired.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Server   string   `json:"server"`
	// Tool is the tool's own name; empty for a finding on the server (its
	// instructions, a server not pinned).
	Tool string `json:"tool,omitempty"`
	// Field names the place in the tool: "description", "name",
	// "inputSchema.properties.notes.description", "instructions".
	Field string `json:"field"`
	// Pointer is the JSON pointer (RFC 6901) of the place in the tool as
	// listed, or in the server's answer for "/instructions".
	Pointer string `json:"pointer"`
	// Text is the offending text with some context, invisible and control
	// characters shown as <U+XXXX>.
	Text    string `json:"text,omitempty"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
	// Diff is what changed, line by line (pin-changed).
	Diff []string `json:"diff,omitempty"`
	// Suppression is set on a suppressed finding.
	Suppression *Suppression `json:"suppression,omitempty"`

	// The order findings are listed in: servers and tools as listed, then
	// the rule table's order, then the place.
	serverIndex, toolIndex, ruleIndex, at int
}

// Where is the finding's place as a person reads it: server/tool field.
func (f *Finding) Where() string {
	at := f.Server
	if f.Tool != "" {
		at += "/" + f.Tool
	}
	if f.Field != "" {
		at += " " + f.Field
	}
	return at
}

// Report is the outcome of a lint, and the JSON document.
type Report struct {
	Kind   string `json:"kind"`
	Schema int    `json:"schema"`
	// FailOn is the least severity that fails; Failed says whether a
	// finding at or above it remains.
	FailOn Severity `json:"fail_on"`
	Failed bool     `json:"failed"`
	Counts Counts   `json:"counts"`
	// Servers are the servers linted, in order.
	Servers []ServerInfo `json:"servers"`
	// Findings are those that remain, in order; Suppressed those a
	// suppression silenced, each with it.
	Findings   []Finding `json:"findings"`
	Suppressed []Finding `json:"suppressed"`
	// Unused are suppressions that matched no finding: stale, or
	// misspelt.
	Unused []Suppression `json:"unused_suppressions,omitempty"`
	// Unreached are the servers that could not be listed: not linted.
	Unreached []Unreached `json:"unreached,omitempty"`
	// Pins says what the catalog was compared with (lint -pins).
	Pins *PinCheck `json:"pins,omitempty"`
	// Rules are the rules' levels this lint ran with, by ID: each rule's
	// own, or the configuration's ("off" for a rule turned off).
	Rules map[string]Severity `json:"rules"`
}

// Counts are the findings that remain, by severity, and the suppressed.
type Counts struct {
	Errors     int `json:"errors"`
	Warnings   int `json:"warnings"`
	Notes      int `json:"notes"`
	Suppressed int `json:"suppressed"`
}

// ServerInfo is one server linted.
type ServerInfo struct {
	Name          string `json:"name"`
	ServerName    string `json:"server_name,omitempty"`
	ServerVersion string `json:"server_version,omitempty"`
	Protocol      string `json:"protocol,omitempty"`
	Tools         int    `json:"tools"`
	// SameAs names the server listed before it whose catalog (tools and
	// instructions) is this one's byte for byte: its findings are that
	// server's, and rules across servers leave the pair alone.
	SameAs string `json:"same_as,omitempty"`
	Source string `json:"source,omitempty"`
	Line   int    `json:"line,omitempty"`
}

// Unreached is a server a lint could not list, and why: its catalog,
// unseen, may hold anything, so it is never taken for a clean one.
type Unreached struct {
	Server string `json:"server"`
	Error  string `json:"error"`
}

// PinCheck is what lint -pins compared.
type PinCheck struct {
	File string `json:"file"`
	// Checked are the servers compared with their pins; NotLinted are the
	// lock's servers this lint did not list (not checked).
	Checked   []string `json:"checked"`
	NotLinted []string `json:"not_linted,omitempty"`
}

// Lint runs every rule that is not off over the servers' catalogs, then
// the configuration: levels, suppressions and where it fails. It returns
// an error only for a configuration that does not hold (Config.Check) or
// a cancelled context.
func Lint(ctx context.Context, servers []Server, opts Options) (*Report, error) {
	cfg := opts.Config
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.FailOn == "" {
		cfg.FailOn = Error
	}
	if opts.Namespace == nil {
		opts.Namespace = func(server, tool string) string { return server + "__" + tool }
	}
	p := newPass(ctx, servers, opts)
	rep := &Report{Kind: Kind, Schema: Schema, FailOn: cfg.FailOn, Findings: []Finding{}, Suppressed: []Finding{},
		Rules: map[string]Severity{}, Unreached: slices.Clone(opts.Unreached)}
	for _, s := range p.servers {
		info := ServerInfo{Name: s.Name, ServerName: s.ServerName, ServerVersion: s.ServerVersion, Protocol: s.Protocol,
			Tools: len(s.Tools), Source: s.Source, Line: s.Line}
		if s.same != nil {
			info.SameAs = s.same.Name
		}
		rep.Servers = append(rep.Servers, info)
	}
	// The rules run at once, each over the pass it only reads; the
	// texts they match are folded first.
	workers := runtime.GOMAXPROCS(0)
	p.prepare(workers)
	runs := make([]*run, len(rules))
	var g errgroup.Group
	g.SetLimit(workers)
	for i := range rules {
		r := &rules[i]
		level := r.Severity
		if l, ok := cfg.Rules[r.ID]; ok {
			level = l
		}
		rep.Rules[r.ID] = level
		if level == Off {
			continue
		}
		runs[i] = &run{pass: p, rule: r, ruleIndex: i, level: level}
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			r.check(runs[i])
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var found []Finding
	for _, r := range runs {
		if r == nil {
			continue
		}
		found = append(found, r.found...)
		if r.pinCheck != nil {
			rep.Pins = r.pinCheck
		}
	}
	slices.SortStableFunc(found, compareFindings)
	used := make([]bool, len(cfg.Suppress))
	for _, f := range found {
		aliases := p.aliases(f.Server)
		j := slices.IndexFunc(cfg.Suppress, func(s Suppression) bool { return s.matches(&f, aliases) })
		if j >= 0 {
			used[j] = true
			s := cfg.Suppress[j]
			f.Suppression = &s
			rep.Suppressed = append(rep.Suppressed, f)
			continue
		}
		rep.Findings = append(rep.Findings, f)
		switch f.Severity {
		case Error:
			rep.Counts.Errors++
		case Warning:
			rep.Counts.Warnings++
		case Note:
			rep.Counts.Notes++
		}
		if cfg.FailOn != None && f.Severity.rank() >= cfg.FailOn.rank() {
			rep.Failed = true
		}
	}
	rep.Counts.Suppressed = len(rep.Suppressed)
	for j, s := range cfg.Suppress {
		if !used[j] {
			rep.Unused = append(rep.Unused, s)
		}
	}
	return rep, nil
}

func compareFindings(a, b Finding) int {
	return cmp.Or(
		cmp.Compare(a.serverIndex, b.serverIndex),
		cmp.Compare(a.toolIndex, b.toolIndex),
		cmp.Compare(a.ruleIndex, b.ruleIndex),
		cmp.Compare(a.Pointer, b.Pointer),
		cmp.Compare(a.at, b.at),
		cmp.Compare(a.Message, b.Message),
	)
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// suggestRule names the rule closest to a misspelt ID, or "".
func suggestRule(id string) string {
	best, bestD := "", 4
	for _, r := range rules {
		if d := editDistance(id, r.ID); d < bestD {
			best, bestD = r.ID, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
