package model

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/hosteval/hosteval/internal/lexical"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// LexicalConfig configures the lexical router: a stand-in for a model
// that reads the tools' descriptions, for CI without an endpoint.
type LexicalConfig struct {
	// MinScore is the BM25 score the best tool must reach to be proposed;
	// below it (and when nothing matches at all) the router calls no tool.
	MinScore float64 `yaml:"min_score" doc:"The BM25 score the best tool must reach to be called; below it the router calls no tool (default 0: any tool that shares a term with the question)." example:"2.5"`
}

// Lexical is the lexical router: for each question it ranks the offered
// tools by BM25 (internal/lexical) over what the host sends of each, its
// name (split on _, - and case), its description, and its parameters'
// names and descriptions, and proposes the best one, or none below
// MinScore. It fills an argument only where a word of the question is one
// of a parameter's enum values or matches its pattern. It is
// deterministic and offline, so a description A/B in CI moves with the
// descriptions; records and reports mark it a lexical proxy, never a
// model. After a call's result it answers with the result.
//
// One router serves every conversation of a scenario (a Template shares
// it): the index of a tools array is built once, on first use, and kept
// by a hash of the array's bytes.
type Lexical struct {
	cfg LexicalConfig
	mu  sync.Mutex
	// indexes are the tool tables seen, by the SHA-256 of their bytes.
	indexes map[[32]byte]*toolIndex
	// seen finds the index of a tools array by where its bytes are: a
	// run's cases of one table share its array, which the host never
	// changes, so hashing it again would find the same index. An entry
	// holds the array, so no other array can come to lie there.
	seen map[*byte]seenArray
}

type seenArray struct {
	data []byte
	ix   *toolIndex
}

// LexicalRanks is how many of the best tools a response's Ranks hold.
const LexicalRanks = 3

func newLexical(cfg LexicalConfig, path string) (*Lexical, error) {
	if cfg.MinScore < 0 || math.IsNaN(cfg.MinScore) || math.IsInf(cfg.MinScore, 0) {
		return nil, yamlx.Errorf(path+"min_score", "want 0 or more, got %g", cfg.MinScore)
	}
	return &Lexical{cfg: cfg, indexes: map[[32]byte]*toolIndex{}, seen: map[*byte]seenArray{}}, nil
}

// Name is "lexical".
func (*Lexical) Name() string { return "lexical" }

