package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/report"
	"github.com/hosteval/hosteval/internal/table"
)

// Load reads scenario files and folders. A folder contributes every *.yaml
// and *.yml file in it, recursively, except files named servers.yaml and
// gates.yaml and anything under a testdata or hidden folder. Every problem
// in every file is reported at once, in a *LoadError, before anything runs.
//
// ${VAR} in server definitions is expanded from the environment when
// loading, except ${CASE_DIR}, which the runner expands for each case
// ([Case.HostOptionsIn]); an openai model's empty base_url, api_key and
// model are taken from the environment too ([model.OpenAIConfig.WithEnv]).
func Load(paths ...string) (*Suite, error) {
	l := newLoader()
	l.caseDir = true
	return l.load(paths)
}

// newLoader returns a loader reading the process's environment, showing
// files it finds relative to the working directory.
func newLoader() *loader {
	l := &loader{
		lookupEnv:    os.LookupEnv,
		serversFiles: map[string]*serversFile{},
		nearest:      map[string]string{},
		names:        map[string]*Scenario{},
		suite:        &Suite{},
	}
	l.cwd, _ = os.Getwd()
	return l
}

// loader gathers the problems of one Load.
type loader struct {
	lookupEnv    func(string) (string, bool)
	cwd          string
	problems     []Problem
	serversFiles map[string]*serversFile // by absolute path
	nearest      map[string]string       // folder -> nearest servers.yaml ("" for none)
	names        map[string]*Scenario
	suite        *Suite
	// caseDir keeps ${CASE_DIR} for the runner to expand per case (Load)
	// instead of reading it from the environment (LoadServers: the CLI's
	// tools, chat and catalog have no case).
	caseDir bool
}

func (l *loader) load(paths []string) (*Suite, error) {
	if len(paths) == 0 {
		return nil, &LoadError{Problems: []Problem{{File: ".", Msg: "no scenario files or folders given"}}}
	}
	for _, file := range l.collect(paths) {
		l.loadFile(file)
	}
	if len(l.problems) == 0 && len(l.suite.Scenarios) == 0 {
		l.problems = append(l.problems, Problem{File: strings.Join(paths, " "), Msg: "no scenarios found"})
	}
	if len(l.problems) > 0 {
		return nil, &LoadError{Problems: dedupe(l.problems)}
	}
	return l.suite, nil
}

// dedupe sorts problems and drops repeats (a YAML anchor merged in several
// places repeats its problems).
func dedupe(ps []Problem) []Problem {
	sortProblems(ps)
	out := ps[:0]
	seen := map[Problem]bool{}
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// collect lists the scenario files named by paths, each once, in the order
// given and, within a folder, in lexical order.
func (l *loader) collect(paths []string) []string {
	var files []string
	seen := map[string]bool{}
	add := func(p string) {
		abs, err := filepath.Abs(p)
		if err != nil {
			abs = p
		}
		if !seen[abs] {
			seen[abs] = true
			files = append(files, p)
		}
	}
	for _, root := range paths {
		info, err := os.Stat(root)
		if err != nil {
			l.problems = append(l.problems, Problem{File: root, Msg: fileError(err)})
			continue
		}
		if !info.IsDir() {
			add(root)
			continue
		}
		found := false
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				l.problems = append(l.problems, Problem{File: p, Msg: fileError(err)})
				return nil
			}
			name := d.Name()
			if d.IsDir() {
				if p != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			ext := filepath.Ext(name)
			if ext != ".yaml" && ext != ".yml" {
				return nil
			}
			switch strings.TrimSuffix(name, ext) {
			case "servers", "gates":
				return nil
			}
			found = true
			add(p)
			return nil
		})
		if err != nil {
			l.problems = append(l.problems, Problem{File: root, Msg: fileError(err)})
		} else if !found {
			l.problems = append(l.problems, Problem{File: root, Msg: "no scenario files (*.yaml, *.yml) in this folder"})
		}
	}
	return files
}

func fileError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// fileCtx is one file being read: its name as shown in problems, and its
// absolute folder, against which relative paths resolve.
type fileCtx struct {
	l    *loader
	name string
	dir  string
}

func (l *loader) file(name string) *fileCtx {
	abs, err := filepath.Abs(name)
	if err != nil {
		abs = name
	}
	return &fileCtx{l: l, name: name, dir: filepath.Dir(abs)}
}

func (f *fileCtx) errorf(n *yaml.Node, path, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	f.errorAt(line, path, fmt.Sprintf(format, args...))
}

func (f *fileCtx) errorAt(line int, path, msg string) {
	f.l.problems = append(f.l.problems, Problem{File: f.name, Line: line, Path: path, Msg: msg})
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError reports a YAML error that stops reading the file.
func (f *fileCtx) syntaxError(err error) {
	line, msg := 0, strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if strings.HasPrefix(msg, "mapping values are not allowed") {
		// The usual cause: an unquoted call with inline arguments.
		msg += ` (quote a value that contains ": ", e.g. call: 'cmdb__get_asset {hostname: a}')`
	}
	f.errorAt(line, "", msg)
}

// loadFile reads one scenario file: one scenario per YAML document.
func (l *loader) loadFile(name string) {
	f := l.file(name)
	data, err := os.ReadFile(name)
	if err != nil {
		f.errorAt(0, "", fileError(err))
		return
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			f.syntaxError(err)
			return
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := deref(doc.Content[0])
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			continue // an empty document, e.g. after a trailing ---
		}
		l.scenario(f, root)
	}
}

// YAML node helpers. They report a problem and return ok=false when a node
// is not what the schema wants.

