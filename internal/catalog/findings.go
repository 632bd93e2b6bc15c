package catalog

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/hosteval/hosteval/internal/table"
)

// Kinds of Finding.
const (
	// KindSchemaKeyword: input schemas with a top-level "$schema"; the
	// figures are the saving if it were dropped.
	KindSchemaKeyword = "schema_keyword"
	// KindRepeatedDefs: the same "$defs" (or "definitions") block in the
	// input schemas of several tools; the figures are the saving if every
	// repeat beyond the first were shared, which is also what the repeats
	// take of the catalog.
	KindRepeatedDefs = "repeated_defs"
	// KindHTMLEscaping: "<", ">" and "&" in the definitions; the figures are
	// what a host that escapes them (encoding/json's default, some SDKs)
	// sends on top of these bytes. They are a cost avoided, not a saving.
	KindHTMLEscaping = "html_escaping"
	// KindLongDescription: descriptions over Catalog.LongTokens tokens, or
	// over LongShare of the catalog; the figures are what the description
	// takes in its definition (the definition minus the definition with an
	// empty description).
	KindLongDescription = "long_description"
	// KindServerPrefix: the "[server] " the host puts before every
	// description; the figures are what it costs.
	KindServerPrefix = "server_prefix"
)

// Finding is one way the catalog could be smaller, with what is at stake.
type Finding struct {
	Kind    string `json:"kind"`
	Summary string `json:"summary"`
	// Bytes and Tokens are at stake in the whole array, per model request:
	// the array with every listed change made, measured again.
	Bytes  int `json:"bytes"`
	Tokens int `json:"tokens"`
	// TurnTokens is RequestsPerTurn times Tokens.
	TurnTokens int `json:"turn_tokens"`
	// Share is Tokens over the array's tokens, rounded to 4 decimals.
	Share float64 `json:"share"`
	// Tools are the definitions concerned, each measured alone.
	Tools []FindingTool `json:"tools"`
	Notes []string      `json:"notes,omitempty"`
}

// FindingTool is what a finding puts at stake in one definition.
type FindingTool struct {
	Name   string `json:"name"`
	Server string `json:"server"`
	Bytes  int    `json:"bytes"`
	Tokens int    `json:"tokens"`
	// Count is how many "<", ">" and "&" the definition holds
	// (html_escaping only).
	Count int `json:"count,omitempty"`
	// SameAs is the first tool with the same block (repeated_defs only).
	SameAs string `json:"same_as,omitempty"`
	// Note says why, or why nothing was measured: a definition that does not
	// re-encode to the bytes sent gets no figures rather than wrong ones.
	Note string `json:"note,omitempty"`
}

// finder computes the findings of one catalog.
type finder struct {
	c     *Catalog
	defs  []*def
	array []byte
	// bytesOnly leaves out every token figure but a description's own
	// count (Findings): counting the whole array, and each definition,
	// is what makes a measure slow.
	bytesOnly bool
}

