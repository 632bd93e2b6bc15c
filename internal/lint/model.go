package lint

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hosteval/hosteval/internal/catalog"
)

// pass is one lint: the servers read once, shared by the rules, which
// run at once (each in a run of its own) and only read it.
type pass struct {
	ctx     context.Context
	opts    Options
	servers []*server
	byName  map[string]*server
	// cost are the catalog's findings, made once for the cost rules.
	costOnce sync.Once
	cost     []catalog.Finding
}

// run is one rule running over a pass, and what it found.
type run struct {
	*pass
	rule      *Rule
	ruleIndex int
	level     Severity
	found     []Finding
	// pinCheck is what checkPins compared.
	pinCheck *PinCheck
}

// server is one server's catalog, read.
type server struct {
	Server
	index int
	tools []*tool
	// names are its tools' names.
	names map[string]bool
	// same is the server listed before it with the same catalog, if any.
	same *server
	// instructions is its instructions as a text to check.
	instructions *textAt
}

// tool is one tool, read from its bytes as listed.
type tool struct {
	server *server
	index  int
	raw    json.RawMessage
	// tree is the tool decoded (numbers as written); nil when it is not a
	// JSON object.
	tree map[string]any
	name string
	// description is its description; hasDescription says whether it has
	// one that is a string.
	description    string
	hasDescription bool
	// input is its inputSchema when an object; annotations its
	// annotations when an object (nil when absent).
	input       map[string]any
	annotations map[string]any
	// rawInput is its inputSchema as written.
	rawInput json.RawMessage
	// texts are every string and key of the tool, with their places.
	texts []*textAt
}

// textKind says what a text is in a tool.
type textKind int

const (
	kindName         textKind = iota // the tool's name
	kindTitle                        // a title: the tool's, its annotations', a schema's
	kindDescription                  // a description: the tool's, a schema's
	kindParam                        // a property's name in a schema
	kindKey                          // another object key
	kindValue                        // another string: an enum value, a default, an example
	kindInstructions                 // the server's instructions
)

// prose reports whether a text of this kind is prose the model reads as
// such: what the rules on meaning read.
func (k textKind) prose() bool {
	return k == kindTitle || k == kindDescription || k == kindInstructions
}

// textAt is one text of a catalog and its place.
type textAt struct {
	pointer string
	field   string
	kind    textKind
	text    string
	// plain is set when the text is printable ASCII (tabs and newlines
	// allowed): no hidden-text rule can fire on it.
	plain bool
	// lower is the text lowercased with the invisible characters taken out
	// (what the rules on meaning match), and offsets maps each of its byte
	// offsets to the text's; nil offsets means the same offsets.
	lower   string
	offsets []int
	// isFolded is set once lower and offsets are made: a text of only
	// invisible characters folds to "".
	isFolded bool
	// hidden is where the text holds each kind of hidden character; nil
	// when it holds none.
	hidden *[hiddenKinds]hiddenRun
}

func newText(pointer, field string, kind textKind, s string) *textAt {
	t := &textAt{pointer: pointer, field: field, kind: kind, text: s, plain: isPlain(s)}
	if !t.plain {
		t.hidden = scanHidden(s)
	}
	// Folded now, not on first use: the rules run on several goroutines
	// over the same texts, and a lazy fold was a data race.
	t.folded()
	return t
}

// isPlain reports whether s is printable ASCII, tabs, newlines and carriage
// returns.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
			return false
		}
	}
	return true
}

// folded returns the text lowercased, invisible characters taken out, made
// once.
func (t *textAt) folded() (string, []int) {
	if t.isFolded {
		return t.lower, t.offsets
	}
	t.isFolded = true
	if t.plain {
		t.lower = strings.ToLower(t.text)
		return t.lower, nil
	}
	var b strings.Builder
	b.Grow(len(t.text))
	offsets := make([]int, 0, len(t.text)+1)
	for i, r := range t.text {
		if invisible(r) {
			continue
		}
		lr := lowerRune(r)
		n := b.Len()
		b.WriteRune(lr)
		for range b.Len() - n {
			offsets = append(offsets, i)
		}
	}
	offsets = append(offsets, len(t.text))
	t.lower, t.offsets = b.String(), offsets
	return t.lower, t.offsets
}

// original maps a byte offset of the folded text to the text's.
func (t *textAt) original(i int) int {
	if t.offsets == nil {
		return i
	}
	if i >= len(t.offsets) {
		return len(t.text)
	}
	return t.offsets[i]
}

func lowerRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	return []rune(strings.ToLower(string(r)))[0]
}