// deref follows aliases to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// describe names a node's kind or value for "want ..., got ..." messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return strconv.Quote(table.Shorten(n.Value, 40))
	}
	return "an alias"
}

// fields is one mapping's fields by key. Null values count as absent.
type fields struct {
	node  *yaml.Node
	order []string
	keys  map[string]*yaml.Node
	vals  map[string]*yaml.Node
}

// get returns the field's value, nil when absent or null.
func (fs *fields) get(name string) *yaml.Node {
	if fs == nil {
		return nil
	}
	v := deref(fs.vals[name])
	if v == nil || (v.Kind == yaml.ScalarNode && v.Tag == "!!null") {
		return nil
	}
	return v
}

// fields reads a mapping. With known set, keys not in it are reported as
// unknown, with the closest known name suggested. Merge keys (<<: *anchor)
// are honoured; keys written in the mapping win over merged ones.
func (f *fileCtx) fields(n *yaml.Node, path string, known []string) *fields {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		f.errorf(n, path, "want a mapping, got %s", describe(n))
		return nil
	}
	fs := &fields{node: n, keys: map[string]*yaml.Node{}, vals: map[string]*yaml.Node{}}
	f.addPairs(fs, n, path, known, false, 0)
	return fs
}

func (f *fileCtx) addPairs(fs *fields, n *yaml.Node, path string, known []string, merged bool, depth int) {
	if depth > 16 {
		f.errorf(n, path, "merges (<<) nested too deep")
		return
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			f.errorf(k, path, "want a plain key, got %s", describe(k))
			continue
		}
		if k.Tag == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if prev, ok := fs.keys[k.Value]; ok {
			if !merged {
				f.errorf(k, path, "duplicate field %q (first at line %d)", k.Value, prev.Line)
			}
			continue
		}
		if known != nil && !slices.Contains(known, k.Value) {
			f.errorf(k, path, "unknown field %q%s", k.Value, suggest(k.Value, known))
			continue
		}
		fs.order = append(fs.order, k.Value)
		fs.keys[k.Value], fs.vals[k.Value] = k, v
	}
	for _, m := range merges {
		m = deref(m)
		items := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			items = m.Content
		}
		for _, it := range items {
			if it = deref(it); it.Kind != yaml.MappingNode {
				f.errorf(it, path, "<<: want a mapping or a list of mappings, got %s", describe(it))
				continue
			}
			f.addPairs(fs, it, path, known, true, depth+1)
		}
	}
}

func (f *fileCtx) str(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		f.errorf(n, path, "want a string, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

// ident reads a name matching re.
func (f *fileCtx) ident(n *yaml.Node, path string, re *regexp.Regexp, want string) (string, bool) {
	s, ok := f.str(n, path)
	if !ok {
		return "", false
	}
	if !re.MatchString(s) {
		f.errorf(n, path, "%q is not a valid name: want %s", s, want)
		return "", false
	}
	return s, true
}

func (f *fileCtx) integer(n *yaml.Node, path string) (int, bool) {
	var i int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
		f.errorf(n, path, "want a whole number, got %s", describe(n))
		return 0, false
	}
	return i, true
}

func (f *fileCtx) boolean(n *yaml.Node, path string) (bool, bool) {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		f.errorf(n, path, "want true or false, got %s", describe(n))
		return false, false
	}
	return b, true
}

func (f *fileCtx) duration(n *yaml.Node, path string) (time.Duration, bool) {
	s, ok := f.str(n, path)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		f.errorf(n, path, "%v (want e.g. 500ms, 10s, 2m)", err)
		return 0, false
	}
	if d <= 0 {
		f.errorf(n, path, "want a positive duration, got %s", s)
		return 0, false
	}
	return d, true
}

func (f *fileCtx) strList(n *yaml.Node, path string) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		f.errorf(n, path, "want a list, got %s", describe(n))
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for i, c := range n.Content {
		s, good := f.str(deref(c), idx(path, i))
		ok = ok && good
		out = append(out, s)
	}
	return out, ok
}

