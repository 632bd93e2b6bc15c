package lint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Pins: hosteval.lock holds, per server and tool, the definition the model
// is given as the server listed it (name, title, description, input and
// output schema, annotations) in canonical JSON with its SHA-256, and the
// server's instructions with theirs, so that a definition that changed
// after it was reviewed (a "rug pull") fails a check with a diff a
// reviewer can read. The lock is meant to be committed and reviewed: it
// is indented, one key a line, keys sorted.
//
// Canonical JSON: object keys sorted (by their UTF-8 bytes), no white
// space, strings as encoding/json writes them without HTML escaping, a
// number as written when it is an integer and otherwise as a float64 in
// its shortest form (1.0 and 1 are one number). A schema whose keys were
// reordered, or re-indented, is the same definition.

// LockKind is the "kind" of a lock file.
const LockKind = "hosteval.lock"

// DefaultLockFile is the lock's file name.
const DefaultLockFile = "hosteval.lock"

// pinnedFields are the fields of a tool that a pin covers, in the order a
// diff lists them.
var pinnedFields = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

// Lock is the document of a lock file.
type Lock struct {
	Kind    string         `json:"kind"`
	Schema  int            `json:"schema"`
	Servers []PinnedServer `json:"servers"`
}

// PinnedServer is one server's pins.
type PinnedServer struct {
	// Name is the server's name in the host; ServerName and ServerVersion
	// are what it said of itself when pinned.
	Name          string `json:"name"`
	ServerName    string `json:"server_name,omitempty"`
	ServerVersion string `json:"server_version,omitempty"`
	// InstructionsSHA256 is the SHA-256 of its instructions (of "" when it
	// gave none); Instructions are the text, for a diff.
	InstructionsSHA256 string       `json:"instructions_sha256"`
	Instructions       string       `json:"instructions,omitempty"`
	Tools              []PinnedTool `json:"tools"`
}

// PinnedTool is one tool's pin.
type PinnedTool struct {
	Name string `json:"name"`
	// SHA256 is the SHA-256 of Definition in canonical JSON.
	SHA256 string `json:"sha256"`
	// Definition is the tool's pinned fields.
	Definition json.RawMessage `json:"definition"`
}

// Pin makes the lock of the servers' catalogs, in their order.
func Pin(servers []Server) (*Lock, error) {
	lock := &Lock{Kind: LockKind, Schema: Schema, Servers: []PinnedServer{}}
	for _, s := range servers {
		ps := PinnedServer{Name: s.Name, ServerName: s.ServerName, ServerVersion: s.ServerVersion,
			InstructionsSHA256: hashOf([]byte(s.Instructions)), Instructions: s.Instructions, Tools: []PinnedTool{}}
		for i, raw := range s.Tools {
			def, name, err := definition(raw)
			if err != nil {
				return nil, fmt.Errorf("server %s: tool %d: %w", s.Name, i+1, err)
			}
			ps.Tools = append(ps.Tools, PinnedTool{Name: name, SHA256: hashOf(def), Definition: def})
		}
		lock.Servers = append(lock.Servers, ps)
	}
	return lock, nil
}

// definition returns the canonical JSON of a tool's pinned fields, and its
// name.
func definition(raw json.RawMessage) ([]byte, string, error) {
	v, err := decodeNumbers(raw)
	if err != nil {
		return nil, "", err
	}
	tree, ok := v.(map[string]any)
	if !ok {
		return nil, "", errors.New("not a JSON object")
	}
	pinned := map[string]any{}
	for _, k := range pinnedFields {
		if v, ok := tree[k]; ok {
			pinned[k] = v
		}
	}
	name, _ := tree["name"].(string)
	return canonical(pinned), name, nil
}

func decodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// Canonical returns the canonical JSON of a JSON document (see the package's
// pins).
func Canonical(b []byte) ([]byte, error) {
	v, err := decodeNumbers(b)
	if err != nil {
		return nil, err
	}
	return canonical(v), nil
}

func canonical(v any) []byte {
	var b bytes.Buffer
	writeCanonical(&b, v)
	return b.Bytes()
}