func newPass(ctx context.Context, servers []Server, opts Options) *pass {
	p := &pass{ctx: ctx, opts: opts, byName: map[string]*server{}}
	// Only servers alike in their instructions and number of tools can
	// have the same catalog: the others' tools are never compacted into
	// a key.
	type shape struct {
		instructions string
		tools        int
	}
	shapes := map[shape]int{}
	for _, s := range servers {
		shapes[shape{s.Instructions, len(s.Tools)}]++
	}
	keys := map[string]*server{}
	for i, s := range servers {
		srv := &server{Server: s, index: i, names: map[string]bool{}}
		if s.Instructions != "" {
			srv.instructions = newText("/instructions", "instructions", kindInstructions, s.Instructions)
		}
		srv.tools = make([]*tool, len(s.Tools))
		p.servers = append(p.servers, srv)
		// The same catalog under another name (one server in a servers
		// file twice, with other settings): rules across servers leave
		// the pair alone.
		if shapes[shape{s.Instructions, len(s.Tools)}] > 1 {
			key := catalogKey(s)
			if prev, ok := keys[key]; ok && len(s.Tools) > 0 {
				srv.same = prev
			} else {
				keys[key] = srv
			}
		}
		p.byName[s.Name] = srv
	}
	// Each tool is read on its own, spread over the cores.
	type at struct{ s, t int }
	var all []at
	for i, srv := range p.servers {
		for j := range srv.Tools {
			all = append(all, at{i, j})
		}
	}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for k := w; k < len(all); k += workers {
				srv := p.servers[all[k].s]
				srv.tools[all[k].t] = readTool(srv, all[k].t, srv.Tools[all[k].t])
			}
		})
	}
	wg.Wait()
	for _, srv := range p.servers {
		for _, t := range srv.tools {
			srv.names[t.name] = true
		}
	}
	return p
}

// prepare folds every text the rules on meaning read, ahead of the rules
// (which then only read the pass), spread over workers.
func (p *pass) prepare(workers int) {
	var texts []*textAt
	p.eachText(func(_ *server, _ *tool, txt *textAt) {
		if txt.kind.prose() || txt.kind == kindValue {
			texts = append(texts, txt)
		}
	})
	var wg sync.WaitGroup
	chunk := (len(texts) + workers - 1) / max(workers, 1)
	for w := 0; w < workers && w*chunk < len(texts); w++ {
		part := texts[w*chunk : min(len(texts), (w+1)*chunk)]
		wg.Go(func() {
			for _, txt := range part {
				txt.folded()
			}
		})
	}
	wg.Wait()
}

// catalogKey identifies a catalog's content: its instructions and its tools'
// bytes, compacted.
func catalogKey(s Server) string {
	var b bytes.Buffer
	b.WriteString(s.Instructions)
	for _, raw := range s.Tools {
		b.WriteByte(0)
		if json.Compact(&b, raw) != nil {
			b.Write(raw)
		}
	}
	return b.String()
}

// root returns the server a server's catalog is the same as, or itself.
func (s *server) root() *server {
	if s.same != nil {
		return s.same
	}
	return s
}

// aliases are the other names the named server's catalog is linted under.
func (p *pass) aliases(name string) []string {
	var out []string
	for _, s := range p.servers {
		if s.Name != name && s.root().Name == name {
			out = append(out, s.Name)
		}
	}
	return out
}

// linted are the servers whose findings are their own: a server whose
// catalog is another's is linted under the first name.
func (p *pass) linted() []*server {
	var out []*server
	for _, s := range p.servers {
		if s.same == nil {
			out = append(out, s)
		}
	}
	return out
}

// tools are every tool of the servers linted, in order.
func (p *pass) tools() []*tool {
	var out []*tool
	for _, s := range p.linted() {
		out = append(out, s.tools...)
	}
	return out
}

func readTool(s *server, index int, raw json.RawMessage) *tool {
	t := &tool{server: s, index: index, raw: raw}
	tree, rawInput, ok := decodeTool(raw)
	if !ok {
		return t
	}
	t.tree = tree
	t.rawInput = rawInput
	t.name, _ = tree["name"].(string)
	t.description, t.hasDescription = tree["description"].(string)
	t.input, _ = tree["inputSchema"].(map[string]any)
	t.annotations, _ = tree["annotations"].(map[string]any)
	walk(tree, "", "", textRoot, &t.texts)
	return t
}

// decodeTool decodes a tool's JSON object in one pass, numbers as
// written, with its inputSchema's bytes as written (the cost rules measure
// them); false when it is not one JSON object (trailing data included).
// Members are read one by one rather than into a map of raw values first,
// which read every byte twice more. A repeated key keeps its last value,
// as encoding/json does (FuzzDecodeTool holds it to json.Unmarshal).
func decodeTool(raw []byte) (map[string]any, json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	tree := map[string]any{}
	var rawInput json.RawMessage
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		key, _ := kt.(string)
		var val any
		if key == "inputSchema" {
			var r json.RawMessage
			if dec.Decode(&r) != nil {
				return nil, nil, false
			}
			vdec := json.NewDecoder(bytes.NewReader(r))
			vdec.UseNumber()
			if vdec.Decode(&val) != nil {
				return nil, nil, false
			}
			rawInput = r
		} else if dec.Decode(&val) != nil {
			return nil, nil, false
		}
		tree[key] = val
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, false
	}
	return tree, rawInput, true
}