func (f *fileCtx) regex(n *yaml.Node, path string) (*regexp.Regexp, bool) {
	s, ok := f.str(n, path)
	if !ok {
		return nil, false
	}
	re, err := regexp.Compile(s)
	if err != nil {
		f.errorf(n, path, "%v", err)
		return nil, false
	}
	return re, true
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func idx(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// suggest returns ` (did you mean "x"?)` for the known name closest to
// name, when it is close enough to be a likely typo.
func suggest(name string, known []string) string {
	best, bestD := "", 2+len(name)/4 // accept distances up to 1 + len/4
	for _, k := range known {
		if d := editDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expand replaces ${VAR} with the variable's value and $$ with $. ${HERE}
// is the file's folder. An unset variable is a problem, not an empty string:
// a server started with half its configuration fails in confusing ways.
func (f *fileCtx) expand(n *yaml.Node, path, s string) (string, bool) {
	var b strings.Builder
	ok := true
	for i := 0; i < len(s); {
		if s[i] != '$' || i+1 >= len(s) || (s[i+1] != '$' && s[i+1] != '{') {
			b.WriteByte(s[i])
			i++
			continue
		}
		if s[i+1] == '$' {
			b.WriteByte('$')
			i += 2
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			f.errorf(n, path, "unterminated ${ in %q (write $$ for a literal $)", s)
			return "", false
		}
		name := s[i+2 : i+2+end]
		i += end + 3
		if !envNameRE.MatchString(name) {
			f.errorf(n, path, "${%s}: not a variable name", name)
			ok = false
			continue
		}
		if name == "HERE" {
			b.WriteString(f.dir)
			continue
		}
		if name == caseDirVar && f.l.caseDir {
			b.WriteString(caseDirMark)
			continue
		}
		v, set := f.l.lookupEnv(name)
		if !set {
			hint := ""
			if name == caseDirVar {
				hint = " (hosteval run sets ${CASE_DIR} to a fresh folder for each case; outside a run, set it to a folder)"
			}
			f.errorf(n, path, "environment variable %s is not set%s", name, hint)
			ok = false
			continue
		}
		b.WriteString(v)
	}
	return b.String(), ok
}

// Servers files.

var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$`)

const serverNameWant = `letters, digits, - and single _ (the host names tools server__tool)`

var (
	serverFields       = []string{"command", "args", "env", "inherit_env", "dir", "url", "headers", "auto_run", "shareable"}
	inlineServerFields = append([]string{"name"}, serverFields...)
)

type serversFile struct {
	name  string
	defs  map[string]*serverDef // nil for a server whose definition has problems
	names []string
	ok    bool // read and listed: names not in it are problems
}

// serversFile reads a servers file once, however many scenarios use it.
func (l *loader) serversFile(abs, display string) *serversFile {
	if sf, ok := l.serversFiles[abs]; ok {
		return sf
	}
	sf := &serversFile{name: display, defs: map[string]*serverDef{}}
	l.serversFiles[abs] = sf
	f := &fileCtx{l: l, name: display, dir: filepath.Dir(abs)}
	data, err := os.ReadFile(abs)
	if err != nil {
		f.errorAt(0, "", fileError(err))
		return sf
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		f.syntaxError(err)
		return sf
	}
	if len(doc.Content) == 0 {
		f.errorAt(0, "", `empty file: want a "servers:" mapping`)
		return sf
	}
	root := f.fields(doc.Content[0], "", []string{"servers"})
	servers := root.get("servers")
	if servers == nil {
		if root != nil {
			f.errorf(root.node, "servers", "required")
		}
		return sf
	}
	list := f.fields(servers, "servers", nil)
	if list == nil {
		return sf
	}
	sf.ok = true
	for _, name := range list.order {
		sf.names = append(sf.names, name)
		sf.defs[name] = nil
		if !serverNameRE.MatchString(name) {
			f.errorf(list.keys[name], "servers", "%q is not a valid server name: want %s", name, serverNameWant)
			continue
		}
		path := "servers." + name
		def := f.serverDef(f.fields(list.vals[name], path, serverFields), name, path)
		if def != nil {
			def.line = list.keys[name].Line
			sf.defs[name] = def
		}
	}
	return sf
}

// serverDef reads one server definition, expanding ${VAR} and resolving
// paths against the file's folder. It returns nil when it has problems.
func (f *fileCtx) serverDef(fs *fields, name, path string) *serverDef {
	if fs == nil {
		return nil
	}
	before := len(f.l.problems)
	def := &serverDef{file: f.name, line: fs.node.Line, spec: host.ServerSpec{Name: name}}
	spec := &def.spec
	expandStr := func(key string) (string, *yaml.Node) {
		n := fs.get(key)
		if n == nil {
			return "", nil
		}
		s, ok := f.str(n, join(path, key))
		if ok {
			s, _ = f.expand(n, join(path, key), s)
		}
		return s, n
	}
	command, cn := expandStr("command")
	rawURL, un := expandStr("url")
	switch {
	case cn != nil && un != nil:
		f.errorf(fs.node, path, "want command (a stdio server) or url (an HTTP server), not both")
	case cn == nil && un == nil:
		f.errorf(fs.node, path, "want command (a stdio server) or url (an HTTP server)")
	case cn != nil:
		switch {
		case strings.TrimSpace(command) == "":
			f.errorf(cn, join(path, "command"), "empty")
		case !filepath.IsAbs(command) && strings.Contains(command, "/"):
			command = filepath.Join(f.dir, command)
		}
		spec.Command = command
		if fs.get("headers") != nil {
			f.errorf(fs.keys["headers"], join(path, "headers"), "only for a server with a url")
		}
	default:
		u, err := url.Parse(rawURL)
		switch {
		case strings.Contains(rawURL, caseDirMark):
			// Not a URL until the case runs, and not allowed: see checkCaseDir.
		case err != nil:
			f.errorf(un, join(path, "url"), "%v", err)
		case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			f.errorf(un, join(path, "url"), "%q is not an http or https URL", rawURL)
		}
		spec.URL = rawURL
		for _, key := range []string{"args", "env", "inherit_env", "dir"} {
			if fs.get(key) != nil {
				f.errorf(fs.keys[key], join(path, key), "only for a server with a command")
			}
		}
	}
	if n := fs.get("args"); n != nil {
		args, _ := f.strList(n, join(path, "args"))
		for i, a := range args {
			args[i], _ = f.expand(deref(n.Content[i]), idx(join(path, "args"), i), a)
		}
		spec.Args = args
	}
	if n := fs.get("env"); n != nil {
		env := f.fields(n, join(path, "env"), nil)
		for _, k := range env.orderOrNil() {
			p := join(join(path, "env"), k)
			if !envNameRE.MatchString(k) {
				f.errorf(env.keys[k], p, "%q is not a variable name", k)
				continue
			}
			v := deref(env.vals[k])
			s, ok := f.str(v, p)
			if ok {
				s, _ = f.expand(v, p, s)
			}
			spec.Env = append(spec.Env, k+"="+s)
		}
	}
	if dir, n := expandStr("dir"); n != nil {
		switch {
		case strings.HasPrefix(dir, caseDirMark):
			// An absolute folder, known only when the case runs.
		case strings.Contains(dir, caseDirMark):
			f.errorf(n, join(path, "dir"), "${CASE_DIR} must start the folder, e.g. ${CASE_DIR}/sub")
		case !filepath.IsAbs(dir):
			dir = filepath.Join(f.dir, dir)
		}
		spec.Dir = dir
	}
	if n := fs.get("headers"); n != nil {
		headers := f.fields(n, join(path, "headers"), nil)
		spec.Headers = map[string]string{}
		for _, k := range headers.orderOrNil() {
			p := join(join(path, "headers"), k)
			v := deref(headers.vals[k])
			s, ok := f.str(v, p)
			if ok {
				s, _ = f.expand(v, p, s)
			}
			spec.Headers[k] = s
		}
	}
	if n := fs.get("auto_run"); n != nil {
		p := join(path, "auto_run")
		spec.AutoRun, _ = f.strList(n, p)
		for i, t := range spec.AutoRun {
			def.refs = append(def.refs, toolRef{kind: refAutoRun, file: f.name, line: deref(n.Content[i]).Line, path: idx(p, i), name: t, server: name})
		}
	}
	if n := fs.get("inherit_env"); n != nil {
		spec.InheritEnv, _ = f.boolean(n, join(path, "inherit_env"))
	}
	if n := fs.get("shareable"); n != nil {
		spec.Shareable, _ = f.boolean(n, join(path, "shareable"))
	}
	def.caseDir = f.checkCaseDir(fs, spec, path)
	if len(f.l.problems) > before {
		return nil
	}
	return def
}

// orderOrNil is fs.order, nil for a mapping that could not be read.
func (fs *fields) orderOrNil() []string {
	if fs == nil {
		return nil
	}
	return fs.order
}

// nearestServersFile returns the servers.yaml in dir or the nearest folder
// above it, "" when there is none.
func (l *loader) nearestServersFile(dir string) string {
	if found, ok := l.nearest[dir]; ok {
		return found
	}
	found := ""
	if info, err := os.Stat(filepath.Join(dir, "servers.yaml")); err == nil && info.Mode().IsRegular() {
		found = filepath.Join(dir, "servers.yaml")
	} else if parent := filepath.Dir(dir); parent != dir {
		found = l.nearestServersFile(parent)
	}
	l.nearest[dir] = found
	return found
}

// display is how problems name a file found by the loader: relative to the
// working directory when possible.
func (l *loader) display(abs string) string {
	if l.cwd != "" {
		if rel, err := filepath.Rel(l.cwd, abs); err == nil {
			return rel
		}
	}
	return abs
}

// Scenarios.

var (
	scenarioFields = []string{"name", "description", "servers_file", "servers", "host", "system", "model", "models",
		"turns", "question", "files", "elicitation", "approvals", "variants", "repeat", "timeout", "expect", "gates"}
	hostFields = []string{"protocol", "connect_timeout", "discover_timeout", "tool_timeout", "max_result_bytes", "max_arg_bytes",
		"max_steps", "max_rounds", "allow", "deny", "descriptions", "elicitation", "auto_run"}
	variantFields     = []string{"name", "description", "host", "system"}
	modelFields       = []string{"name", "scripted", "rules", "openai"}
	elicitationFields = []string{"server", "message", "key", "action", "content"}

	scenarioNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

func (l *loader) scenario(f *fileCtx, root *yaml.Node) {
	fs := f.fields(root, "", scenarioFields)
	if fs == nil {
		return
	}
	sc := &Scenario{File: f.name, Line: root.Line, repeat: DefaultRepeat, timeout: DefaultTimeout}
	if n := fs.get("name"); n == nil {
		f.errorf(root, "name", "required")
	} else if name, ok := f.ident(n, "name", scenarioNameRE, "letters, digits, _ . and -"); ok {
		sc.Name = name
		if prev, dup := l.names[name]; dup {
			f.errorf(n, "name", "duplicate scenario name %q (first at %s:%d)", name, prev.File, prev.Line)
		} else {
			l.names[name] = sc
		}
	}
	if n := fs.get("description"); n != nil {
		sc.Description, _ = f.str(n, "description")
	}
	l.scenarioServers(f, fs, sc)
	if n := fs.get("host"); n != nil {
		sc.settings = f.hostSettings(n, "host", &sc.refs)
	}
	if n := fs.get("system"); n != nil {
		sc.system, _ = f.str(n, "system")
	}
	f.models(fs, sc)
	f.turns(fs, sc)
	if n := fs.get("files"); n != nil {
		sc.files = f.files(n, "files", sc)
	}
	if n := fs.get("elicitation"); n != nil {
		sc.elicitation = f.cannedAnswers(n, "elicitation", sc)
	}
	if n := fs.get("approvals"); n != nil {
		sc.approvals, _ = f.strList(n, "approvals")
		for i, a := range sc.approvals {
			sc.refs = append(sc.refs, toolRef{kind: refApproval, file: f.name, line: deref(n.Content[i]).Line, path: idx("approvals", i), name: a})
		}
	}
	if n := fs.get("variants"); n != nil {
		f.variants(n, sc)
	}
	if n := fs.get("repeat"); n != nil {
		if r, ok := f.integer(n, "repeat"); ok {
			if r < 1 {
				f.errorf(n, "repeat", "want 1 or more, got %d", r)
			}
			sc.repeat = r
		}
	}
	if n := fs.get("timeout"); n != nil {
		if d, ok := f.duration(n, "timeout"); ok {
			sc.timeout = d
		}
	}
	if n := fs.get("expect"); n != nil {
		if n.Kind != yaml.SequenceNode {
			f.errorf(n, "expect", "want a list, got %s", describe(n))
		} else {
			for i, item := range n.Content {
				if e := f.expectation(deref(item), idx("expect", i), sc); e != nil {
					sc.expects = append(sc.expects, e)
				}
			}
		}
	}
	if n := fs.get("gates"); n != nil {
		f.gates(n, sc)
	}
	f.checkRefs(sc)
	l.suite.Scenarios = append(l.suite.Scenarios, sc)
}

// scenarioServers resolves the scenario's servers: names from its servers
// file, or inline definitions.
func (l *loader) scenarioServers(f *fileCtx, fs *fields, sc *Scenario) {
	var sf *serversFile
	if n := fs.get("servers_file"); n != nil {
		if rel, ok := f.str(n, "servers_file"); ok {
			abs, display := rel, rel
			if !filepath.IsAbs(rel) {
				abs, display = filepath.Join(f.dir, rel), filepath.Join(filepath.Dir(f.name), rel)
			}
			if info, err := os.Stat(abs); err != nil || info.IsDir() {
				msg := "is a folder, want a servers file"
				if err != nil {
					msg = fileError(err)
				}
				f.errorf(n, "servers_file", "%s: %s", display, msg)
			} else {
				sf = l.serversFile(abs, display)
			}
		}
	}
	list := fs.get("servers")
	if list == nil {
		return
	}
	if list.Kind != yaml.SequenceNode {
		f.errorf(list, "servers", "want a list of server names or definitions, got %s", describe(list))
		return
	}
	searched := fs.get("servers_file") != nil
	seen := map[string]int{}
	for i, item := range list.Content {
		item = deref(item)
		p := idx("servers", i)
		var def *serverDef
		name := ""
		switch item.Kind {
		case yaml.ScalarNode:
			name = item.Value
			if !searched {
				searched = true
				if abs := l.nearestServersFile(f.dir); abs != "" {
					sf = l.serversFile(abs, l.display(abs))
				} else {
					f.errorf(item, p, "no servers file for %q: set servers_file, or put a servers.yaml in %s or a folder above it", name, filepath.Dir(f.name))
				}
			}
			if sf == nil || !sf.ok {
				continue // already reported
			}
			d, ok := sf.defs[name]
			if !ok {
				f.errorf(item, p, "no server %q in %s%s", name, sf.name, suggest(name, sf.names))
				continue
			}
			def = d
		case yaml.MappingNode:
			ifs := f.fields(item, p, inlineServerFields)
			n := ifs.get("name")
			if n == nil {
				f.errorf(item, p, "an inline server needs a name")
				continue
			}
			var ok bool
			if name, ok = f.ident(n, join(p, "name"), serverNameRE, serverNameWant); !ok {
				continue
			}
			def = f.serverDef(ifs, name, p)
		default:
			f.errorf(item, p, "want a server name or a definition, got %s", describe(item))
			continue
		}
		if first, dup := seen[name]; dup {
			f.errorf(item, p, "server %q is listed twice (first at line %d)", name, first)
			continue
		}
		seen[name] = item.Line
		if def != nil {
			sc.servers = append(sc.servers, def)
		} else {
			// Keep the name for later checks; the definition's problems are reported.
			sc.servers = append(sc.servers, &serverDef{spec: host.ServerSpec{Name: name}})
		}
	}
}

func (f *fileCtx) hostSettings(n *yaml.Node, path string, refs *[]toolRef) hostSettings {
	var s hostSettings
	fs := f.fields(n, path, hostFields)
	if fs == nil {
		return s
	}
	if v := fs.get("protocol"); v != nil {
		if str, ok := f.str(v, join(path, "protocol")); ok {
			m, err := host.ParseMode(str)
			if err != nil {
				f.errorf(v, join(path, "protocol"), "%v", err)
			} else {
				s.protocol = &m
			}
		}
	}
	for _, d := range []struct {
		key string
		dst **time.Duration
	}{{"connect_timeout", &s.connectTimeout}, {"discover_timeout", &s.discoverTimeout}, {"tool_timeout", &s.toolTimeout}} {
		if v := fs.get(d.key); v != nil {
			if dur, ok := f.duration(v, join(path, d.key)); ok {
				*d.dst = &dur
			}
		}
	}
	for _, d := range []struct {
		key string
		dst **int
	}{{"max_result_bytes", &s.maxResultBytes}, {"max_arg_bytes", &s.maxArgBytes}, {"max_steps", &s.maxSteps}, {"max_rounds", &s.maxRounds}} {
		v := fs.get(d.key)
		if v == nil {
			continue
		}
		i, ok := f.integer(v, join(path, d.key))
		switch {
		case !ok:
		case d.key == "max_result_bytes" && i != -1 && i <= 0:
			f.errorf(v, join(path, d.key), "want a positive number of bytes, or -1 for no budget, got %d", i)
		case d.key != "max_result_bytes" && i <= 0:
			f.errorf(v, join(path, d.key), "want a positive number, got %d", i)
		default:
			*d.dst = &i
		}
	}
	for _, d := range []struct {
		key string
		dst *[]string
	}{{"allow", &s.allow}, {"deny", &s.deny}} {
		v := fs.get(d.key)
		if v == nil {
			continue
		}
		p := join(path, d.key)
		*d.dst, _ = f.strList(v, p)
		for i, name := range *d.dst {
			*refs = append(*refs, toolRef{kind: refTool, file: f.name, line: deref(v.Content[i]).Line, path: idx(p, i), name: name})
		}
	}
	if v := fs.get("descriptions"); v != nil {
		p := join(path, "descriptions")
		if ds := f.fields(v, p, nil); ds != nil {
			s.descriptions = map[string]string{}
			for _, k := range ds.order {
				s.descriptions[k], _ = f.str(deref(ds.vals[k]), join(p, k))
				*refs = append(*refs, toolRef{kind: refTool, file: f.name, line: ds.keys[k].Line, path: p, name: k})
			}
		}
	}
	if v := fs.get("elicitation"); v != nil {
		if b, ok := f.boolean(v, join(path, "elicitation")); ok {
			s.elicitation = &b
		}
	}
	if v := fs.get("auto_run"); v != nil {
		p := join(path, "auto_run")
		if ar := f.fields(v, p, nil); ar != nil {
			s.autoRun = map[string][]string{}
			for _, server := range ar.order {
				sp := join(p, server)
				*refs = append(*refs, toolRef{kind: refServer, file: f.name, line: ar.keys[server].Line, path: p, name: server})
				list, _ := f.strList(deref(ar.vals[server]), sp)
				s.autoRun[server] = list
				for i, t := range list {
					*refs = append(*refs, toolRef{kind: refAutoRun, file: f.name, line: deref(ar.vals[server]).Content[i].Line, path: idx(sp, i), name: t, server: server})
				}
			}
		}
	}
	return s
}

func (f *fileCtx) models(fs *fields, sc *Scenario) {
	one, many := fs.get("model"), fs.get("models")
	switch {
	case one != nil && many != nil:
		f.errorf(fs.keys["models"], "models", "want model or models, not both")
		return
	case one == nil && many == nil:
		f.errorf(fs.node, "model", "required (or models)")
		return
	case one != nil:
		if spec, ok := f.modelSpec(one, "model"); ok {
			sc.models = []ModelSpec{spec}
		}
		return
	}
	if many.Kind != yaml.SequenceNode || len(many.Content) == 0 {
		f.errorf(many, "models", "want a list of models, got %s", describe(many))
		return
	}
	seen := map[string]int{}
	for i, item := range many.Content {
		p := idx("models", i)
		spec, ok := f.modelSpec(deref(item), p)
		if !ok {
			continue
		}
		if first, dup := seen[spec.Name]; dup {
			f.errorf(item, p, "duplicate model name %q (first at line %d): give each model a name", spec.Name, first)
			continue
		}
		seen[spec.Name] = item.Line
		sc.models = append(sc.models, spec)
	}
}

// modelSpec reads one model: its kind's configuration is decoded with the
// model package's own yaml tags, after a walk that reports unknown fields
// with their lines; then the model is built once to check it.
func (f *fileCtx) modelSpec(n *yaml.Node, path string) (ModelSpec, bool) {
	var spec ModelSpec
	fs := f.fields(n, path, modelFields)
	if fs == nil {
		return spec, false
	}
	before := len(f.l.problems)
	if v := fs.get("name"); v != nil {
		if s, ok := f.str(v, join(path, "name")); ok && strings.TrimSpace(s) == "" {
			f.errorf(v, join(path, "name"), "empty")
		} else {
			spec.Name = s
		}
	}
	var kinds []string
	for _, k := range []string{"scripted", "rules", "openai"} {
		if _, ok := fs.keys[k]; ok {
			kinds = append(kinds, k)
		}
	}
	switch len(kinds) {
	case 0:
		f.errorf(fs.node, path, "no model kind: want one of scripted, rules or openai")
		return spec, false
	case 1:
	default:
		f.errorf(fs.keys[kinds[1]], path, "want one model kind, got %s", strings.Join(kinds, " and "))
		return spec, false
	}
	kind := kinds[0]
	kpath := join(path, kind)
	kn := fs.get(kind)
	if kn == nil {
		f.errorf(fs.keys[kind], kpath, "empty")
		return spec, false
	}
	var target any
	switch kind {
	case "scripted":
		target = &spec.Scripted
	case "rules":
		spec.Rules = &model.RulesConfig{}
		target = spec.Rules
	default:
		spec.OpenAI = &model.OpenAIConfig{}
		target = spec.OpenAI
	}
	f.checkKnownFields(kn, reflect.TypeOf(target).Elem(), kpath, 0)
	if len(f.l.problems) > before {
		return spec, false
	}
	if err := kn.Decode(target); err != nil {
		f.decodeError(kn, kpath, err)
		return spec, false
	}
	if spec.Scripted == nil && kind == "scripted" {
		spec.Scripted = []model.ScriptStep{}
	}
	if spec.OpenAI != nil {
		*spec.OpenAI = spec.OpenAI.WithEnv(func(k string) string { v, _ := f.l.lookupEnv(k); return v })
	}
	m, err := spec.New()
	if err != nil {
		f.modelError(n, path, err)
		return spec, false
	}
	if spec.Name == "" {
		spec.Name = m.Name()
	}
	return spec, true
}

var lineMsgRE = regexp.MustCompile(`^line (\d+): (?s)(.*)$`)

// decodeError reports a yaml.v3 decoding error, one problem per line it
// names.
func (f *fileCtx) decodeError(n *yaml.Node, path string, err error) {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		f.errorf(n, path, "%v", err)
		return
	}
	for _, e := range te.Errors {
		if m := lineMsgRE.FindStringSubmatch(e); m != nil {
			line, _ := strconv.Atoi(m[1])
			f.errorAt(line, path, m[2])
		} else {
			f.errorf(n, path, "%s", e)
		}
	}
}

var errPathRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])*(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])*)*): (?s)(.*)$`)

// modelError reports an error from building a model. The model package's
// errors start with the field's path ("scripted[2].call: ..."), which is
// followed in the YAML to find the line.
func (f *fileCtx) modelError(n *yaml.Node, path string, err error) {
	msg := err.Error()
	m := errPathRE.FindStringSubmatch(msg)
	if m == nil {
		f.errorf(n, path, "%s", msg)
		return
	}
	line := nodeAt(n, m[1]).Line
	rest := m[2]
	if lm := lineMsgRE.FindStringSubmatch(rest); lm != nil {
		line, _ = strconv.Atoi(lm[1])
		rest = lm[2]
	}
	f.errorAt(line, join(path, m[1]), rest)
}

var (
	segmentRE = regexp.MustCompile(`^([^\[]*)((?:\[\d+\])*)$`)
	digitsRE  = regexp.MustCompile(`\d+`)
)

// nodeAt follows a path like "rules[1].match" from n as far as it goes and
// returns the node it reached.
func nodeAt(n *yaml.Node, path string) *yaml.Node {
	for _, seg := range strings.Split(path, ".") {
		m := segmentRE.FindStringSubmatch(seg)
		if m == nil {
			return n
		}
		if m[1] != "" {
			next := valueOf(deref(n), m[1])
			if next == nil {
				return n
			}
			n = next
		}
		for _, is := range digitsRE.FindAllString(m[2], -1) {
			i, _ := strconv.Atoi(is)
			d := deref(n)
			if d.Kind != yaml.SequenceNode || i >= len(d.Content) {
				return n
			}
			n = d.Content[i]
		}
	}
	return n
}

func valueOf(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

var nodeType = reflect.TypeOf(yaml.Node{})

// checkKnownFields walks n along type t and reports mapping keys that t's
// yaml tags do not name: the KnownFields strictness, with lines and
// suggestions, for types decoded with their own tags.
func (f *fileCtx) checkKnownFields(n *yaml.Node, t reflect.Type, path string, depth int) {
	n = deref(n)
	if n == nil || depth > 32 {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nodeType {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return // Decode reports the wrong type
		}
		known := map[string]reflect.Type{}
		yamlFields(t, known)
		fs := f.fields(n, path, slices.Sorted(maps.Keys(known)))
		for _, k := range fs.order {
			f.checkKnownFields(fs.vals[k], known[k], join(path, k), depth+1)
		}
	case reflect.Slice, reflect.Array:
		if n.Kind == yaml.SequenceNode {
			for i, c := range n.Content {
				f.checkKnownFields(c, t.Elem(), idx(path, i), depth+1)
			}
		}
	case reflect.Map:
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				f.checkKnownFields(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), depth+1)
			}
		}
	}
}

// yamlFields lists the keys yaml.v3 decodes into struct type t.
func yamlFields(t reflect.Type, out map[string]reflect.Type) {
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if slices.Contains(strings.Split(opts, ","), "inline") && sf.Type.Kind() == reflect.Struct {
			yamlFields(sf.Type, out)
			continue
		}
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		out[name] = sf.Type
	}
}

