package scenario

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// Datasets: a scenario's `dataset:` is a list of rows, each a question
// with the tool (or tools, or none) that should answer it. Rows are
// written inline or in a file next to the scenario (.yaml, .jsonl, .csv),
// and every row becomes cases of its own (rows x variants x models x
// repeats). A row's routing verdict is computed from what the model
// proposed (route.go) into record.Route, from which the reports compute
// the routing figures.
//
// The three file forms read into the same rows: a YAML file is a list of
// rows; a JSONL file is one JSON object per line; a CSV file has a header
// row naming the keys, list-valued cells separated by ";", and args and
// expect cells written as YAML flow text ({hostname: a}, [{steps: 1}]).
// Every problem of every row is reported at once, with file:line (and the
// column, in a CSV).

// datasetDoc is a scenario's dataset: a file name or inline rows.
type datasetDoc struct {
	file string
	// rows is the inline list, read by the loader (its rows need the
	// scenario's servers and expectations).
	rows *yamlx.Node
}

func (d *datasetDoc) UnmarshalYAML(n *yamlx.Node) error {
	switch n.Kind() {
	case yamlx.Scalar:
		if n.Tag() != "!!str" || strings.TrimSpace(n.Text()) == "" {
			return fmt.Errorf("want a file (.yaml, .jsonl or .csv) or a list of rows, got %s", n.Describe())
		}
		d.file = n.Text()
	case yamlx.Sequence:
		d.rows = n
	default:
		return fmt.Errorf("want a file (.yaml, .jsonl or .csv) or a list of rows, got %s", n.Describe())
	}
	return nil
}

func (*datasetDoc) JSONSchema(r *yamlx.Reflector) *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
		{Type: "string", Description: "A file of rows, relative to the scenario file: .yaml (a list of rows), .jsonl (a JSON object per line) or .csv (a header row of keys; list cells separated by ;)."},
		{Type: "array", Items: r.For(reflect.TypeFor[rowDoc]())},
	}}
}

// rowDoc is one row of a dataset, as YAML and JSONL write it.
type rowDoc struct {
	ID       rowID               `yaml:"id" doc:"The row's id, in case IDs and reports: letters, digits, _ . and - (default: its line in the file)." example:"owner-1"`
	Question *string             `yaml:"question" doc:"The user's question. Required, unless turns is given." example:"who owns jump-prod-02?"`
	Turns    []string            `yaml:"turns" doc:"A conversation of several questions instead (mode: full only); the route is scored on every call of the case." example:"[\"who owns jump-prod-02?\", \"open a ticket for it\"]"`
	Tools    *toolList           `yaml:"tools" doc:"The expected tool or tools, namespaced (required): [] says the right answer is to call no tool (in a CSV, an empty cell)." example:"[cmdb__get_asset]"`
	Match    *matchRule          `yaml:"match" doc:"How the proposed calls are held to tools: first (the first proposed call is one of them; the default), any (some call is), all (every expected tool was called), exact (the set of tools called is the expected set)." example:"any"`
	Forbid   *toolList           `yaml:"forbid" doc:"Tools that must not be proposed: a row that proposes one is wrong whatever else it did." example:"[tickets__open_ticket]"`
	Args     yamlx.Map[argCheck] `yaml:"args" doc:"Arguments the right call must have (a subset): argument -> a value (equal; numbers by value) or a critic: {near: N, tol: T}, {re: REGEX}, {ci: TEXT}, {one_of: [...]} or {exact: VALUE}. They are checked on the first proposed call of an expected tool." example:"{hostname: jump-prod-02, limit: {near: 10, tol: 5}}"`
	Tags     *toolList           `yaml:"tags" doc:"Labels the reports break the figures down by." example:"[owner, easy]"`
	Mode     *routeMode          `yaml:"mode" doc:"route or full for this row, over the scenario's mode." example:"full"`
	Expect   []expectDoc         `yaml:"expect" doc:"Expectations of the kinds of a scenario's expect (not judge) that this row's cases must also meet."`
}