// where says what part of a tool a walk is in.
type where int

const (
	textRoot        where = iota // the tool object itself
	textSchema                   // a JSON Schema (inputSchema, outputSchema, one of their subschemas)
	textProperties               // a schema's properties: keys are parameter names
	textAnnotations              // the annotations object
	textOther                    // anything else
)

// schemaMaps are the keywords whose value maps names to subschemas.
var schemaMaps = map[string]bool{"properties": true, "$defs": true, "definitions": true, "patternProperties": true, "dependentSchemas": true}

// schemaKeys are the keywords whose value is a subschema or a list of them.
var schemaKeys = map[string]bool{"items": true, "additionalProperties": true, "anyOf": true, "oneOf": true, "allOf": true,
	"not": true, "if": true, "then": true, "else": true, "prefixItems": true, "contains": true, "propertyNames": true,
	"unevaluatedProperties": true, "unevaluatedItems": true, "additionalItems": true}

// walk appends every string and key under v to out, with their places.
func walk(v any, pointer, field string, in where, out *[]*textAt) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			p, f := pointer+"/"+escapePointer(k), joinField(field, k)
			kind, next := kindKey, textOther
			switch in {
			case textRoot:
				switch k {
				case "inputSchema", "outputSchema":
					next = textSchema
				case "annotations":
					next = textAnnotations
				}
			case textSchema:
				switch {
				case schemaMaps[k]:
					next = textProperties
				case schemaKeys[k]:
					next = textSchema
				}
			case textProperties:
				kind, next = kindParam, textSchema
			}
			*out = append(*out, newText(p, f, kind, k))
			if s, ok := v[k].(string); ok {
				*out = append(*out, newText(p, f, stringKind(in, k), s))
				continue
			}
			walk(v[k], p, f, next, out)
		}
	case []any:
		for i, e := range v {
			p, f := pointer+"/"+strconv.Itoa(i), field+"["+strconv.Itoa(i)+"]"
			if s, ok := e.(string); ok {
				*out = append(*out, newText(p, f, kindValue, s))
				continue
			}
			walk(e, p, f, in, out)
		}
	}
}

// stringKind is the kind of the string value of key k in a walk's place.
func stringKind(in where, k string) textKind {
	switch {
	case in == textRoot && k == "name":
		return kindName
	case (in == textRoot || in == textSchema) && k == "description":
		return kindDescription
	case (in == textRoot || in == textSchema || in == textAnnotations) && k == "title":
		return kindTitle
	}
	return kindValue
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(k string) string {
	if !strings.ContainsAny(k, "~/") {
		return k
	}
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

func joinField(field, k string) string {
	if field == "" {
		return k
	}
	return field + "." + k
}

// report records a finding of the running rule.
func (p *run) report(s *server, t *tool, txt *textAt, at int, excerpt, message string) {
	f := Finding{Rule: p.rule.ID, Severity: p.level, Server: s.Name, Text: excerpt, Message: message, Fix: p.rule.Fix,
		serverIndex: s.index, toolIndex: -1, ruleIndex: p.ruleIndex, at: at}
	if t != nil {
		f.Tool, f.toolIndex = t.name, t.index
	}
	if txt != nil {
		f.Field, f.Pointer = txt.field, txt.pointer
	}
	p.found = append(p.found, f)
}

// eachText calls fn with every text of every server linted, its
// instructions first, then its tools' texts.
func (p *pass) eachText(fn func(s *server, t *tool, txt *textAt)) {
	for _, s := range p.linted() {
		if s.instructions != nil {
			fn(s, nil, s.instructions)
		}
		for _, t := range s.tools {
			for _, txt := range t.texts {
				fn(s, t, txt)
			}
		}
	}
}

// property is one parameter of a tool's input schema.
type property struct {
	name   string
	schema map[string]any // nil when it is not an object (true, false)
}

// properties are the tool's top-level parameters, by name.
func (t *tool) properties() []property {
	props, _ := t.input["properties"].(map[string]any)
	var out []property
	for _, k := range sortedKeys(props) {
		s, _ := props[k].(map[string]any)
		out = append(out, property{k, s})
	}
	return out
}

// paramText returns the text of a parameter's description (or nil).
func (t *tool) paramText(name string) *textAt {
	want := "/inputSchema/properties/" + escapePointer(name) + "/description"
	for _, txt := range t.texts {
		if txt.pointer == want && txt.kind == kindDescription {
			return txt
		}
	}
	return nil
}

// textOf returns the tool's text at pointer of the kind, or nil.
func (t *tool) textOf(pointer string, kind textKind) *textAt {
	for _, txt := range t.texts {
		if txt.pointer == pointer && txt.kind == kind {
			return txt
		}
	}
	return nil
}

// hint reads an annotation: its value and whether it is set.
func (t *tool) hint(name string) (bool, bool) {
	v, ok := t.annotations[name].(bool)
	return v, ok
}