// Next proposes the best tool for the last question, or answers.
func (l *Lexical) Next(ctx context.Context, req Request) (Response, error) {
	if len(req.Messages) == 0 {
		return Response{Text: "(lexical router: no question)"}, nil
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role == RoleTool {
		return Response{Text: last.Content}, nil
	}
	if last.Role != RoleUser {
		return Response{Text: "(lexical router: no question)"}, nil
	}
	ix := l.index(req)
	hits := ix.bm25.Rank(lexical.Terms(last.Content), 0)
	var resp Response
	for _, h := range hits[:min(len(hits), LexicalRanks)] {
		resp.Ranks = append(resp.Ranks, record.Rank{Tool: ix.tools[h.Doc].name, Score: round6(h.Score)})
	}
	if len(hits) == 0 || hits[0].Score < l.cfg.MinScore {
		best := "no tool shares a term with the question"
		if len(hits) > 0 {
			best = fmt.Sprintf("the best tool, %s, scored %.3g, under %.3g", ix.tools[hits[0].Doc].name, hits[0].Score, l.cfg.MinScore)
		}
		resp.Text = "(lexical router: no tool: " + best + ")"
		return resp, nil
	}
	t := ix.tools[hits[0].Doc]
	args, err := json.Marshal(t.fill(last.Content))
	if err != nil {
		return Response{}, err
	}
	resp.ToolCalls = []ToolCall{{ID: "lexical-1", Name: t.name, Arguments: string(args)}}
	return resp, nil
}

// round6 keeps six decimals: a score's last bits say nothing, and records
// read better without them.
func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// index returns the index of the request's tools, building it once per
// distinct tools array.
func (l *Lexical) index(req Request) *toolIndex {
	data := []byte(req.ToolsJSON)
	if len(data) == 0 {
		data, _ = json.Marshal(req.Tools)
	}
	l.mu.Lock()
	if s, ok := l.seen[&data[0]]; ok && len(s.data) == len(data) {
		l.mu.Unlock()
		return s.ix
	}
	l.mu.Unlock()
	key := sha256.Sum256(data)
	l.mu.Lock()
	ix, ok := l.indexes[key]
	l.mu.Unlock()
	if !ok {
		ix = newToolIndex(req.Tools)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if prev, ok := l.indexes[key]; ok {
		ix = prev // built meanwhile by another conversation: one index a table
	} else {
		l.indexes[key] = ix
	}
	if len(l.seen) < maxSeenArrays {
		l.seen[&data[0]] = seenArray{data, ix}
	}
	return ix
}

// maxSeenArrays bounds the arrays a router remembers by address: a run
// has a table per configuration, but a conversation whose servers change
// their tools has a new array each time, and those are hashed instead.
const maxSeenArrays = 1024

// toolIndex is a tools array as the router reads it.
type toolIndex struct {
	tools []lexTool
	bm25  *lexical.Index
}

// lexTool is one tool: its name and the parameters an argument can be
// filled for.
type lexTool struct {
	name   string
	params []lexParam
}

// lexParam is a parameter with an enum or a pattern.
type lexParam struct {
	name    string
	typ     string
	enum    []any
	pattern *regexp.Regexp
}

// paramSchema is the part of a parameter's schema the router reads.
type paramSchema struct {
	Type        any    `json:"type"`
	Description string `json:"description"`
	Enum        []any  `json:"enum"`
	Pattern     string `json:"pattern"`
}

func newToolIndex(tools []Tool) *toolIndex {
	ix := &toolIndex{}
	docs := make([][]string, len(tools))
	for i, t := range tools {
		lt := lexTool{name: t.Name}
		text := []string{t.Name, t.Description}
		for _, p := range parameters(t.Parameters) {
			text = append(text, p.name, p.schema.Description)
			lp := lexParam{name: p.name, enum: p.schema.Enum}
			if s, ok := p.schema.Type.(string); ok {
				lp.typ = s
			}
			if p.schema.Pattern != "" {
				lp.pattern, _ = regexp.Compile(p.schema.Pattern) // an ECMA pattern RE2 cannot read fills nothing
			}
			if len(lp.enum) > 0 || lp.pattern != nil {
				lt.params = append(lt.params, lp)
			}
		}
		docs[i] = lexical.Terms(strings.Join(text, " "))
		ix.tools = append(ix.tools, lt)
	}
	ix.bm25 = lexical.NewIndex(docs)
	return ix
}

type namedParam struct {
	name   string
	schema paramSchema
}

// parameters are the top-level properties of a parameters schema, in the
// order the schema writes them (a server's order is part of what it
// sends).
func parameters(schema json.RawMessage) []namedParam {
	var top struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &top) != nil || len(top.Properties) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var out []namedParam
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := tok.(string)
		var p paramSchema
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return out
		}
		json.Unmarshal(raw, &p)
		out = append(out, namedParam{name, p})
	}
	return out
}

// fill returns the arguments a question gives values for: a word that is
// one of a parameter's enum values (ignoring case), or that matches its
// pattern. The first word found wins; a number for a numeric parameter.
func (t lexTool) fill(question string) map[string]any {
	args := map[string]any{}
	words := strings.FieldsFunc(question, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(`,;:!?()[]{}"'`, r)
	})
	for i, w := range words {
		words[i] = strings.TrimRight(w, ".")
	}
	for _, p := range t.params {
		if v, ok := p.value(words); ok {
			args[p.name] = v
		}
	}
	return args
}

func (p lexParam) value(words []string) (any, bool) {
	for _, e := range p.enum {
		text := fmt.Sprint(e)
		if s, ok := e.(string); ok {
			text = s
		}
		if slices.ContainsFunc(words, func(w string) bool { return strings.EqualFold(w, text) }) {
			return e, true
		}
	}
	if p.pattern == nil {
		return nil, false
	}
	for _, w := range words {
		if !p.pattern.MatchString(w) {
			continue
		}
		switch p.typ {
		case "integer":
			if n, err := strconv.ParseInt(w, 10, 64); err == nil {
				return n, true
			}
			continue
		case "number":
			if x, err := strconv.ParseFloat(w, 64); err == nil {
				return x, true
			}
			continue
		}
		return w, true
	}
	return nil, false
}
