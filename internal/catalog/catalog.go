// Package catalog measures what a tool catalog costs in model context: the
// tools array a host sends with every model request, tool by tool and
// server by server, what it costs per turn, where it could be smaller, and
// how two versions of it differ.
//
// It is pure: its input is the definitions in offered order and the exact
// bytes of the tools array they make, and every figure is computed from
// those bytes (tokens are o200k_base, internal/tokens). A definition is
// only re-encoded to measure what one change to it would save, and then
// only after checking that re-encoding it unchanged gives back the bytes
// that were sent.
//
// The JSON document (WriteJSON, Read) is versioned: "kind" is
// "hosteval.catalog" and "schema" is 1. Its field names are the json tags
// of Catalog and the types it holds; sizes are bytes and o200k_base tokens
// per model request unless a name says "turn".
package catalog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hosteval/hosteval/internal/tokens"
)

// Document identification.
const (
	Kind   = "hosteval.catalog"
	Schema = 1
	// Encoding is the tokenizer every token figure is counted with.
	Encoding = "o200k_base"
)

// The forms a catalog is counted in.
const (
	// FormSent is the tools array as hosteval sends it to the model:
	// server__tool names, "[server] " before each description (or the
	// scenario's description), each server's inputSchema as it sent it.
	FormSent = "sent"
	// FormListed is the tools as their servers listed them, in the same
	// function format: each tool's own name and description, its
	// inputSchema as sent. It is what a host that forwards a server's tools
	// unchanged would send, and what a server author compares.
	FormListed = "listed"
)

// Defaults of Options.
const (
	DefaultRequests   = 3
	DefaultLongTokens = 150
	// LongShare flags a description that takes more than this share of the
	// whole catalog's tokens (in a catalog of two tools or more: alone, any
	// described tool would be flagged).
	LongShare = 0.25
)

// ErrMismatch is returned when the tools array is not the definitions
// joined: the figures would not describe what the model receives.
var ErrMismatch = errors.New("the tools array is not the definitions joined in order")

// Entry is one offered tool: its namespaced name, its server, and its
// definition exactly as it stands in the tools array.
type Entry struct {
	Name   string
	Server string
	Def    json.RawMessage
}

// Options configure Measure. The zero value uses the defaults.
type Options struct {
	// RequestsPerTurn is how many model requests a turn makes: each sends
	// the whole array (default DefaultRequests).
	RequestsPerTurn int
	// LongTokens flags descriptions over this many tokens (default
	// DefaultLongTokens).
	LongTokens int
	// Before, when set, is a previous catalog to compare with: the result's
	// Compare is filled.
	Before *Catalog
	// Form names the form the definitions are in (default FormSent).
	Form string
}

// Catalog is the measure of one tools array, and the JSON document.
type Catalog struct {
	Kind     string `json:"kind"`
	Schema   int    `json:"schema"`
	Encoding string `json:"encoding"`
	// Form is the form counted: FormSent or FormListed.
	Form            string `json:"form"`
	RequestsPerTurn int    `json:"requests_per_turn"`
	LongTokens      int    `json:"long_tokens"`
	// Total is the whole array.
	Total Total `json:"total"`
	// Servers are in the order their first tool is offered.
	Servers []Server `json:"servers"`
	// Tools are in offered order.
	Tools    []Tool    `json:"tools"`
	Findings []Finding `json:"findings"`
	// Compare is set when Options.Before was; Read ignores it.
	Compare *Comparison `json:"compare,omitempty"`
}

// Size is a byte count and its o200k_base token count.
type Size struct {
	Bytes  int `json:"bytes"`
	Tokens int `json:"tokens"`
}

// Split divides definitions into the description string (its content as
// sent, escapes included, without the quotes), the parameters JSON, and
// the envelope: everything else (type, name, keys, quotes, braces). Bytes
// add up exactly; envelope tokens are the definition's tokens minus the
// other two, so they also absorb tokens that merge across those borders.
type Split struct {
	Description Size `json:"description"`
	Parameters  Size `json:"parameters"`
	Envelope    Size `json:"envelope"`
}

// Total describes the whole tools array.
type Total struct {
	Tools int `json:"tools"`
	// Bytes and Tokens are the array as sent with every model request.
	Bytes  int `json:"bytes"`
	Tokens int `json:"tokens"`
	// DefBytes and DefTokens sum the definitions measured alone.
	DefBytes  int `json:"def_bytes"`
	DefTokens int `json:"def_tokens"`
	// MarginalBytes and MarginalTokens sum the tools' marginal costs.
	MarginalBytes  int `json:"marginal_bytes"`
	MarginalTokens int `json:"marginal_tokens"`
	// SharedBytes and SharedTokens are what no single tool owns: Bytes
	// minus MarginalBytes (the brackets, less the one separator that the
	// marginals count once too often), Tokens minus MarginalTokens (the
	// same, and tokens that merge across the borders between definitions).
	SharedBytes  int `json:"shared_bytes"`
	SharedTokens int `json:"shared_tokens"`
	// TurnBytes and TurnTokens are RequestsPerTurn times the array.
	TurnBytes  int `json:"turn_bytes"`
	TurnTokens int `json:"turn_tokens"`
	// Estimated is set when the array's tokens (and so the marginal
	// ones) are estimated: it is over the size counted exactly (1 MiB,
	// tokens.MaxExact).
	Estimated bool `json:"estimated,omitempty"`
	Split
}

