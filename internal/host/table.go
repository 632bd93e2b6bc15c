package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/tokens"
)

// Tool is one entry of the host's tool table.
type Tool struct {
	// Name is the namespaced name the model sees: server__tool, sanitised.
	Name   string
	Server string
	// MCP is the tool as its server listed it.
	MCP *mcp.Tool
	// Raw is the tool as its server listed it, byte for byte.
	Raw json.RawMessage
	// Description is the description as sent to the model.
	Description string
	// AutoRun is set when the tool runs without asking the person.
	AutoRun bool
	// Offered is set when the model is offered the tool (allow/deny lists).
	Offered bool
	// Def is the tool's OpenAI-format definition, exactly as it stands in
	// the tools array; Bytes and Tokens measure it.
	Def   json.RawMessage
	Bytes int
	// parameters is the parameters schema in Def, for the model's shape.
	parameters json.RawMessage
	// counter counts Def when asked (Tokens).
	counter *tokens.Cache
}

// ListedDef returns the tool's definition as its server listed it: the
// function-tool format with the server's own name, its own description
// (no "[server] " prefix, no override) and its inputSchema as sent. It is
// what catalog -as listed counts: what another host that forwards a
// server's tools unchanged would send.
func (t *Tool) ListedDef() (json.RawMessage, error) {
	l := &listing{raw: []json.RawMessage{t.Raw}}
	schema, err := l.inputSchema(0, PathsFast)
	if err != nil {
		return nil, err
	}
	return renderDef(t.MCP.Name, t.MCP.Description, schema)
}

// Tokens returns the o200k_base tokens of Def. They are counted when asked
// for, not when the table is built: a host that reports no token figure
// counts nothing.
func (t *Tool) Tokens() int { return t.counter.Count(string(t.Def)) }

var notAllowedInName = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// notNameRune is notAllowedInName for one rune: names are checked before
// the expression runs, as nearly every name needs no change.
func notNameRune(r rune) bool {
	return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-')
}