func (f *fileCtx) turns(fs *fields, sc *Scenario) {
	turns, question := fs.get("turns"), fs.get("question")
	switch {
	case turns != nil && question != nil:
		f.errorf(fs.keys["question"], "question", "want turns or question, not both")
	case turns == nil && question == nil:
		f.errorf(fs.node, "turns", "required (or question)")
	case question != nil:
		if q, ok := f.str(question, "question"); ok {
			if strings.TrimSpace(q) == "" {
				f.errorf(question, "question", "empty")
			}
			sc.turns = []string{q}
		}
	default:
		list, ok := f.strList(turns, "turns")
		if ok && len(list) == 0 {
			f.errorf(turns, "turns", "empty: want at least one question")
		}
		for i, q := range list {
			if ok && strings.TrimSpace(q) == "" {
				f.errorf(deref(turns.Content[i]), idx("turns", i), "empty")
			}
		}
		sc.turns = list
	}
}

func (f *fileCtx) cannedAnswers(n *yaml.Node, path string, sc *Scenario) []host.CannedAnswer {
	if n.Kind != yaml.SequenceNode {
		f.errorf(n, path, "want a list of answers, got %s", describe(n))
		return nil
	}
	var out []host.CannedAnswer
	for i, item := range n.Content {
		p := idx(path, i)
		fs := f.fields(item, p, elicitationFields)
		if fs == nil {
			continue
		}
		a := host.CannedAnswer{Action: host.ActionAccept}
		if v := fs.get("server"); v != nil {
			if a.Server, _ = f.str(v, join(p, "server")); a.Server != "" {
				sc.refs = append(sc.refs, toolRef{kind: refServer, file: f.name, line: v.Line, path: join(p, "server"), name: a.Server})
			}
		}
		if v := fs.get("message"); v != nil {
			a.Message, _ = f.regex(v, join(p, "message"))
		}
		if v := fs.get("key"); v != nil {
			a.Key, _ = f.str(v, join(p, "key"))
		}
		if v := fs.get("action"); v != nil {
			if s, ok := f.str(v, join(p, "action")); ok {
				switch s {
				case host.ActionAccept, host.ActionDecline, host.ActionCancel:
					a.Action = s
				default:
					f.errorf(v, join(p, "action"), "unknown action %q (want accept, decline or cancel)", s)
				}
			}
		}
		if v := fs.get("content"); v != nil {
			c, ok := f.value(v, join(p, "content"), 0)
			if m, isMap := c.(map[string]any); ok && isMap {
				a.Content = m
			} else if ok {
				f.errorf(v, join(p, "content"), "want a mapping of field: value, got %s", describe(v))
			}
			if a.Action != host.ActionAccept {
				f.errorf(fs.keys["content"], join(p, "content"), "only with action: accept")
			}
		}
		out = append(out, a)
	}
	return out
}