// Server sums its tools.
type Server struct {
	Name  string `json:"name"`
	Tools int    `json:"tools"`
	// Bytes and Tokens sum its definitions measured alone.
	Bytes  int `json:"bytes"`
	Tokens int `json:"tokens"`
	// MarginalTokens sums its tools' marginal costs.
	MarginalTokens int `json:"marginal_tokens"`
	Split
}

// Tool is one definition.
type Tool struct {
	Name   string `json:"name"`
	Server string `json:"server"`
	// SHA256 is the hex digest of the definition's bytes: Compare calls a
	// tool changed when it differs.
	SHA256 string `json:"sha256"`
	// Bytes and Tokens are the definition alone, as sent.
	Bytes  int `json:"bytes"`
	Tokens int `json:"tokens"`
	// MarginalBytes and MarginalTokens are what the array costs with the
	// tool minus what it costs without it (its separator included).
	MarginalBytes  int `json:"marginal_bytes"`
	MarginalTokens int `json:"marginal_tokens"`
	Split
}

// def is one definition, parsed for re-encoding.
type def struct {
	Entry
	tree   *object // the whole definition
	fn     *object // the "function" member; nil when there is none
	params *object // fn's "parameters", when an object
	desc   string  // fn's "description", when a string
	// reencoded is the unchanged tree encoded again; roundTrip is set when
	// that gives back Def, which is when a change can be measured.
	reencoded []byte
	roundTrip bool
}

// Measure measures the tools array toolsJSON, made of entries' definitions
// in order. It returns ErrMismatch (wrapped) when the array is not exactly
// "[" + the definitions joined with "," + "]".
func Measure(ctx context.Context, entries []Entry, toolsJSON []byte, opts Options) (*Catalog, error) {
	if opts.RequestsPerTurn <= 0 {
		opts.RequestsPerTurn = DefaultRequests
	}
	if opts.LongTokens <= 0 {
		opts.LongTokens = DefaultLongTokens
	}
	defs := make([][]byte, len(entries))
	for i, e := range entries {
		defs[i] = e.Def
	}
	if want := joinArray(defs, -1); !bytes.Equal(toolsJSON, want) {
		return nil, fmt.Errorf("%w: %d bytes, the definitions make %d", ErrMismatch, len(toolsJSON), len(want))
	}
	parsed := make([]*def, len(entries))
	for i, e := range entries {
		d, err := parseDef(e)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", e.Name, err)
		}
		parsed[i] = d
	}

	if opts.Form == "" {
		opts.Form = FormSent
	}
	c := &Catalog{
		Kind: Kind, Schema: Schema, Encoding: Encoding, Form: opts.Form,
		RequestsPerTurn: opts.RequestsPerTurn, LongTokens: opts.LongTokens,
		Tools: make([]Tool, len(entries)), Servers: []Server{}, Findings: []Finding{},
	}
	array := tokens.NewText(string(toolsJSON))
	arrayTokens := array.Count()
	c.Total = Total{
		Tools: len(entries), Bytes: len(toolsJSON), Tokens: arrayTokens, Estimated: array.Estimated(),
		TurnBytes: opts.RequestsPerTurn * len(toolsJSON), TurnTokens: opts.RequestsPerTurn * arrayTokens,
	}
	for i, d := range parsed {
		sum := sha256.Sum256(d.Def)
		t := Tool{Name: d.Name, Server: d.Server, SHA256: hex.EncodeToString(sum[:]), Bytes: len(d.Def), Tokens: count(d.Def)}
		t.Split = split(d, t.Tokens)
		c.Tools[i] = t
	}
	if err := marginals(ctx, defs, array, c.Tools); err != nil {
		return nil, err
	}
	for _, t := range c.Tools {
		c.Total.DefBytes += t.Bytes
		c.Total.DefTokens += t.Tokens
		c.Total.MarginalBytes += t.MarginalBytes
		c.Total.MarginalTokens += t.MarginalTokens
		c.Total.Split = addSplit(c.Total.Split, t.Split)
		s := c.server(t.Server)
		s.Tools++
		s.Bytes += t.Bytes
		s.Tokens += t.Tokens
		s.MarginalTokens += t.MarginalTokens
		s.Split = addSplit(s.Split, t.Split)
	}
	c.Total.SharedBytes = c.Total.Bytes - c.Total.MarginalBytes
	c.Total.SharedTokens = c.Total.Tokens - c.Total.MarginalTokens

	f := finder{c: c, defs: parsed, array: toolsJSON}
	findings, err := f.all(ctx)
	if err != nil {
		return nil, err
	}
	c.Findings = findings
	if opts.Before != nil {
		c.Compare = Compare(opts.Before, c)
	}
	return c, nil
}

