package yamlx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// AliasBudget is how many nodes one document may reach through aliases,
// a node counting each time an alias reaches it. A real file reuses a few
// anchors a few times and reaches hundreds; a "billion laughs" file
// (nine levels of nine aliases) would reach 387 million.
const AliasBudget = 10_000

// Kind is what a node holds.
type Kind int

const (
	// Invalid is no node at all: a zero [Value], a field not written.
	Invalid Kind = iota
	// Null is an empty value, ~ or null.
	Null
	Scalar
	Mapping
	Sequence
)

// Doc is one document of a file, parsed but not yet decoded.
type Doc struct {
	st   *state
	root *yaml.Node
}

// state is what the nodes of one document share.
type state struct {
	file  string
	ps    *Problems
	sizes map[*yaml.Node]int // expanded sizes, capped at AliasBudget+1
	costs map[*yaml.Node]int // nodes reached through aliases, capped likewise
	over  bool
	// seen is every node read, by path, so that a problem found after
	// decoding (a model's error naming "scripted[2].call") gets its line.
	seen   map[string]*Node
	unseen int // > 0 while reading a free-form value, whose parts need no paths
	fields map[*yaml.Node][]Field
	items  map[*yaml.Node][]*yaml.Node
	// structs are the fields of each struct type decoded, worked out
	// from its tags once per document: a scenario of 100 scripted steps
	// decodes the step type 100 times.
	structs map[reflect.Type]structFields
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse reads the documents of one YAML file. file names the file in
// problems; ps collects the problems of decoding the documents. Empty
// documents are skipped. A syntax error ends the file: Parse returns the
// documents before it and the error as a Problem (its Err a
// [*SyntaxError]), for the caller to record, perhaps with a hint.
func Parse(file string, data []byte, ps *Problems) ([]*Doc, error) {
	var docs []*Doc
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, syntaxProblem(file, err)
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			continue // an empty document, e.g. after a trailing ---
		}
		st := &state{
			file: file, ps: ps, sizes: map[*yaml.Node]int{}, costs: map[*yaml.Node]int{}, seen: map[string]*Node{},
			fields: map[*yaml.Node][]Field{}, items: map[*yaml.Node][]*yaml.Node{}, structs: map[reflect.Type]structFields{},
		}
		st.checkBudget(root)
		docs = append(docs, &Doc{root: root, st: st})
	}
}

func syntaxProblem(file string, err error) Problem {
	// yaml.v3 leaves "line N: " out for its first line.
	line, msg := 1, err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	return Problem{File: file, Line: line, Msg: msg, Err: &SyntaxError{Err: err}}
}

// Root is the document's top node, nil for a document over its alias
// budget.
func (d *Doc) Root() *Node { return d.st.node(d.root, "", 0) }

// OverBudget reports that the document's aliases would reach more than
// [AliasBudget] nodes: its problem is recorded, the document is not read,
// and nothing more is reported about it.
func (d *Doc) OverBudget() bool { return d.st.over }

// Node is one value of a document, with its aliases resolved and its path.
type Node struct {
	st      *state
	y       *yaml.Node // never an alias
	path    string
	keyLine int      // the line of the field's key; 0 for items and roots
	omit    []string // fields hidden by Omit
}

// node resolves y's aliases and returns it as the node at path, nil for a
// document over its budget.
func (st *state) node(y *yaml.Node, path string, keyLine int) *Node {
	y = st.resolve(y)
	if y == nil {
		return nil
	}
	n := &Node{st: st, y: y, path: path, keyLine: keyLine}
	if _, ok := st.seen[path]; !ok && st.unseen == 0 {
		st.seen[path] = n
	}
	return n
}

// resolve follows an alias (the document is within its budget).
func (st *state) resolve(y *yaml.Node) *yaml.Node {
	if st.over {
		return nil
	}
	for y.Kind == yaml.AliasNode {
		y = y.Alias
	}
	return y
}

const endless = AliasBudget + 1

// checkBudget refuses a document whose aliases reach more than
// AliasBudget nodes, blaming the alias that passes the budget, in
// document order.
func (st *state) checkBudget(root *yaml.Node) {
	if st.cost(root) <= AliasBudget {
		return
	}
	spent := 0
	a := st.blame(root, &spent)
	st.ps.Add(Problem{File: st.file, Line: a.Line, Column: a.Column, Err: ErrAliasBudget,
		Msg: fmt.Sprintf("too many alias expansions: *%s would pass %d nodes, the limit for one document", a.Value, AliasBudget)})
	st.over = true
}