// value converts a YAML value to plain Go values as JSON would hold them:
// map[string]any, []any, string, int64, float64, bool and nil. Timestamps
// and other tags stay the strings they were written as.
func (f *fileCtx) value(n *yaml.Node, path string, depth int) (any, bool) {
	n = deref(n)
	if depth > 64 {
		f.errorf(n, path, "value nested too deep")
		return nil, false
	}
	switch n.Kind {
	case yaml.MappingNode:
		fs := f.fields(n, path, nil)
		if fs == nil {
			return nil, false
		}
		m := make(map[string]any, len(fs.order))
		ok := true
		for _, k := range fs.order {
			v, good := f.value(fs.vals[k], join(path, k), depth+1)
			ok = ok && good
			m[k] = v
		}
		return m, ok
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		ok := true
		for i, c := range n.Content {
			v, good := f.value(c, idx(path, i), depth+1)
			ok = ok && good
			l = append(l, v)
		}
		return l, ok
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil, true
		case "!!bool":
			var b bool
			n.Decode(&b)
			return b, true
		case "!!int":
			var i int64
			if err := n.Decode(&i); err == nil {
				return i, true
			}
			var x float64
			if err := n.Decode(&x); err == nil {
				return x, true
			}
		case "!!float":
			var x float64
			if err := n.Decode(&x); err == nil && !isNaNOrInf(x) {
				return x, true
			}
			f.errorf(n, path, "%s is not a JSON number", n.Value)
			return nil, false
		}
		return n.Value, true
	}
	f.errorf(n, path, "unsupported YAML value")
	return nil, false
}