// Findings are Measure's findings without its token figures: the same
// detection (the same code), with which tools each finding concerns, the
// bytes each change saves, and long descriptions by their own token count
// only (not by their share of the catalog, which needs the whole array
// counted). A description is counted only when it has more bytes than
// LongTokens, as a token is at least a byte, and a definition is parsed
// for re-encoding only when a finding may concern it (needsTree). hosteval lint lists them
// beside its own rules: o200k_base counts about 2 MB a second here, and a
// catalog of thousands of tools is linted in well under that.
func Findings(ctx context.Context, entries []Entry, opts Options) ([]Finding, error) {
	if opts.LongTokens <= 0 {
		opts.LongTokens = DefaultLongTokens
	}
	c := &Catalog{Kind: Kind, Schema: Schema, Encoding: Encoding, Form: opts.Form, RequestsPerTurn: 1, LongTokens: opts.LongTokens,
		Tools: make([]Tool, len(entries)), Findings: []Finding{}}
	// Each definition is parsed, and its description counted when it may
	// be long, on its own: spread over the cores.
	parsed := make([]*def, len(entries))
	descTokens := make([]int, len(entries))
	g, gctx := errgroup.WithContext(ctx)
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		g.Go(func() error {
			for i := w; i < len(entries); i += workers {
				if i%64 == w%64 && gctx.Err() != nil {
					return gctx.Err()
				}
				e := entries[i]
				content, valid := descContent(e.Def)
				descTokens[i] = len(content) // at most; never over the limit
				if len(content) > opts.LongTokens {
					descTokens[i] = count(content)
				}
				if valid && !needsTree(e.Def, descTokens[i] > opts.LongTokens) {
					parsed[i] = &def{Entry: e}
					continue
				}
				d, err := parseDef(e)
				if err != nil {
					return fmt.Errorf("tool %s: %w", e.Name, err)
				}
				parsed[i] = d
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, e := range entries {
		c.Tools[i] = Tool{Name: e.Name, Server: e.Server}
		c.Tools[i].Description.Tokens = descTokens[i]
	}
	f := finder{c: c, defs: parsed, bytesOnly: true}
	return f.all(ctx)
}

// needsTree reports whether a finder may change a definition, which it
// then measures re-encoded: whether its description is long, or its bytes
// hold what the others look for ("$schema", "$defs", "definitions", a
// string starting "[" for the server prefix, or a \u escape that could
// spell any of them). The other definitions (most of a catalog) are
// never parsed into a tree: only htmlEscaping reads them, byte by byte.
func needsTree(def []byte, long bool) bool {
	return long || bytes.Contains(def, []byte(`$schema`)) || bytes.Contains(def, []byte(`$defs`)) ||
		bytes.Contains(def, []byte(`definitions`)) || bytes.Contains(def, []byte(`"[`)) || bytes.Contains(def, []byte(`\u`))
}

// all runs every finder in order.
func (f *finder) all(ctx context.Context) ([]Finding, error) {
	out := []Finding{}
	for _, find := range []func() (Finding, bool, error){f.schemaKeyword, f.repeatedDefs, f.htmlEscaping, f.longDescriptions, f.serverPrefix} {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		finding, ok, err := find()
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, finding)
		}
	}
	return out, nil
}

// descTokens are the tokens of definition i's description as sent (for
// Findings: counted only when it may be over the limit, else its bytes).
func (f *finder) descTokens(i int) int { return f.c.Tools[i].Description.Tokens }

// change is one definition changed in one way.
type change struct {
	i    int
	tree *object
	tool FindingTool
}

// measure fills a finding from its changes: each definition measured
// before and after, and the whole array with every change made.
func (f *finder) measure(kind string, changes []change) Finding {
	fd := Finding{Kind: kind, Tools: []FindingTool{}}
	replaced := map[int][]byte{}
	skipped := 0
	for _, ch := range changes {
		d := f.defs[ch.i]
		t := ch.tool
		t.Name, t.Server = d.Name, d.Server
		b, err := encodeJSON(ch.tree)
		switch {
		case !d.roundTrip:
			t.Note = notReencodable(d)
			skipped++
		case err != nil:
			// A parsed tree holds only encodable values.
			t.Note = fmt.Sprintf("cannot re-encode: %v", err)
			skipped++
		default:
			t.Bytes = len(d.Def) - len(b)
			if !f.bytesOnly {
				t.Tokens = f.c.Tools[ch.i].Tokens - count(b)
			}
			replaced[ch.i] = b
		}
		fd.Tools = append(fd.Tools, t)
	}
	if f.bytesOnly {
		for _, t := range fd.Tools {
			fd.Bytes += t.Bytes
		}
		if skipped > 0 {
			fd.Notes = append(fd.Notes, fmt.Sprintf("%s re-encoded unchanged would differ from the bytes sent: not counted", plural(skipped, "definition")))
		}
		return fd
	}
	whole := f.arrayWith(replaced)
	fd.Bytes = len(f.array) - len(whole)
	fd.Tokens = f.c.Total.Tokens - count(whole)
	f.fill(&fd)
	if skipped > 0 {
		fd.Notes = append(fd.Notes, fmt.Sprintf("%s re-encoded unchanged would differ from the bytes sent: not counted", plural(skipped, "definition")))
	}
	return fd
}

func (f *finder) fill(fd *Finding) {
	fd.TurnTokens = f.c.RequestsPerTurn * fd.Tokens
	fd.Share = share(fd.Tokens, f.c.Total.Tokens)
}

// arrayWith returns the array with some definitions replaced.
func (f *finder) arrayWith(replaced map[int][]byte) []byte {
	defs := make([][]byte, len(f.defs))
	for i, d := range f.defs {
		defs[i] = d.Def
		if b, ok := replaced[i]; ok {
			defs[i] = b
		}
	}
	return joinArray(defs, -1)
}

func notReencodable(d *def) string {
	if len(d.reencoded) != len(d.Def) {
		return fmt.Sprintf("not measured: re-encoding the unchanged definition gives %d bytes, not the %d sent", len(d.reencoded), len(d.Def))
	}
	return fmt.Sprintf("not measured: re-encoding the unchanged definition changes its %d bytes", len(d.Def))
}

// withParams returns d's tree with other parameters.
func (d *def) withParams(p *object) *object {
	return d.tree.with("function", d.fn.with("parameters", p))
}

// withDescription returns d's tree with another description.
func (d *def) withDescription(s string) *object {
	return d.tree.with("function", d.fn.with("description", s))
}

func (f *finder) schemaKeyword() (Finding, bool, error) {
	var changes []change
	for i, d := range f.defs {
		if d.params == nil {
			continue
		}
		if _, ok := d.params.get("$schema"); ok {
			changes = append(changes, change{i: i, tree: d.withParams(d.params.without("$schema"))})
		}
	}
	if len(changes) == 0 {
		return Finding{}, false, nil
	}
	fd := f.measure(KindSchemaKeyword, changes)
	fd.Summary = fmt.Sprintf(`"$schema" in %s: dropping it saves %s per request`, plural(len(changes), "input schema"), f.stake(fd))
	return fd, true, nil
}

func (f *finder) repeatedDefs() (Finding, bool, error) {
	type group struct {
		keyword string
		size    int
		members []int
	}
	var groups []*group
	byBlock := map[string]*group{}
	for i, d := range f.defs {
		if d.params == nil {
			continue
		}
		for _, kw := range []string{"$defs", "definitions"} {
			block, ok := d.params.get(kw)
			if !ok {
				continue
			}
			b, err := encodeJSON(block)
			if err != nil {
				return Finding{}, false, fmt.Errorf("tool %s: %s: %w", d.Name, kw, err)
			}
			key := kw + "\x00" + string(b)
			g := byBlock[key]
			if g == nil {
				g = &group{keyword: kw, size: len(b)}
				byBlock[key] = g
				groups = append(groups, g)
			}
			g.members = append(g.members, i)
		}
	}
	var changes []change
	var notes []string
	repeatedTools := 0
	for _, g := range groups {
		if len(g.members) < 2 {
			continue
		}
		first := f.defs[g.members[0]]
		notes = append(notes, fmt.Sprintf("%d tools carry the same %d-byte %s block, first %s", len(g.members), g.size, g.keyword, first.Name))
		for _, i := range g.members[1:] {
			d := f.defs[i]
			changes = append(changes, change{i: i, tree: d.withParams(d.params.without(g.keyword)), tool: FindingTool{SameAs: first.Name}})
		}
		repeatedTools += len(g.members)
	}
	if len(changes) == 0 {
		return Finding{}, false, nil
	}
	// The changes are in group order; the report reads better in offered order.
	slices.SortStableFunc(changes, func(a, b change) int { return a.i - b.i })
	fd := f.measure(KindRepeatedDefs, changes)
	fd.Notes = append(notes, fd.Notes...)
	for _, s := range f.c.Servers {
		repeats := 0
		for _, t := range fd.Tools {
			if t.Server == s.Name {
				repeats += t.Tokens
			}
		}
		if repeats > 0 {
			fd.Notes = append(fd.Notes, fmt.Sprintf("server %s: the repeats take %d of its %d tokens (%s)", s.Name, repeats, s.Tokens, table.FormatPercent(share(repeats, s.Tokens))))
		}
	}
	fd.Summary = fmt.Sprintf("%s of a schema definitions block another tool already carries (%d tools share blocks) take %s of the catalog: sharing them saves %d tokens per request",
		plural(len(changes), "repeat"), repeatedTools, table.FormatPercent(fd.Share), fd.Tokens)
	if f.bytesOnly {
		fd.Summary = fmt.Sprintf("%s of a schema definitions block another tool already carries (%d tools share blocks): sharing them saves %s per request",
			plural(len(changes), "repeat"), repeatedTools, f.stake(fd))
	}
	return fd, true, nil
}

func (f *finder) htmlEscaping() (Finding, bool, error) {
	fd := Finding{Kind: KindHTMLEscaping, Tools: []FindingTool{}}
	total := 0
	for i, d := range f.defs {
		escaped, n := escapeHTML(d.Def)
		if n == 0 {
			continue
		}
		total += n
		t := FindingTool{Name: d.Name, Server: d.Server, Count: n, Bytes: len(escaped) - len(d.Def)}
		if !f.bytesOnly {
			t.Tokens = count(escaped) - f.c.Tools[i].Tokens
		}
		fd.Tools = append(fd.Tools, t)
		fd.Bytes += t.Bytes
	}
	if total == 0 {
		return Finding{}, false, nil
	}
	if f.bytesOnly {
		fd.Summary = fmt.Sprintf(`%d "<", ">" or "&" in %s: a host that escapes them as \u003c sends %d more bytes per request`,
			total, plural(len(fd.Tools), "tool"), fd.Bytes)
		return fd, true, nil
	}
	// These bytes are sent as they are, so no re-encoding can be wrong here:
	// the escaped form is the sent bytes with the three characters replaced.
	escaped, _ := escapeHTML(f.array)
	fd.Bytes = len(escaped) - len(f.array)
	fd.Tokens = count(escaped) - f.c.Total.Tokens
	f.fill(&fd)
	fd.Summary = fmt.Sprintf(`%d "<", ">" or "&" in %s: a host that escapes them as \u003c sends %d more bytes, %d more tokens per request`,
		total, plural(len(fd.Tools), "tool"), fd.Bytes, fd.Tokens)
	return fd, true, nil
}

func (f *finder) longDescriptions() (Finding, bool, error) {
	var changes []change
	for i, d := range f.defs {
		if d.fn == nil {
			continue
		}
		t := f.descTokens(i)
		var why []string
		if t > f.c.LongTokens {
			why = append(why, fmt.Sprintf("%d tokens, over %d", t, f.c.LongTokens))
		}
		if s := share(t, f.c.Total.Tokens); !f.bytesOnly && len(f.defs) > 1 && s > LongShare {
			why = append(why, fmt.Sprintf("%s of the catalog", table.FormatPercent(s)))
		}
		if len(why) > 0 {
			changes = append(changes, change{i: i, tree: d.withDescription(""), tool: FindingTool{Note: strings.Join(why, "; ")}})
		}
	}
	if len(changes) == 0 {
		return Finding{}, false, nil
	}
	fd := f.measure(KindLongDescription, changes)
	fd.Summary = fmt.Sprintf("%s over %d tokens or %s of the catalog: %d tokens per request",
		plural(len(changes), "description"), f.c.LongTokens, table.FormatPercent(LongShare), fd.Tokens)
	if f.bytesOnly {
		fd.Summary = fmt.Sprintf("%s over %d tokens: %d bytes per request", plural(len(changes), "description"), f.c.LongTokens, fd.Bytes)
	}
	return fd, true, nil
}

func (f *finder) serverPrefix() (Finding, bool, error) {
	var changes []change
	for i, d := range f.defs {
		if d.fn == nil {
			continue
		}
		prefix := "[" + d.Server + "]"
		// The host trims the description: an empty one leaves "[server]".
		switch {
		case strings.HasPrefix(d.desc, prefix+" "):
			changes = append(changes, change{i: i, tree: d.withDescription(d.desc[len(prefix)+1:])})
		case d.desc == prefix:
			changes = append(changes, change{i: i, tree: d.withDescription("")})
		}
	}
	if len(changes) == 0 {
		return Finding{}, false, nil
	}
	fd := f.measure(KindServerPrefix, changes)
	fd.Summary = fmt.Sprintf(`the host's "[server] " prefix on %s costs %s per request`, plural(len(changes), "description"), f.stake(fd))
	return fd, true, nil
}

// stake is what a finding puts at stake per request: tokens, or bytes when
// no token was counted (Findings).
func (f *finder) stake(fd Finding) string {
	if f.bytesOnly {
		return plural(fd.Bytes, "byte")
	}
	return plural(fd.Tokens, "token")
}

// share is part over whole, rounded to 4 decimals so that the JSON stays
// stable.
func share(part, whole int) float64 {
	if whole == 0 {
		return 0
	}
	return math.Round(float64(part)/float64(whole)*1e4) / 1e4
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