// csvColumns are the keys a CSV header may name, in rowDoc's order. This
// and the package's other tables and patterns of datasets are made on first
// use: a suite without a dataset does not pay for them at start.
var csvColumns = sync.OnceValue(func() []string { return yamlx.Keys(reflect.TypeFor[rowDoc]()) })

var rowIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+$`) })

// rowID is a row's id; a number is read as its text.
type rowID string

func (id *rowID) UnmarshalYAML(n *yamlx.Node) error {
	if n.Kind() != yamlx.Scalar || n.Tag() == "!!null" {
		return fmt.Errorf("want an id, got %s", n.Describe())
	}
	s := n.Text()
	if !rowIDRE().MatchString(s) {
		return fmt.Errorf("%q is not a valid row id: want letters, digits, _ . and -", s)
	}
	*id = rowID(s)
	return nil
}

func (*rowID) JSONSchema(*yamlx.Reflector) *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "string", Pattern: rowIDRE().String()}, {Type: "integer"}}}
}

// toolList is a list of names, or one name alone.
type toolList []string

func (l *toolList) UnmarshalYAML(n *yamlx.Node) error {
	if n.Kind() == yamlx.Scalar {
		var s string
		if n.Decode(&s) {
			*l = toolList{s}
		}
		return nil
	}
	var list []string
	if n.Decode(&list) {
		if list == nil {
			list = []string{}
		}
		*l = list
	}
	return nil
}

func (*toolList) JSONSchema(*yamlx.Reflector) *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "array", Items: &jsonschema.Schema{Type: "string"}}, {Type: "string"}}}
}

// matchRule is a row's match rule.
type matchRule string

func (matchRule) Enum() []string {
	return []string{record.MatchFirst, record.MatchAny, record.MatchAll, record.MatchExact}
}

// routeMode is route or full.
type routeMode string

func (routeMode) Enum() []string { return []string{record.RouteOnly, record.RouteFull} }

// criticDoc is the mapping form of an argument's expected value.
type criticDoc struct {
	Exact any           `yaml:"exact" doc:"Equal to this value (numbers by value): for an expected value that is itself a mapping with these keys." example:"{re: literal}"`
	Near  *float64      `yaml:"near" doc:"A number within tol of this one." example:"10"`
	Tol   *float64      `yaml:"tol" doc:"With near: the largest difference allowed (default 0)." example:"0.5"`
	Re    *yamlx.Regexp `yaml:"re" doc:"A regular expression (RE2) the value matches somewhere (anchor it with ^...$ for all of it); a value that is not a string is matched as JSON." example:"^jump-prod-\\d+$"`
	CI    *string       `yaml:"ci" doc:"Equal to this text, ignoring case." example:"Jump-Prod-02"`
	OneOf []any         `yaml:"one_of" doc:"Equal to one of these values." example:"[P1, P2]"`
}

var criticKeys = sync.OnceValue(func() []string { return yamlx.Keys(reflect.TypeFor[criticDoc]()) })

// argCheck is the expected value of one argument.
type argCheck struct {
	kind  string // "exact", "near", "re", "ci", "one_of"
	value any    // exact: the value, normalised; one_of: []any normalised; ci: the text
	near  float64
	tol   float64
	re    *regexp.Regexp
}

// UnmarshalYAML reads a plain value, or a critic: a mapping whose keys are
// all critic keys.
func (a *argCheck) UnmarshalYAML(n *yamlx.Node) error {
	critic := n.Kind() == yamlx.Mapping && len(n.Keys()) > 0
	for _, k := range n.Keys() {
		if !slices.Contains(criticKeys(), k) {
			critic = false
		}
	}
	if !critic {
		var v yamlx.Value
		if !n.Decode(&v) {
			return nil
		}
		plain, err := v.Plain()
		if err != nil {
			return err
		}
		*a = argCheck{kind: "exact", value: normalize(plain)}
		return nil
	}
	var d criticDoc
	if !n.Decode(&d) {
		return nil
	}
	var kinds []string
	for _, k := range []string{"exact", "near", "re", "ci", "one_of"} {
		if n.Has(k) {
			kinds = append(kinds, k)
		}
	}
	switch {
	case len(kinds) == 0:
		return errors.New("tol goes with near: want {near: N, tol: T}")
	case len(kinds) > 1:
		return fmt.Errorf("want one critic, got %s", joinAnd(kinds))
	case n.Has("tol") && kinds[0] != "near":
		return fmt.Errorf("tol goes with near, not %s", kinds[0])
	}
	switch kinds[0] {
	case "exact":
		*a = argCheck{kind: "exact", value: normalize(d.Exact)}
	case "near":
		if d.Near == nil {
			return errors.New("near: want a number")
		}
		tol := 0.0
		if d.Tol != nil {
			tol = *d.Tol
		}
		if tol < 0 || math.IsNaN(tol) {
			return fmt.Errorf("tol: want 0 or more, got %g", tol)
		}
		*a = argCheck{kind: "near", near: *d.Near, tol: tol}
	case "re":
		if d.Re == nil {
			return errors.New("re: want a regular expression")
		}
		*a = argCheck{kind: "re", re: d.Re.Regexp}
	case "ci":
		if d.CI == nil {
			return errors.New("ci: want a text")
		}
		*a = argCheck{kind: "ci", value: *d.CI}
	case "one_of":
		if len(d.OneOf) == 0 {
			return errors.New("one_of: want a list of values")
		}
		*a = argCheck{kind: "one_of", value: normalize(d.OneOf)}
	}
	return nil
}

func (*argCheck) JSONSchema(r *yamlx.Reflector) *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
		r.For(reflect.TypeFor[criticDoc]()),
		{Description: "Any other value: the argument equals it (numbers by value)."},
	}}
}

// rowFields are a row's values however its file wrote them, with where
// each was written: the one path from a YAML node and a CSV record to a
// row.
type rowFields struct {
	file     string
	line     int
	id       *string
	question *string
	turns    []string // nil: not written
	tools    []string // nil: not written; empty: no tool
	match    string
	forbid   []string
	args     []namedCheck
	tags     []string
	mode     string
	expects  []expectDoc
	// at is where the value of key was written: its line and path.
	at func(key string) (int, string)
}

// namedCheck is one argument's expected value.
type namedCheck struct {
	name  string
	check argCheck
}

// dataset reads the scenario's dataset into its rows.
func (f *fileCtx) dataset(root *yamlx.Node, d *datasetDoc, sc *Scenario) {
	var rows []rowFields
	switch {
	case d.rows != nil:
		rows = f.yamlRows(d.rows)
		if len(d.rows.Items()) == 0 {
			errorAt(root, "dataset", "empty: want rows")
		}
	case d.file != "":
		rows = f.datasetFile(root, d.file)
	default:
		return // reported
	}
	seen := map[string]string{}
	for _, rf := range rows {
		r := f.row(rf, sc)
		if r == nil {
			continue
		}
		if first, dup := seen[r.id]; dup {
			line, path := rf.at("id")
			f.l.problems.Add(Problem{File: fileOf(r.source), Line: line, Path: path, Msg: fmt.Sprintf("duplicate row id %q (first at %s)", r.id, first)})
			continue
		}
		seen[r.id] = r.source
		sc.rows = append(sc.rows, r)
	}
}

// fileOf is the file of a "file:line".
func fileOf(source string) string {
	if i := strings.LastIndexByte(source, ':'); i >= 0 {
		return source[:i]
	}
	return source
}

// datasetFile reads a dataset file, relative to the scenario's folder.
func (f *fileCtx) datasetFile(root *yamlx.Node, rel string) []rowFields {
	abs, display := rel, rel
	if !filepath.IsAbs(rel) {
		abs, display = filepath.Join(f.dir, rel), filepath.Join(filepath.Dir(f.name), rel)
	}
	ext := strings.ToLower(filepath.Ext(rel))
	switch ext {
	case ".yaml", ".yml", ".jsonl", ".csv":
	default:
		errorAt(root, "dataset", "%s: want a .yaml, .jsonl or .csv file", rel)
		return nil
	}
	data, err := f.l.readFile(abs)
	if err != nil {
		errorAt(root, "dataset", "%s: %s", display, fileError(err))
		return nil
	}
	f.l.source(display, data)
	df := &fileCtx{l: f.l, name: display, dir: filepath.Dir(abs)}
	switch {
	case bytes.HasPrefix(data, []byte("\xef\xbb\xbf")):
		f.l.problems.Add(Problem{File: display, Line: 1, Msg: "the file starts with a byte order mark (U+FEFF): save it as UTF-8 without one"})
		return nil
	case len(bytes.TrimSpace(data)) == 0:
		f.l.problems.Add(Problem{File: display, Msg: "empty file: want rows"})
		return nil
	case !utf8.Valid(data):
		f.l.problems.Add(Problem{File: display, Msg: "not UTF-8 text"})
		return nil
	}
	switch ext {
	case ".csv":
		return df.csvRows(data)
	case ".jsonl":
		return df.jsonlRows(data)
	}
	docs := df.parse(data)
	if len(docs) == 0 {
		return nil // a syntax error, reported
	}
	if len(docs) > 1 {
		f.l.problems.Add(Problem{File: display, Line: docs[1].Root().Line(), Msg: "want one YAML document: a list of rows"})
	}
	n := docs[0].Root()
	if n == nil {
		return nil
	}
	if n.Kind() != yamlx.Sequence {
		n.Errorf("want a list of rows, got %s", n.Describe())
		return nil
	}
	return df.yamlRows(n)
}

// yamlRows reads the rows of a YAML list.
func (f *fileCtx) yamlRows(list *yamlx.Node) []rowFields {
	var out []rowFields
	for _, n := range list.Items() {
		if n.Kind() != yamlx.Mapping {
			n.Errorf("want a row (a mapping), got %s", n.Describe())
			continue
		}
		var d rowDoc
		n.Decode(&d)
		rf := rowFields{file: f.name, line: n.Line(), question: d.Question, match: string(deref(d.Match)), mode: string(deref(d.Mode)), expects: d.Expect,
			at: func(key string) (int, string) {
				at := n.At(key)
				if at == n {
					return keyLine(n, key), yamlx.Join(n.Path(), key)
				}
				return at.Line(), yamlx.Join(n.Path(), key)
			}}
		if n.Get("id") != nil && d.ID != "" {
			id := string(d.ID)
			rf.id = &id
		}
		if n.Get("turns") != nil {
			rf.turns = d.Turns
			if rf.turns == nil {
				rf.turns = []string{}
			}
		}
		if n.Get("tools") != nil && d.Tools != nil {
			rf.tools = *d.Tools
		}
		if d.Forbid != nil {
			rf.forbid = *d.Forbid
		}
		if d.Tags != nil {
			rf.tags = *d.Tags
		}
		for _, e := range d.Args {
			if e.OK {
				rf.args = append(rf.args, namedCheck{e.Key, e.Value})
			}
		}
		for i := range rf.expects {
			for j := range rf.expects[i].refs {
				rf.expects[i].refs[j].file = f.name
			}
		}
		out = append(out, rf)
	}
	return out
}

// jsonlRows reads one JSON object per line. Each line is checked as JSON,
// then read as the item of a YAML list (JSON is YAML's flow style), so
// that a row's problems name its line and key like a YAML row's.
func (f *fileCtx) jsonlRows(data []byte) []rowFields {
	var yaml bytes.Buffer
	ok := true
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			yaml.WriteByte('\n')
			continue
		}
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			f.l.problems.Add(Problem{File: f.name, Line: i + 1, Msg: "not a JSON value: " + err.Error()})
			ok = false
			yaml.WriteByte('\n')
			continue
		}
		if _, isObject := v.(map[string]any); !isObject {
			f.l.problems.Add(Problem{File: f.name, Line: i + 1, Msg: "want a row (a JSON object)"})
			ok = false
			yaml.WriteByte('\n')
			continue
		}
		yaml.WriteString("- ")
		yaml.Write(line)
		yaml.WriteByte('\n')
	}
	// The problems of a row name its line, not its place in the list.
	var ps yamlx.Problems
	defer func() {
		for _, p := range ps.Sorted() {
			p.Path = unindexed(p.Path)
			f.l.problems.Add(p)
		}
	}()
	docs, err := yamlx.Parse(f.name, yaml.Bytes(), &ps)
	if err != nil {
		ps.Add(err.(Problem))
	}
	if len(docs) == 0 || docs[0].Root() == nil {
		if ok && err == nil {
			ps.Add(Problem{File: f.name, Msg: "empty file: want rows"})
		}
		return nil
	}
	rows := f.yamlRows(docs[0].Root())
	for i := range rows {
		at := rows[i].at
		rows[i].at = func(key string) (int, string) {
			line, path := at(key)
			return line, unindexed(path)
		}
	}
	return rows
}

// unindexed is a path without its leading list index: "[3].tools" is
// "tools".
func unindexed(path string) string {
	if !strings.HasPrefix(path, "[") {
		return path
	}
	_, rest, _ := strings.Cut(path, "]")
	return strings.TrimPrefix(rest, ".")
}

// csvRows reads a CSV file: a header row of keys, then one row per record.
func (f *fileCtx) csvRows(data []byte) []rowFields {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1 // a ragged row is reported with its line, below
	header, err := r.Read()
	if err != nil {
		f.csvError(err)
		return nil
	}
	cols := map[string]int{}
	ok := true
	for i, name := range header {
		key := strings.TrimSpace(name)
		line, _ := r.FieldPos(i)
		at := Problem{File: f.name, Line: line, Path: fmt.Sprintf("column %d", i+1)}
		switch {
		case key == "":
			at.Msg = "empty column name: want one of " + strings.Join(csvColumns(), ", ")
		case !slices.Contains(csvColumns(), key):
			at.Msg = fmt.Sprintf("unknown column %q%s", key, yamlx.Suggest(key, csvColumns()))
		case cols[key] > 0:
			at.Msg = fmt.Sprintf("column %q is given twice (first column %d)", key, cols[key])
		default:
			cols[key] = i + 1
			continue
		}
		ok = false
		f.l.problems.Add(at)
	}
	if cols["tools"] == 0 {
		f.l.problems.Add(Problem{File: f.name, Line: 1, Msg: "no tools column: every row says which tools answer it (an empty cell: none)"})
		ok = false
	}
	if cols["question"] == 0 && cols["turns"] == 0 {
		f.l.problems.Add(Problem{File: f.name, Line: 1, Msg: "no question column (or turns)"})
		ok = false
	}
	var out []rowFields
	for {
		rec, err := r.Read()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				f.csvError(err)
			}
			break
		}
		lines := make([]int, len(rec))
		for i := range rec {
			lines[i], _ = r.FieldPos(i)
		}
		if len(rec) != len(header) {
			f.l.problems.Add(Problem{File: f.name, Line: lines[0], Msg: fmt.Sprintf("%d cells, but the header has %d columns", len(rec), len(header))})
			continue
		}
		rf := f.csvRow(rec, lines, cols)
		if !ok {
			// The header's problems are reported: a missing column is not
			// a problem of every row too.
			if rf.tools == nil {
				rf.tools = []string{}
			}
			if rf.question == nil && rf.turns == nil {
				rf.question = new("(no question column)")
			}
		}
		out = append(out, rf)
	}
	if ok && len(out) == 0 && f.l.problems.Len() == 0 {
		f.l.problems.Add(Problem{File: f.name, Line: 1, Msg: "no rows under the header"})
	}
	return out
}

func (f *fileCtx) csvError(err error) {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		f.l.problems.Add(Problem{File: f.name, Line: pe.Line, Path: fmt.Sprintf("column %d", pe.Column), Msg: pe.Err.Error()})
		return
	}
	if errors.Is(err, io.EOF) {
		f.l.problems.Add(Problem{File: f.name, Msg: "empty file: want a header row and rows"})
		return
	}
	f.l.problems.Add(Problem{File: f.name, Msg: err.Error()})
}

// csvRow reads one CSV record into a row's fields; lines are where each
// cell starts.
func (f *fileCtx) csvRow(rec []string, lines []int, cols map[string]int) rowFields {
	rf := rowFields{file: f.name, line: lines[0], at: func(key string) (int, string) {
		if cols[key] == 0 {
			return lines[0], ""
		}
		return lines[cols[key]-1], fmt.Sprintf("%s (column %d)", key, cols[key])
	}}
	cell := func(key string) (string, bool) {
		if cols[key] == 0 {
			return "", false
		}
		return rec[cols[key]-1], true
	}
	problem := func(key, format string, args ...any) {
		l, p := rf.at(key)
		f.l.problems.Add(Problem{File: f.name, Line: l, Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	if s, ok := cell("id"); ok && strings.TrimSpace(s) != "" {
		s = strings.TrimSpace(s)
		if rowIDRE().MatchString(s) {
			rf.id = &s
		} else {
			problem("id", "%q is not a valid row id: want letters, digits, _ . and -", s)
		}
	}
	if s, ok := cell("question"); ok && s != "" {
		rf.question = &s
	}
	if s, ok := cell("turns"); ok && s != "" {
		rf.turns = splitList(s)
	}
	if s, ok := cell("tools"); ok {
		rf.tools = splitList(s)
	}
	rf.forbid = listCell(cell("forbid"))
	rf.tags = listCell(cell("tags"))
	for _, e := range []struct {
		key  string
		enum []string
		dst  *string
	}{{"match", matchRule("").Enum(), &rf.match}, {"mode", routeMode("").Enum(), &rf.mode}} {
		s, _ := cell(e.key)
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(e.enum, s) {
			problem(e.key, "%q is not one of %s", s, strings.Join(e.enum, ", "))
			continue
		}
		*e.dst = s
	}
	if s, ok := cell("args"); ok && strings.TrimSpace(s) != "" {
		var m yamlx.Map[argCheck]
		line, _ := rf.at("args")
		if f.cellValue("args", s, line, cols["args"], &m) {
			for _, e := range m {
				rf.args = append(rf.args, namedCheck{e.Key, e.Value})
			}
		}
	}
	if s, ok := cell("expect"); ok && strings.TrimSpace(s) != "" {
		var list []expectDoc
		l, _ := rf.at("expect")
		if f.cellValue("expect", s, l, cols["expect"], &list) {
			for i := range list {
				list[i].line = l
				for j := range list[i].refs {
					r := &list[i].refs[j]
					r.file, r.line, r.path = f.name, l, cellPath("expect", r.path, cols["expect"])
				}
			}
			rf.expects = list
		}
	}
	return rf
}

// cellValue reads a cell written as YAML flow text into v; its problems
// are placed at the cell, on line. It reports whether v was read without
// one.
func (f *fileCtx) cellValue(key, text string, line, col int, v any) bool {
	var ps yamlx.Problems
	docs, err := yamlx.Parse(f.name, []byte(text), &ps)
	if err != nil {
		p := err.(Problem)
		p.Path = ""
		ps.Add(p)
	}
	if len(docs) > 0 && docs[0].Root() != nil {
		docs[0].Root().Decode(v)
	}
	found := ps.Sorted()
	for _, p := range found {
		p.File, p.Line, p.Column, p.Path = f.name, line, 0, cellPath(key, p.Path, col)
		f.l.problems.Add(p)
	}
	return len(found) == 0
}

// cellPath is the path of a value read in a CSV cell: the column's key,
// the path within the cell's value, and the column.
func cellPath(key, inner string, col int) string {
	return fmt.Sprintf("%s (column %d)", yamlx.Join(key, inner), col)
}

// splitList splits a ;-separated cell, trimming each item and dropping
// empty ones.
func splitList(s string) []string {
	out := []string{}
	for item := range strings.SplitSeq(s, ";") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func listCell(s string, ok bool) []string {
	if !ok || strings.TrimSpace(s) == "" {
		return nil
	}
	return splitList(s)
}

// row checks a row's fields and builds it; nil when it has problems.
func (f *fileCtx) row(rf rowFields, sc *Scenario) *row {
	before := f.l.problems.Len()
	file := rf.file // the dataset file's, or the scenario's for inline rows
	problem := func(key, format string, args ...any) {
		line, path := rf.at(key)
		f.l.problems.Add(Problem{File: file, Line: line, Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	r := &row{id: strconv.Itoa(rf.line), source: file + ":" + strconv.Itoa(rf.line), match: cmp.Or(rf.match, record.MatchFirst),
		forbid: rf.forbid, tags: rf.tags, mode: rf.mode, args: rf.args}
	if rf.id != nil {
		r.id = *rf.id
	}
	switch {
	case rf.question != nil && rf.turns != nil:
		problem("turns", "want question or turns, not both")
	case rf.question != nil:
		if strings.TrimSpace(*rf.question) == "" {
			problem("question", "empty")
		}
		r.turns = []string{*rf.question}
	case rf.turns != nil:
		if len(rf.turns) == 0 {
			problem("turns", "empty: want at least one question")
		}
		for _, q := range rf.turns {
			if strings.TrimSpace(q) == "" {
				problem("turns", "a question is empty")
				break
			}
		}
		r.turns = rf.turns
	default:
		line, path := rf.at("question")
		f.l.problems.Add(Problem{File: file, Line: min(line, rf.line), Path: parentPath(path), Msg: "no question (or turns)"})
	}
	if rf.tools == nil {
		line, path := rf.at("tools")
		f.l.problems.Add(Problem{File: file, Line: min(line, rf.line), Path: parentPath(path), Msg: "no tools: name the tools that should answer, or write tools: [] when no tool should"})
	}
	r.tools = rf.tools
	mode := cmp.Or(r.mode, sc.mode, record.RouteFull)
	if mode == record.RouteOnly && len(r.turns) > 1 {
		problem("turns", "mode route scores the model's first answer to one question: give question, or mode: full")
	}
	for _, l := range []struct {
		key   string
		names []string
	}{{"tools", r.tools}, {"forbid", r.forbid}} {
		for _, name := range l.names {
			line, path := rf.at(l.key)
			sc.refs = append(sc.refs, toolRef{kind: refTool, file: file, line: line, path: path, name: name})
		}
	}
	for _, name := range r.forbid {
		if slices.Contains(r.tools, name) {
			problem("forbid", "%s is both expected and forbidden", name)
		}
	}
	if len(r.args) > 0 && len(r.tools) == 0 {
		problem("args", "args are checked on the call of an expected tool, and this row expects none")
	}
	for _, e := range rf.expects {
		for _, ref := range e.refs {
			if ref.file == "" {
				ref.file = file
			}
			sc.refs = append(sc.refs, ref)
		}
		if e.check == nil {
			continue
		}
		switch c := e.check.(type) {
		case *judgeExpect:
			_, path := rf.at("expect")
			f.l.problems.Add(Problem{File: file, Line: e.line, Path: path, Msg: "a judge grades every row: put it in the scenario's expect"})
			continue
		case *stateExpect:
			c.index = len(sc.states) + len(r.states)
			r.states = append(r.states, *e.state)
		case *toolsChangedExpect:
			for _, name := range c.added {
				sc.added = append(sc.added, host.Namespaced(c.server, name))
			}
		}
		r.expects = append(r.expects, &expectation{line: e.line, check: e.check})
	}
	if mode == record.RouteOnly && len(sc.states)+len(r.states) > 0 {
		line, path := rf.at("expect")
		f.l.problems.Add(Problem{File: file, Line: min(line, rf.line), Path: path,
			Msg: "a state expectation calls a server after the conversation, and mode route sends nothing: use mode: full"})
	}
	if f.l.problems.Len() > before {
		return nil
	}
	return r
}

// parentPath is the path of the mapping a key's path is in.
func parentPath(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 && !strings.Contains(path, "(column") {
		return path[:i]
	}
	return ""
}