func isNaNOrInf(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }

func (f *fileCtx) variants(n *yaml.Node, sc *Scenario) {
	if n.Kind != yaml.SequenceNode {
		f.errorf(n, "variants", "want a list of variants, got %s", describe(n))
		return
	}
	seen := map[string]int{}
	for i, item := range n.Content {
		p := idx("variants", i)
		fs := f.fields(item, p, variantFields)
		if fs == nil {
			continue
		}
		v := &variant{}
		if nn := fs.get("name"); nn == nil {
			f.errorf(fs.node, join(p, "name"), "required")
		} else if name, ok := f.ident(nn, join(p, "name"), scenarioNameRE, "letters, digits, _ . and -"); ok {
			if first, dup := seen[name]; dup {
				f.errorf(nn, join(p, "name"), "duplicate variant name %q (first at line %d)", name, first)
			}
			seen[name] = nn.Line
			v.name = name
		}
		if d := fs.get("description"); d != nil {
			v.description, _ = f.str(d, join(p, "description"))
		}
		if s := fs.get("system"); s != nil {
			if str, ok := f.str(s, join(p, "system")); ok {
				v.system = &str
			}
		}
		if h := fs.get("host"); h != nil {
			v.settings = f.hostSettings(h, join(p, "host"), &v.refs)
		}
		sc.variants = append(sc.variants, v)
	}
}