// blame walks y in document order, adding what its aliases reach to
// spent, and returns the alias that passes the budget.
func (st *state) blame(y *yaml.Node, spent *int) *yaml.Node {
	if y.Kind == yaml.AliasNode {
		if *spent+st.size(y.Alias) > AliasBudget {
			return y
		}
		*spent += st.size(y.Alias)
		return nil
	}
	if c := st.cost(y); *spent+c <= AliasBudget {
		*spent += c
		return nil
	}
	for _, c := range y.Content {
		if a := st.blame(c, spent); a != nil {
			return a
		}
	}
	return nil
}

// cost is the number of nodes that walking y reaches through aliases.
func (st *state) cost(y *yaml.Node) int {
	if y.Kind == yaml.AliasNode {
		return st.size(y.Alias)
	}
	if c, ok := st.costs[y]; ok {
		return c
	}
	c := 0
	for _, child := range y.Content {
		c = min(c+st.cost(child), endless)
	}
	st.costs[y] = c
	return c
}

// size is the number of nodes y stands for with its aliases expanded,
// computed once per node; an alias inside its own value counts as
// endless.
func (st *state) size(y *yaml.Node) int {
	if y == nil {
		return endless
	}
	if s, ok := st.sizes[y]; ok {
		if s < 0 {
			return endless // y is being sized: an alias inside its own value
		}
		return s
	}
	st.sizes[y] = -1
	s := 1
	if y.Kind == yaml.AliasNode {
		s = st.size(y.Alias)
	}
	for _, c := range y.Content {
		s = min(s+st.size(c), endless)
	}
	st.sizes[y] = s
	return s
}

// Kind is what the node holds.
func (n *Node) Kind() Kind {
	switch n.y.Kind {
	case yaml.MappingNode:
		return Mapping
	case yaml.SequenceNode:
		return Sequence
	case yaml.ScalarNode:
		if n.y.Tag == "!!null" {
			return Null
		}
		return Scalar
	}
	return Invalid
}

// File is the node's file as problems name it.
func (n *Node) File() string { return n.st.file }

// Path is the node's path from the document, e.g. "expect[2].tool".
func (n *Node) Path() string { return n.path }

// Line and Column are where the value starts.
func (n *Node) Line() int   { return n.y.Line }
func (n *Node) Column() int { return n.y.Column }

// KeyLine is the line of the field's key, or the value's line for a node
// that is not a field's value.
func (n *Node) KeyLine() int {
	if n.keyLine > 0 {
		return n.keyLine
	}
	return n.y.Line
}

// Text is a scalar's text as written ("" for other kinds).
func (n *Node) Text() string {
	if n.y.Kind != yaml.ScalarNode {
		return ""
	}
	return n.y.Value
}

// Tag is the node's resolved tag, e.g. "!!str", "!!int", "!!map".
func (n *Node) Tag() string { return n.y.ShortTag() }

// Describe names the node for "want ..., got ..." messages: "a mapping",
// "a list", "nothing", or a scalar's text, quoted and cut to 40 bytes.
func (n *Node) Describe() string {
	switch n.Kind() {
	case Mapping:
		return "a mapping"
	case Sequence:
		return "a list"
	case Null:
		return "nothing"
	}
	s := n.y.Value
	if len(s) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return strconv.Quote(s)
}

// Errorf records a problem at the node.
func (n *Node) Errorf(format string, args ...any) {
	n.Report(Problem{Line: n.Line(), Column: n.Column(), Path: n.path, Msg: fmt.Sprintf(format, args...)})
}

// Report records a problem of the node's file (its File is set here).
// Nothing is recorded once the document is over its alias budget: what
// follows from a refused value would only mislead.
func (n *Node) Report(p Problem) {
	if n.st.over {
		return
	}
	p.File = n.st.file
	n.st.ps.Add(p)
}

// Locate records err as a problem at or below the node: a [Problem]
// without a file (a check outside this package naming "calls[1].call") is
// placed at that path below the node, on the line it says or else the
// line that path was read from; any other error is a problem at the node.
// An [*Error] is recorded problem by problem.
func (n *Node) Locate(err error) {
	var many *Error
	if errors.As(err, &many) {
		for _, p := range many.Problems {
			n.Locate(p)
		}
		return
	}
	p, ok := err.(Problem)
	switch {
	case !ok:
		n.Report(Problem{Line: n.Line(), Column: n.Column(), Path: n.path, Msg: err.Error(), Err: err})
		return
	case p.File != "":
		n.Report(p)
		return
	}
	at := n.At(p.Path)
	p.Path = Join(n.path, p.Path)
	if p.Line == 0 {
		p.Line, p.Column = at.Line(), at.Column()
	}
	n.Report(p)
}

// At returns the node read at path rel below n (rel "" is n), or, when
// that path was not read, the nearest node above it that was. Problems
// found after decoding use it for their line.
func (n *Node) At(rel string) *Node {
	path := Join(n.path, rel)
	for len(path) > len(n.path) {
		if found, ok := n.st.seen[path]; ok {
			return found
		}
		path = parent(path)
	}
	return n
}