func writeCanonical(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(v) {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeCanonical(b, v[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case string:
		writeString(b, v)
	case json.Number:
		b.WriteString(canonicalNumber(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	default:
		b.WriteString("null")
	}
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}

// canonicalNumber writes an integer as written (without a leading "-" on
// zero), and any other number as the float64 it is, in encoding/json's
// shortest form.
func canonicalNumber(n json.Number) string {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			return "0"
		}
		return s
	}
	f, err := n.Float64()
	if err != nil {
		return s
	}
	out, err := json.Marshal(f)
	if err != nil {
		return s
	}
	return string(out)
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// WriteLock writes the lock, indented, one key a line (keys sorted in each
// definition), ending with a newline.
func WriteLock(w io.Writer, l *Lock) error {
	out := *l
	out.Kind, out.Schema = LockKind, Schema
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// ReadLock reads a lock file strictly: its kind and schema, no unknown
// field, and every hash matching what it pins (a definition edited by hand
// without its hash is refused).
func ReadLock(data []byte) (*Lock, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var l Lock
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("read lock: %w", err)
	}
	switch {
	case l.Kind != LockKind:
		return nil, fmt.Errorf("read lock: kind %q, want %q (a file of hosteval pin)", l.Kind, LockKind)
	case l.Schema != Schema:
		return nil, fmt.Errorf("read lock: schema %d, want %d", l.Schema, Schema)
	}
	seen := map[string]bool{}
	for i, s := range l.Servers {
		if s.Name == "" || seen[s.Name] {
			return nil, fmt.Errorf("read lock: server %d: no name, or a name pinned twice (%q)", i+1, s.Name)
		}
		seen[s.Name] = true
		if hashOf([]byte(s.Instructions)) != s.InstructionsSHA256 {
			return nil, fmt.Errorf("read lock: server %s: instructions_sha256 does not match its instructions (edited by hand? run hosteval pin -update)", s.Name)
		}
		for j := range s.Tools {
			t := &l.Servers[i].Tools[j]
			c, err := Canonical(t.Definition)
			if err != nil {
				return nil, fmt.Errorf("read lock: server %s: tool %s: %w", s.Name, t.Name, err)
			}
			if hashOf(c) != t.SHA256 {
				return nil, fmt.Errorf("read lock: server %s: tool %s: its sha256 does not match its definition (edited by hand? run hosteval pin -update)", s.Name, t.Name)
			}
			t.Definition = c
		}
	}
	return &l, nil
}

func (l *Lock) server(name string) *PinnedServer {
	for i := range l.Servers {
		if l.Servers[i].Name == name {
			return &l.Servers[i]
		}
	}
	return nil
}

// Changes lists what differs between two locks, server by server, as
// lines a person reads (pin -update prints them): servers and tools that
// appeared or vanished, and each change with its diff.
func (l *Lock) Changes(next *Lock) []string {
	var out []string
	for _, ns := range next.Servers {
		prev := l.server(ns.Name)
		if prev == nil {
			out = append(out, fmt.Sprintf("server %s: newly pinned, %s", ns.Name, plural(len(ns.Tools), "tool")))
			continue
		}
		for _, c := range compareServer(prev, serverOf(ns)) {
			out = append(out, fmt.Sprintf("server %s: %s", ns.Name, c.summary))
			for _, d := range c.diff {
				out = append(out, "  "+d)
			}
		}
	}
	for _, prev := range l.Servers {
		if next.server(prev.Name) == nil {
			out = append(out, fmt.Sprintf("server %s: no longer pinned", prev.Name))
		}
	}
	return out
}

// serverOf turns a pinned server back into a catalog to compare.
func serverOf(ps PinnedServer) Server {
	s := Server{Name: ps.Name, ServerName: ps.ServerName, ServerVersion: ps.ServerVersion, Instructions: ps.Instructions}
	for _, t := range ps.Tools {
		s.Tools = append(s.Tools, t.Definition)
	}
	return s
}

// change is one difference between a server's pins and its catalog.
type change struct {
	// tool is the tool's name ("" for the instructions); index its place
	// in the catalog (past the end for a tool that vanished).
	tool    string
	index   int
	pointer string
	summary string
	diff    []string
}

// compareServer lists what changed between a server's pins and its
// catalog now.
func compareServer(ps *PinnedServer, s Server) []change {
	var out []change
	version := ""
	if ps.ServerVersion != s.ServerVersion || ps.ServerName != s.ServerName {
		version = fmt.Sprintf("server: %s %s -> %s %s", orNone(ps.ServerName), orNone(ps.ServerVersion), orNone(s.ServerName), orNone(s.ServerVersion))
	}
	withVersion := func(d []string) []string {
		if version == "" {
			return d
		}
		return append([]string{version}, d...)
	}
	if hashOf([]byte(s.Instructions)) != ps.InstructionsSHA256 {
		out = append(out, change{index: -1, pointer: "/instructions", summary: "its instructions changed since they were pinned",
			diff: withVersion([]string{"instructions: " + wordDiff(ps.Instructions, s.Instructions)})})
	}
	pinned := map[string]PinnedTool{}
	for _, t := range ps.Tools {
		pinned[t.Name] = t
	}
	current := map[string]bool{}
	for i, raw := range s.Tools {
		def, name, err := definition(raw)
		if err != nil {
			continue
		}
		current[name] = true
		old, ok := pinned[name]
		switch {
		case !ok:
			out = append(out, change{tool: name, index: i, pointer: "", summary: fmt.Sprintf("the tool %s appeared since the catalog was pinned", name),
				diff: withVersion(describeTool(def))})
		case hashOf(def) != old.SHA256:
			d := diffDefinitions(old.Definition, def)
			var fields []string
			for _, f := range d {
				fields = append(fields, f.field)
			}
			var lines []string
			for _, f := range d {
				lines = append(lines, f.lines...)
			}
			out = append(out, change{tool: name, index: i, pointer: "/" + d[0].field,
				summary: fmt.Sprintf("the tool %s changed since it was pinned: %s", name, strings.Join(slices.Compact(fields), ", ")),
				diff:    withVersion(lines)})
		}
	}
	for i, t := range ps.Tools {
		if !current[t.Name] {
			out = append(out, change{tool: t.Name, index: len(s.Tools) + i, summary: fmt.Sprintf("the tool %s vanished since the catalog was pinned", t.Name),
				diff: withVersion([]string{"- " + t.Name + ": " + firstLine(describeTool(t.Definition))})})
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func firstLine(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}

// describeTool sums up a definition in a line or two: its description and
// its parameters.
func describeTool(def []byte) []string {
	v, err := decodeNumbers(def)
	tree, _ := v.(map[string]any)
	if err != nil || tree == nil {
		return nil
	}
	desc, _ := tree["description"].(string)
	out := []string{"+ description: " + cut(desc, 160)}
	if in, ok := tree["inputSchema"].(map[string]any); ok {
		props, _ := in["properties"].(map[string]any)
		if len(props) > 0 {
			out = append(out, "+ parameters: "+strings.Join(sortedKeys(props), ", "))
		}
	}
	return out
}

// fieldDiff is what changed in one pinned field.
type fieldDiff struct {
	field string
	lines []string
}

// diffDefinitions compares two canonical definitions field by field:
// strings word by word, schemas and annotations key by key.
func diffDefinitions(old, cur []byte) []fieldDiff {
	ov, _ := decodeNumbers(old)
	nv, _ := decodeNumbers(cur)
	o, _ := ov.(map[string]any)
	n, _ := nv.(map[string]any)
	var out []fieldDiff
	for _, k := range pinnedFields {
		a, aok := o[k]
		b, bok := n[k]
		if !aok && !bok {
			continue
		}
		if aok && bok && bytes.Equal(canonical(a), canonical(b)) {
			continue
		}
		fd := fieldDiff{field: k}
		as, aStr := a.(string)
		bs, bStr := b.(string)
		switch {
		case aStr && bStr:
			fd.lines = []string{k + ": " + wordDiff(as, bs)}
		case !bok:
			fd.lines = []string{"- " + k + ": " + cut(string(canonical(a)), 160)}
		case !aok:
			fd.lines = []string{"+ " + k + ": " + cut(string(canonical(b)), 160)}
		default:
			fd.lines = diffTrees("/"+k, a, b)
		}
		out = append(out, fd)
	}
	if len(out) == 0 {
		// Equal field by field: the hashes differ in what the pins do
		// not show (cannot happen with definitions made by Pin).
		out = append(out, fieldDiff{field: "name", lines: []string{"(the canonical definitions differ)"}})
	}
	return out
}

// diffTrees lists the keys added, removed and changed under two JSON
// values: an added or removed subtree once, at its top, with its value; a
// changed string word by word.
func diffTrees(at string, a, b any) []string {
	ao, aObj := a.(map[string]any)
	bo, bObj := b.(map[string]any)
	if aObj && bObj {
		var out []string
		keys := sortedKeys(ao)
		for _, k := range sortedKeys(bo) {
			if _, ok := ao[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			av, aok := ao[k]
			bv, bok := bo[k]
			p := at + "/" + escapePointer(k)
			switch {
			case !bok:
				out = append(out, "- "+p+": "+cut(string(canonical(av)), 120))
			case !aok:
				out = append(out, "+ "+p+": "+cut(string(canonical(bv)), 120))
			case !bytes.Equal(canonical(av), canonical(bv)):
				out = append(out, diffTrees(p, av, bv)...)
			}
		}
		return out
	}
	aa, aArr := a.([]any)
	ba, bArr := b.([]any)
	if aArr && bArr && len(aa) == len(ba) && !allScalars(aa) {
		var out []string
		for i := range aa {
			if !bytes.Equal(canonical(aa[i]), canonical(ba[i])) {
				out = append(out, diffTrees(at+"/"+strconv.Itoa(i), aa[i], ba[i])...)
			}
		}
		return out
	}
	as, aStr := a.(string)
	bs, bStr := b.(string)
	if aStr && bStr {
		return []string{"~ " + at + ": " + wordDiff(as, bs)}
	}
	return []string{"~ " + at + ": " + cut(string(canonical(a)), 80) + " -> " + cut(string(canonical(b)), 80)}
}

func allScalars(vs []any) bool {
	for _, v := range vs {
		switch v.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// wordDiff shows how one text became another, word by word: removed words
// as [-...-], added ones as {+...+}, up to diffContext unchanged words
// around each change and "…" for the rest. Words are made visible.
func wordDiff(a, b string) string {
	aw, bw := strings.Fields(a), strings.Fields(b)
	ops := diffWords(aw, bw)
	if !slices.ContainsFunc(ops, func(op wordOp) bool { return op.kind != '=' }) {
		return "(white space only)"
	}
	var parts []string
	keep := make([]bool, len(ops))
	for i, op := range ops {
		if op.kind != '=' {
			for j := max(0, i-diffContext); j <= min(len(ops)-1, i+diffContext); j++ {
				keep[j] = true
			}
		}
	}
	skipped := false
	for i := 0; i < len(ops); {
		if !keep[i] {
			if !skipped {
				parts = append(parts, "…")
				skipped = true
			}
			i++
			continue
		}
		skipped = false
		kind := ops[i].kind
		var run []string
		for i < len(ops) && keep[i] && ops[i].kind == kind {
			run = append(run, Visible(ops[i].word))
			i++
		}
		text := strings.Join(run, " ")
		switch kind {
		case '-':
			text = "[-" + text + "-]"
		case '+':
			text = "{+" + text + "+}"
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, " ")
}

// diffContext is how many unchanged words a word diff keeps around a
// change.
const diffContext = 4

type wordOp struct {
	kind byte // '=', '-', '+'
	word string
}

// maxDiffCells bounds the longest-common-subsequence table: beyond it the
// changed middle is shown removed and added whole.
const maxDiffCells = 4 << 20

// diffWords is a shortest edit of a into b: the common prefix and suffix,
// and the longest common subsequence of the middle.
func diffWords(a, b []string) []wordOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []wordOp
	for _, w := range a[:pre] {
		ops = append(ops, wordOp{'=', w})
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if (len(am)+1)*(len(bm)+1) > maxDiffCells {
		for _, w := range am {
			ops = append(ops, wordOp{'-', w})
		}
		for _, w := range bm {
			ops = append(ops, wordOp{'+', w})
		}
	} else {
		ops = append(ops, lcs(am, bm)...)
	}
	for _, w := range a[len(a)-suf:] {
		ops = append(ops, wordOp{'=', w})
	}
	return ops
}

func lcs(a, b []string) []wordOp {
	n, m := len(a), len(b)
	// t[i][j] is the LCS of a[i:] and b[j:].
	t := make([][]int32, n+1)
	for i := range t {
		t[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	var ops []wordOp
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			ops = append(ops, wordOp{'=', a[i]})
			i++
			j++
		case t[i+1][j] >= t[i][j+1]:
			ops = append(ops, wordOp{'-', a[i]})
			i++
		default:
			ops = append(ops, wordOp{'+', b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		ops = append(ops, wordOp{'-', a[i]})
	}
	for ; j < m; j++ {
		ops = append(ops, wordOp{'+', b[j]})
	}
	return ops
}

func checkPins(p *run) {
	lock := p.opts.Pins
	if lock == nil {
		return
	}
	pc := &PinCheck{File: p.opts.PinsFile, Checked: []string{}}
	file := p.opts.PinsFile
	if file == "" {
		file = "the lock"
	}
	linted := map[string]bool{}
	for _, s := range p.servers {
		linted[s.Name] = true
		ps := lock.server(s.Name)
		if ps == nil {
			p.report(s, nil, &textAt{field: "server"}, 0, "",
				fmt.Sprintf("the server %s is not pinned in %s: review its catalog, then pin it (hosteval pin -update)", s.Name, file))
			continue
		}
		pc.Checked = append(pc.Checked, s.Name)
		for _, c := range compareServer(ps, s.Server) {
			f := Finding{Rule: p.rule.ID, Severity: p.level, Server: s.Name, Tool: c.tool, Pointer: c.pointer, Field: fieldOf(c.pointer),
				Message: c.summary, Fix: p.rule.Fix, Diff: c.diff, serverIndex: s.index, toolIndex: c.index, ruleIndex: p.ruleIndex}
			if c.tool == "" {
				f.Field = "instructions"
			} else if c.pointer == "" {
				f.Field = "(the whole tool)"
			}
			p.found = append(p.found, f)
		}
	}
	for _, ps := range lock.Servers {
		if !linted[ps.Name] {
			pc.NotLinted = append(pc.NotLinted, ps.Name)
		}
	}
	p.pinCheck = pc
}