// Namespaced returns the name the model sees for a server's tool:
// server__tool, made safe for OpenAI tool names (^[a-zA-Z0-9_-]{1,64}$).
func Namespaced(server, tool string) string {
	name := server + "__" + tool
	if strings.ContainsFunc(name, notNameRune) {
		name = notAllowedInName.ReplaceAllString(name, "_")
	}
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

// toolTable is the host's table: every tool of every connected server, and
// the rendered definitions of those offered to the model. A table is never
// changed once built: when a server's tools change, a new one replaces it
// (see follow.go).
type toolTable struct {
	all     map[string]*Tool
	ordered []*Tool // in server order, then the server's order
	offered []*Tool
	// json is the tools array as sent with every model request; tokens
	// counts it on first use.
	json   []byte
	tokens func() tokenCount
	// model is the offered tools in the model's shape, made on first use.
	model func() []model.Tool
	// unknown lists names in the allow/deny lists and description overrides
	// that are not in the table.
	unknown []string
	// listings are the servers' listings the table was built from.
	listings map[string]*listing
}

// buildTable namespaces every tool, refuses collisions, applies the
// allow/deny lists and description overrides, and renders the definitions
// once: every model request then sends these same bytes.
// A tool the host cannot call (task-only, see tasks.go) is not offered.
func buildTable(servers []*serverConn, opts Options) (*toolTable, error) {
	t := &toolTable{all: map[string]*Tool{}, listings: map[string]*listing{}}
	opts.Deny = append(slices.Clone(opts.Deny), taskOnlyTools(servers)...)
	byName := map[string]*serverConn{}
	schemas := map[*Tool]json.RawMessage{}
	for _, s := range servers {
		byName[s.spec.Name] = s
	}
	for _, s := range servers {
		if !s.listed() {
			continue
		}
		autoRun := autoRunSet(s)
		l := s.currentListing()
		t.listings[s.spec.Name] = l
		for i, mt := range l.tools {
			name := Namespaced(s.spec.Name, mt.Name)
			if prev, ok := t.all[name]; ok {
				return nil, fmt.Errorf("%w: tool %q of server %s and tool %q of server %s both become %q: rename one, or give a server another name",
					ErrConfig, prev.MCP.Name, prev.Server, mt.Name, s.spec.Name, name)
			}
			schema, err := l.inputSchema(i, opts.Paths)
			if err != nil {
				return nil, fmt.Errorf("tool %s of server %s: its inputSchema: %w", mt.Name, s.spec.Name, err)
			}
			tool := &Tool{Name: name, Server: s.spec.Name, MCP: mt, Raw: l.raw[i], AutoRun: autoRun(mt)}
			schemas[tool] = schema
			t.all[name] = tool
			t.ordered = append(t.ordered, tool)
		}
	}
	for _, name := range slices.Concat(opts.Allow, opts.Deny, slices.Sorted(maps.Keys(opts.Descriptions))) {
		if _, ok := t.all[name]; !ok && !slices.Contains(t.unknown, name) {
			t.unknown = append(t.unknown, name)
		}
	}
	var defs [][]byte
	for _, tool := range t.ordered {
		tool.Offered = (len(opts.Allow) == 0 || slices.Contains(opts.Allow, tool.Name)) && !slices.Contains(opts.Deny, tool.Name)
		desc := tool.MCP.Description
		if d, ok := opts.Descriptions[tool.Name]; ok {
			desc = d
		}
		tool.Description = strings.TrimSpace("[" + tool.Server + "] " + desc)
		def, err := byName[tool.Server].def(tool, schemas[tool])
		if err != nil {
			return nil, fmt.Errorf("render tool %s: %w", tool.Name, err)
		}
		tool.Def, tool.Bytes, tool.counter = def, len(def), opts.Tokens
		tool.parameters = schemas[tool]
		if len(tool.parameters) == 0 {
			tool.parameters = emptySchema
		}
		if tool.Offered {
			t.offered = append(t.offered, tool)
			defs = append(defs, def)
		}
	}
	t.json = append(append([]byte("["), bytes.Join(defs, []byte(","))...), ']')
	t.tokens = sync.OnceValue(func() tokenCount {
		n, est := opts.Tokens.Measure(string(t.json))
		return tokenCount{n, est}
	})
	t.model = sync.OnceValue(t.renderModelTools)
	return t, nil
}

// collisions says, by the servers' index, why a server's tools cannot be
// in the host's table: two of them become one name (the same name twice,
// or names equal once sanitised), or one becomes the name of a tool of a
// server before it. A server is refused whole, as a model offered half a
// server would be offered a guess; "" for the servers that are fine.
func collisions(servers []*serverConn) []string {
	out := make([]string, len(servers))
	owner := map[string][2]string{} // namespaced name: server, tool
	for i, s := range servers {
		if s == nil || !s.listed() {
			continue
		}
		mine := map[string]string{}
		var names []string
		for _, mt := range s.currentListing().tools {
			name := Namespaced(s.spec.Name, mt.Name)
			if prev, ok := mine[name]; ok {
				out[i] = fmt.Sprintf("%s: its tools %q and %q both become %q in the host's table: rename one", ErrConfig, prev, mt.Name, name)
				break
			}
			mine[name] = mt.Name
			names = append(names, name)
		}
		for _, name := range names {
			if out[i] != "" {
				break
			}
			if o, ok := owner[name]; ok {
				out[i] = fmt.Sprintf("%s: its tool %q and tool %q of server %s both become %q in the host's table: rename one, or give a server another name", ErrConfig, mine[name], o[1], o[0], name)
			}
		}
		if out[i] != "" {
			continue
		}
		for _, name := range names {
			owner[name] = [2]string{s.spec.Name, mine[name]}
		}
	}
	return out
}

// refused returns what stands in the host for s, refused for why: a
// server that offers no tools, with the configuration error. s stops,
// unless the run shares it (a pool's or a catalog's).
func refused(s *serverConn, why string) *serverConn {
	if !s.shared && s.catalog == nil {
		s.close()
	}
	s.mu.Lock()
	info := s.info
	s.mu.Unlock()
	info.Error, info.ConfigError, info.Tools = why, true, 0
	return &serverConn{spec: s.spec, stderr: s.stderr, info: info, dead: why}
}

// def returns tool's rendered definition. A shared server's tools are the
// same for every host that uses it, so their definitions are rendered once
// per description and reused.
func (s *serverConn) def(tool *Tool, schema json.RawMessage) (json.RawMessage, error) {
	if !s.shared {
		return renderDef(tool.Name, tool.Description, schema)
	}
	key := tool.Name + "\x00" + tool.Description + "\x00" + string(schema)
	s.mu.Lock()
	def, ok := s.defs[key]
	s.mu.Unlock()
	if ok {
		return def, nil
	}
	def, err := renderDef(tool.Name, tool.Description, schema)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.defs == nil {
		s.defs = map[string]json.RawMessage{}
	}
	s.defs[key] = def
	s.mu.Unlock()
	return def, nil
}

// emptySchema is the parameters of a tool whose server sent no inputSchema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// renderDef renders one tool in the OpenAI function-tool format, with its
// parameters schema exactly as given: the host sends a server's
// inputSchema as the server wrote it (compacted), not re-encoded. A Go map
// would sort its keys, which reorders the properties the model reads (the
// order a server chose for its arguments) and changes what the catalog
// costs. HTML escaping is off: the endpoint would receive \u003c for every
// "<", which costs bytes and tokens and means nothing to the model.
func renderDef(name, description string, schema json.RawMessage) (json.RawMessage, error) {
	if len(schema) == 0 {
		schema = emptySchema
	}
	def := struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}{Type: "function"}
	def.Function.Name, def.Function.Description, def.Function.Parameters = name, description, schema
	return marshalCompact(def)
}