func (f *fileCtx) gates(n *yaml.Node, sc *Scenario) {
	if n.Kind != yaml.SequenceNode {
		f.errorf(n, "gates", "want a list of gates, got %s", describe(n))
		return
	}
	for i, item := range n.Content {
		p := idx("gates", i)
		item = deref(item)
		s, ok := f.str(item, p)
		if !ok {
			continue
		}
		g, err := report.ParseGate(s)
		if err != nil {
			f.errorf(item, p, "%v", err)
			continue
		}
		g.Pos = fmt.Sprintf("%s:%d", f.name, item.Line)
		if sc.Name != "" {
			g.Scenario = regexp.MustCompile(`^(?:` + regexp.QuoteMeta(sc.Name) + `)$`)
		}
		sc.Gates = append(sc.Gates, g)
	}
}

// checkRefs checks, before anything runs, what can be checked without the
// servers' tool lists: that names refer to servers of the scenario.
func (f *fileCtx) checkRefs(sc *Scenario) {
	var servers []string
	for _, s := range sc.servers {
		servers = append(servers, s.spec.Name)
	}
	refs := slices.Clone(sc.refs)
	for _, v := range sc.variants {
		refs = append(refs, v.refs...)
	}
	for _, r := range refs {
		switch r.kind {
		case refServer:
			if !slices.Contains(servers, r.name) {
				f.errorAt(r.line, r.path, fmt.Sprintf("%q is not a server of this scenario%s", r.name, serversHint(r.name, servers)))
			}
		case refTool, refApproval:
			name := r.name
			if r.kind == refApproval && strings.HasSuffix(name, "*") {
				name = strings.TrimSuffix(name, "*")
				if !strings.Contains(name, "__") {
					continue // a prefix of server names: "*", "tick*"
				}
			}
			server, _, ok := strings.Cut(name, "__")
			switch {
			case !ok:
				f.errorAt(r.line, r.path, fmt.Sprintf("%q is not a namespaced tool name: want server__tool", r.name))
			case !slices.Contains(servers, server):
				f.errorAt(r.line, r.path, fmt.Sprintf("%q: %q is not a server of this scenario%s", r.name, server, serversHint(server, servers)))
			}
		}
	}
}

func serversHint(name string, servers []string) string {
	if s := suggest(name, servers); s != "" {
		return s
	}
	if len(servers) == 0 {
		return " (it has none)"
	}
	return " (servers: " + strings.Join(servers, ", ") + ")"
}