// parent drops a path's last segment: "a.b[2]" -> "a.b" -> "a".
func parent(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		switch path[i] {
		case '.':
			return path[:i]
		case '[':
			return path[:i]
		}
	}
	return ""
}

// Field is one key of a mapping and its value.
type Field struct {
	Key     string
	KeyLine int
	Value   *Node
}

// Fields returns a mapping's fields in the order written, merge keys (<<:
// *anchor) applied: a key written in the mapping wins over a merged one.
// Duplicate keys, keys that are not plain values and bad merges are
// problems. Other kinds have no fields.
func (n *Node) Fields() []Field {
	if n.y.Kind != yaml.MappingNode {
		return nil
	}
	raw, ok := n.st.fields[n.y]
	if !ok {
		raw = n.st.collect(n, n.y, nil, false, 0)
		n.st.fields[n.y] = raw
	}
	out := make([]Field, 0, len(raw))
	for _, f := range raw {
		if slices.Contains(n.omit, f.Key) {
			continue
		}
		v := n.st.node(f.Value.y, Join(n.path, f.Key), f.KeyLine)
		out = append(out, Field{Key: f.Key, KeyLine: f.KeyLine, Value: v})
	}
	return out
}

// collect gathers the fields of mapping m (n is the node being read, for
// problems), the ones written before the merged ones.
func (st *state) collect(n *Node, m *yaml.Node, have []Field, merged bool, depth int) []Field {
	if depth > 16 {
		n.Errorf("merges (<<) nested too deep")
		return have
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			n.Report(Problem{Line: k.Line, Column: k.Column, Path: n.path, Msg: "a mapping key must be a plain value, got " + (&Node{y: k}).Describe()})
			continue
		}
		if k.Tag == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if prev := slices.IndexFunc(have, func(f Field) bool { return f.Key == k.Value }); prev >= 0 {
			if !merged {
				n.Report(Problem{Line: k.Line, Column: k.Column, Path: n.path,
					Msg: fmt.Sprintf("duplicate field %q (first at line %d)", k.Value, have[prev].KeyLine)})
			}
			continue
		}
		v = st.resolve(v)
		if v == nil {
			continue
		}
		have = append(have, Field{Key: k.Value, KeyLine: k.Line, Value: &Node{y: v}})
	}
	for _, mv := range merges {
		mv = st.resolve(mv)
		if mv == nil {
			continue
		}
		list := []*yaml.Node{mv}
		if mv.Kind == yaml.SequenceNode {
			list = mv.Content
		}
		for _, it := range list {
			if it = st.resolve(it); it == nil {
				continue
			}
			if it.Kind != yaml.MappingNode {
				n.Report(Problem{Line: it.Line, Column: it.Column, Path: n.path,
					Msg: "<<: want a mapping or a list of mappings, got " + (&Node{y: it}).Describe()})
				continue
			}
			have = st.collect(n, it, have, true, depth+1)
		}
	}
	return have
}

// Has reports whether the mapping has the key, even with an empty value.
func (n *Node) Has(key string) bool {
	return slices.ContainsFunc(n.Fields(), func(f Field) bool { return f.Key == key })
}

// Get returns the value of a mapping's key, nil when it is absent or
// empty: an empty value counts as not written.
func (n *Node) Get(key string) *Node {
	for _, f := range n.Fields() {
		if f.Key == key && f.Value.Kind() != Null {
			return f.Value
		}
	}
	return nil
}

// Keys are the mapping's keys, in the order of [Node.Fields].
func (n *Node) Keys() []string {
	var keys []string
	for _, f := range n.Fields() {
		keys = append(keys, f.Key)
	}
	return keys
}

// Omit returns the mapping without the given keys, for a hook that
// reported them itself before decoding the rest.
func (n *Node) Omit(keys ...string) *Node {
	m := *n
	m.omit = append(slices.Clone(n.omit), keys...)
	return &m
}

// Items returns a list's items; other kinds have none.
func (n *Node) Items() []*Node {
	if n.y.Kind != yaml.SequenceNode {
		return nil
	}
	raw, ok := n.st.items[n.y]
	if !ok {
		for _, c := range n.y.Content {
			raw = append(raw, n.st.resolve(c))
		}
		n.st.items[n.y] = raw
	}
	out := make([]*Node, 0, len(raw))
	for i, c := range raw {
		if c != nil {
			out = append(out, n.st.node(c, Index(n.path, i), 0))
		}
	}
	return out
}

// Decode reads the node into v, a pointer, as strictly as [Decode] does,
// and reports whether that added no problem.
func (n *Node) Decode(v any) bool {
	before := n.st.ps.Len()
	decodeValue(n, reflectValue(v), "")
	return n.st.ps.Len() == before
}