// compactJSON returns data without insignificant whitespace, its bytes
// otherwise as they were (key order, string escapes).
func compactJSON(data []byte) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// marshalCompact encodes v as compact JSON without HTML escaping.
func marshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// autoRunSet returns whether a tool of s runs without asking: those on its
// auto-run list, by default its read-only tools.
func autoRunSet(s *serverConn) func(*mcp.Tool) bool {
	list := s.spec.AutoRun
	return func(t *mcp.Tool) bool {
		if list == nil {
			return t.Annotations != nil && t.Annotations.ReadOnlyHint
		}
		return slices.Contains(list, "*") || slices.Contains(list, t.Name)
	}
}

// toolDefs measures the tools array.
func (t *toolTable) toolDefs() record.ToolDefs {
	n := t.tokens()
	defs := record.ToolDefs{Tools: len(t.offered), Bytes: len(t.json), Tokens: n.n, Estimated: n.estimated}
	defs.Warning = catalogWarning(defs)
	return defs
}

// tokenCount is a count of tokens, and whether it is an estimate (a text
// over tokens.MaxExact).
type tokenCount struct {
	n         int
	estimated bool
}

// A catalog this large fits no model's context, or costs a request more
// than anyone means to pay: the run says so (issue 23). Counting such a
// catalog is bounded (its tokens are estimated past tokens.MaxExact), and
// so is reading it (64 MiB a message).
const (
	warnTools  = 20_000
	warnTokens = 640_000
)

// catalogWarning says what is wrong with the size of the tools array sent
// with every model request, or "".
func catalogWarning(d record.ToolDefs) string {
	if d.Tools < warnTools && d.Tokens < warnTokens {
		return ""
	}
	about := ""
	if d.Estimated {
		about = "about "
	}
	return fmt.Sprintf("the model is offered %d tools, %s%d tokens (%s) with every request: past %d tools or %d tokens a catalog fits no model's context; offer fewer (allow, deny)",
		d.Tools, about, d.Tokens, sizeText(d.Bytes), warnTools, warnTokens)
}

// modelTools returns the offered tools in the model's shape. Every request
// of every conversation on the table gets the same slice: models read it.
func (t *toolTable) modelTools() []model.Tool { return t.model() }

func (t *toolTable) renderModelTools() []model.Tool {
	out := make([]model.Tool, len(t.offered))
	for i, tool := range t.offered {
		out[i] = model.Tool{Name: tool.Name, Description: tool.Description, Parameters: tool.parameters}
	}
	return out
}

// tableKey identifies a table built from shared servers: the same
// connections, each with the same listing of its tools, under the same
// lists and descriptions, give the same table. A server that lists its
// tools again has a new listing, and so a new key.
func tableKey(servers []*serverConn, opts Options) string {
	var b strings.Builder
	for _, s := range servers {
		fmt.Fprintf(&b, "%p/%p\x00", s, s.currentListing())
	}
	b.WriteString(strings.Join(opts.Allow, "\x00"))
	b.WriteString("\x01")
	b.WriteString(strings.Join(opts.Deny, "\x00"))
	for _, name := range slices.Sorted(maps.Keys(opts.Descriptions)) {
		fmt.Fprintf(&b, "\x01%s\x00%s", name, opts.Descriptions[name])
	}
	fmt.Fprintf(&b, "\x01%p", opts.Tokens)
	return b.String()
}