// server returns the named server's sums, adding it on first use.
func (c *Catalog) server(name string) *Server {
	for i := range c.Servers {
		if c.Servers[i].Name == name {
			return &c.Servers[i]
		}
	}
	c.Servers = append(c.Servers, Server{Name: name})
	return &c.Servers[len(c.Servers)-1]
}

func parseDef(e Entry) (*def, error) {
	v, err := parseJSON(e.Def)
	if err != nil {
		return nil, fmt.Errorf("parse definition: %w", err)
	}
	tree, ok := v.(*object)
	if !ok {
		return nil, errors.New("the definition is not a JSON object")
	}
	d := &def{Entry: e, tree: tree}
	if fn, ok := tree.get("function"); ok {
		d.fn, _ = fn.(*object)
	}
	if d.fn != nil {
		if p, ok := d.fn.get("parameters"); ok {
			d.params, _ = p.(*object)
		}
		if s, ok := d.fn.get("description"); ok {
			d.desc, _ = s.(string)
		}
	}
	if d.reencoded, err = encodeJSON(tree); err != nil {
		return nil, fmt.Errorf("re-encode definition: %w", err)
	}
	d.roundTrip = bytes.Equal(d.reencoded, e.Def)
	return d, nil
}

// split measures the description and the parameters as they stand in the
// definition's bytes.
func split(d *def, defTokens int) Split {
	var raw struct {
		Function struct {
			Description json.RawMessage `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	var s Split
	// A RawMessage holds the value's bytes as they stand in Def. Decoding
	// fails only on a "function" that is neither an object nor null, which
	// has no description or parameters: all of it is envelope.
	if json.Unmarshal(d.Def, &raw) == nil {
		if desc := raw.Function.Description; len(desc) >= 2 && desc[0] == '"' {
			content := desc[1 : len(desc)-1]
			s.Description = Size{Bytes: len(content), Tokens: count(content)}
		}
		if p := raw.Function.Parameters; len(p) > 0 {
			s.Parameters = Size{Bytes: len(p), Tokens: count(p)}
		}
	}
	s.Envelope = Size{
		Bytes:  len(d.Def) - s.Description.Bytes - s.Parameters.Bytes,
		Tokens: defTokens - s.Description.Tokens - s.Parameters.Tokens,
	}
	return s
}

// descContent is the description's content as it stands in a definition's
// bytes (escapes included, without the quotes), or nil; and whether the
// definition is a JSON object whose "function", if any, is an object or
// null (what decoding it needs).
func descContent(def []byte) ([]byte, bool) {
	var raw struct {
		Function struct {
			Description json.RawMessage `json:"description"`
		} `json:"function"`
	}
	if json.Unmarshal(def, &raw) != nil {
		return nil, false
	}
	// Unmarshal takes null, and only an object leaves no error otherwise.
	valid := !bytes.Equal(bytes.TrimSpace(def), []byte("null"))
	if desc := raw.Function.Description; len(desc) >= 2 && desc[0] == '"' {
		return desc[1 : len(desc)-1], valid
	}
	return nil, valid
}

func addSplit(a, b Split) Split {
	return Split{
		Description: Size{a.Description.Bytes + b.Description.Bytes, a.Description.Tokens + b.Description.Tokens},
		Parameters:  Size{a.Parameters.Bytes + b.Parameters.Bytes, a.Parameters.Tokens + b.Parameters.Tokens},
		Envelope:    Size{a.Envelope.Bytes + b.Envelope.Bytes, a.Envelope.Tokens + b.Envelope.Tokens},
	}
}

// marginals sets each tool's marginal cost: the array's size minus the size
// of the array without it (its definition and one separator). A token can
// span the border between two definitions, so the array without a tool is
// counted exactly, but only around the cut: tokens.Text re-tokenises from
// the last piece that could change to where the pieces meet the array's
// again, and takes the rest from the whole array's count.
func marginals(ctx context.Context, defs [][]byte, array *tokens.Text, tools []Tool) error {
	at := 1 // the first definition starts after "["
	for i, d := range defs {
		if err := ctx.Err(); err != nil {
			return err
		}
		from, to := at-1, at+len(d) // the separator before it, and it
		switch {
		case len(defs) == 1:
			from = at
		case i == 0:
			from, to = at, to+1 // it, and the separator after it
		}
		tools[i].MarginalBytes = to - from
		tools[i].MarginalTokens = array.Count() - array.Without(from, to)
		at += len(d) + 1
	}
	return nil
}

// joinArray returns the tools array of defs, without defs[skip] (skip < 0
// keeps them all).
func joinArray(defs [][]byte, skip int) []byte {
	n := 2
	for _, d := range defs {
		n += len(d) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	first := true
	for i, d := range defs {
		if i == skip {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, d...)
	}
	return append(out, ']')
}

func count(b []byte) int { return tokens.Count(string(b)) }
