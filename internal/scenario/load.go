package scenario

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/gate"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// Load reads scenario files and folders. A folder contributes every *.yaml
// and *.yml file in it, recursively, except files named servers.yaml and
// gates.yaml, files whose document is a list (a scenario's dataset of
// rows), and anything under a testdata, cassettes or hidden folder (a
// cassettes folder holds recorded model requests, which are YAML too). Every problem
// in every file is reported at once, in a *LoadError, before anything runs.
//
// ${VAR} in server definitions is expanded from the environment when
// loading, except ${CASE_DIR}, which the runner expands for each case
// ([Case.HostOptionsIn]); an openai model's empty base_url, api_key and
// model are taken from the environment too ([model.OpenAIConfig.WithEnv]).
func Load(paths ...string) (*Suite, error) {
	return LoadContext(context.Background(), paths...)
}

// LoadContext is [Load] that stops when ctx ends (a Ctrl-C while a large
// suite loads): ctx is checked before each file and each document, and the
// error wraps its cause.
func LoadContext(ctx context.Context, paths ...string) (*Suite, error) {
	l := newLoader()
	l.caseDir = true
	l.ctx = ctx
	return l.load(paths)
}

// newLoader returns a loader reading the process's environment, showing
// files it finds relative to the working directory.
func newLoader() *loader {
	l := &loader{
		ctx:          context.Background(),
		readFile:     os.ReadFile,
		lookupEnv:    os.LookupEnv,
		serversFiles: map[string]*serversFile{},
		nearest:      map[string]string{},
		names:        map[string]*Scenario{},
		walked:       map[string]bool{},
		catalogs:     map[string]*host.Catalog{},
		suite:        &Suite{},
	}
	l.cwd, _ = os.Getwd()
	return l
}

// loader gathers the problems of one Load.
type loader struct {
	// ctx ends the loading between files and documents.
	ctx          context.Context
	readFile     func(string) ([]byte, error)
	lookupEnv    func(string) (string, bool)
	cwd          string
	problems     yamlx.Problems
	serversFiles map[string]*serversFile // by absolute path
	nearest      map[string]string       // folder -> nearest servers.yaml ("" for none)
	names        map[string]*Scenario
	suite        *Suite
	// walked are the files found in a folder, not named: a YAML list
	// among them is a dataset, not a scenario file.
	walked map[string]bool
	// catalogs are the tools files read, by absolute path (nil for one
	// with problems).
	catalogs map[string]*host.Catalog
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
		if err := l.stopped(); err != nil {
			return nil, err
		}
		l.loadFile(file)
	}
	if err := l.stopped(); err != nil {
		return nil, err
	}
	if l.problems.Len() == 0 && len(l.suite.Scenarios) == 0 {
		l.problems.Add(Problem{File: strings.Join(paths, " "), Msg: "no scenarios found"})
	}
	if err := l.problems.Err(); err != nil {
		return nil, err
	}
	return l.suite, nil
}

// stopped returns an error when the loading's context has ended.
func (l *loader) stopped() error {
	if l.ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("loading the scenarios stopped: %w", context.Cause(l.ctx))
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
			l.problems.Add(Problem{File: root, Msg: fileError(err)})
			continue
		}
		if !info.IsDir() {
			add(root)
			continue
		}
		found := false
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if l.ctx.Err() != nil {
				return fs.SkipAll // load says why
			}
			if err != nil {
				l.problems.Add(Problem{File: p, Msg: fileError(err)})
				return nil
			}
			name := d.Name()
			if d.IsDir() {
				if p != root && (name == "testdata" || name == "cassettes" || strings.HasPrefix(name, ".")) {
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
			l.walked[p] = true
			return nil
		})
		if err != nil {
			l.problems.Add(Problem{File: root, Msg: fileError(err)})
		} else if !found {
			l.problems.Add(Problem{File: root, Msg: "no scenario files (*.yaml, *.yml) in this folder"})
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

// parse reads a file's documents; a syntax error ends the file.
func (f *fileCtx) parse(data []byte) []*yamlx.Doc {
	docs, err := yamlx.Parse(f.name, data, &f.l.problems)
	if err != nil {
		p := err.(Problem)
		if strings.HasPrefix(p.Msg, "mapping values are not allowed") {
			// The usual cause: an unquoted call with inline arguments.
			p.Msg += ` (quote a value that contains ": ", e.g. call: 'cmdb__get_asset {hostname: a}')`
		}
		f.l.problems.Add(p)
	}
	return docs
}

// errorAt reports a problem at the value read at path rel below n.
func errorAt(n *yamlx.Node, rel, format string, args ...any) {
	n.Report(Problem{Line: n.At(rel).Line(), Path: yamlx.Join(n.Path(), rel), Msg: fmt.Sprintf(format, args...)})
}

// errorAtKey reports a problem at the key of the field at path rel below n.
func errorAtKey(n *yamlx.Node, rel, format string, args ...any) {
	n.Report(Problem{Line: n.At(rel).KeyLine(), Path: yamlx.Join(n.Path(), rel), Msg: fmt.Sprintf(format, args...)})
}

// source adds a file read to the suite's sources.
func (l *loader) source(name string, data []byte) {
	sum := sha256.Sum256(data)
	l.suite.Sources = append(l.suite.Sources, Source{File: name, SHA256: hex.EncodeToString(sum[:])})
}

// loadFile reads one scenario file: one scenario per YAML document.
func (l *loader) loadFile(name string) {
	f := l.file(name)
	data, err := l.readFile(name)
	if err != nil {
		l.problems.Add(Problem{File: name, Msg: fileError(err)})
		return
	}
	docs := f.parse(data)
	if l.walked[name] && len(docs) > 0 && docs[0].Root() != nil && docs[0].Root().Kind() == yamlx.Sequence {
		// A list, not a scenario: a scenario's dataset of rows, which the
		// scenario that names it reads.
		return
	}
	l.source(name, data)
	for _, doc := range docs {
		if l.ctx.Err() != nil {
			return // load says so
		}
		if root := doc.Root(); root != nil {
			l.scenario(f, root)
		}
	}
}

func (l *loader) scenario(f *fileCtx, root *yamlx.Node) {
	var d scenarioDoc
	if !root.Decode(&d) && root.Kind() != yamlx.Mapping {
		return
	}
	sc := &Scenario{File: f.name, Line: root.Line(), Name: string(d.Name), Description: d.Description, repeat: DefaultRepeat, timeout: DefaultTimeout}
	if sc.Name != "" {
		if prev, dup := l.names[sc.Name]; dup {
			errorAt(root, "name", "duplicate scenario name %q (first at %s:%d)", sc.Name, prev.File, prev.Line)
		} else {
			l.names[sc.Name] = sc
		}
	}
	l.scenarioServers(f, root, &d, sc)
	if d.Host != nil {
		sc.settings = f.hostSettings(d.Host, root.At("host"), &sc.refs)
	}
	if d.System != nil {
		sc.system = *d.System
	}
	f.models(root, &d, sc)
	turns(root, &d, sc)
	if d.Files != nil {
		sc.files = f.files(d.Files, root.At("files"), sc)
	}
	for i, a := range d.Elicitation {
		sc.elicitation = append(sc.elicitation, f.cannedAnswer(a, root.At(yamlx.Index("elicitation", i)), sc))
	}
	for i, a := range d.Approvals {
		sc.refs = append(sc.refs, f.ref(refApproval, root, yamlx.Index("approvals", i), a))
		sc.approvalRules = append(sc.approvalRules, f.where(root.At(yamlx.Index("approvals", i))))
	}
	sc.approvals = d.Approvals
	f.variants(root, d.Variants, sc)
	if d.Repeat != nil {
		sc.repeat = *d.Repeat
	}
	if d.Timeout != nil {
		sc.timeout = time.Duration(*d.Timeout)
	}
	for _, e := range d.Expect {
		for _, r := range e.refs {
			r.file = f.name
			sc.refs = append(sc.refs, r)
		}
		if e.check == nil {
			continue
		}
		if s, ok := e.check.(*stateExpect); ok {
			s.index = len(sc.states)
			sc.states = append(sc.states, *e.state)
		}
		if j, ok := e.check.(*judgeExpect); ok {
			j.index = len(sc.judges)
			sc.judges = append(sc.judges, e.judge)
		}
		if c, ok := e.check.(*toolsChangedExpect); ok {
			for _, name := range c.added {
				sc.added = append(sc.added, host.Namespaced(c.server, name))
			}
		}
		sc.expects = append(sc.expects, &expectation{line: e.line, check: e.check})
	}
	if d.Mode != nil {
		sc.mode = string(*d.Mode)
		if d.Dataset == nil {
			errorAtKey(root, "mode", "mode goes with a dataset")
		}
	}
	if d.Dataset != nil {
		f.dataset(root, d.Dataset, sc)
	}
	if d.Distractors != nil {
		l.readDistractors(f, root, d.Distractors, sc, d.Dataset != nil)
	}
	f.gates(root, d.Gates, sc)
	f.checkJudges(sc)
	if d.Cassettes != nil {
		sc.cassettes = f.cassettes(d.Cassettes)
	}
	f.checkRefs(sc)
	l.suite.Scenarios = append(l.suite.Scenarios, sc)
}

// ref is a name written at path rel below n.
func (f *fileCtx) ref(kind refKind, n *yamlx.Node, rel, name string) toolRef {
	return toolRef{kind: kind, file: f.name, line: n.At(rel).Line(), path: yamlx.Join(n.Path(), rel), name: name}
}

func (f *fileCtx) hostSettings(h *hostDoc, n *yamlx.Node, refs *[]toolRef) hostSettings {
	s := hostSettings{
		protocol:    (*host.Mode)(h.Protocol),
		budgets:     h.Budgets,
		written:     written(n),
		allow:       h.Allow,
		deny:        h.Deny,
		elicitation: h.Elicitation,
	}
	for _, l := range []struct {
		key   string
		names []string
	}{{"allow", h.Allow}, {"deny", h.Deny}} {
		for i, name := range l.names {
			*refs = append(*refs, f.ref(refTool, n, yamlx.Index(l.key, i), name))
		}
	}
	if h.Descriptions != nil {
		s.descriptions = map[string]string{}
		for _, e := range h.Descriptions {
			s.descriptions[e.Key] = e.Value
			*refs = append(*refs, toolRef{kind: refTool, file: f.name, line: e.Line, path: yamlx.Join(n.Path(), "descriptions"), name: e.Key})
		}
	}
	if h.AutoRun != nil {
		s.autoRun = map[string][]string{}
		for _, e := range h.AutoRun {
			s.autoRun[e.Key] = e.Value
			*refs = append(*refs, toolRef{kind: refServer, file: f.name, line: e.Line, path: yamlx.Join(n.Path(), "auto_run"), name: e.Key})
			for i, t := range e.Value {
				r := f.ref(refAutoRun, n, yamlx.Index("auto_run."+e.Key, i), t)
				r.server = e.Key
				*refs = append(*refs, r)
			}
		}
	}
	return s
}

// written are the keys of mapping n that have a value (an empty one counts
// as not written, as yamlx reads it).
func written(n *yamlx.Node) []string {
	var keys []string
	for _, f := range n.Fields() {
		if f.Value.Kind() != yamlx.Null {
			keys = append(keys, f.Key)
		}
	}
	return keys
}

func turns(root *yamlx.Node, d *scenarioDoc, sc *Scenario) {
	turns, question := root.Get("turns"), root.Get("question")
	switch {
	case turns != nil && question != nil:
		errorAtKey(root, "question", "want turns or question, not both")
	case d.Dataset != nil && turns != nil:
		errorAtKey(root, "turns", "the dataset's rows give the questions: remove turns, or the dataset")
	case d.Dataset != nil && question != nil:
		errorAtKey(root, "question", "the dataset's rows give the questions: remove question, or the dataset")
	case d.Dataset != nil:
	case turns == nil && question == nil:
		root.Report(Problem{Line: root.Line(), Path: "turns", Msg: "required (or question, or dataset)"})
	case question != nil && d.Question != nil:
		if strings.TrimSpace(*d.Question) == "" {
			errorAt(root, "question", "empty")
		}
		sc.turns = []string{*d.Question}
	case d.Turns != nil:
		if len(d.Turns) == 0 {
			errorAt(root, "turns", "empty: want at least one question")
		}
		for i, q := range d.Turns {
			if strings.TrimSpace(q) == "" {
				errorAt(root, yamlx.Index("turns", i), "empty")
			}
		}
		sc.turns = d.Turns
	}
}

// where is "file:line" of n, as a transcript names the canned answer
// or approval that answered the person's side.
func (f *fileCtx) where(n *yamlx.Node) string { return f.name + ":" + strconv.Itoa(n.Line()) }

func (f *fileCtx) cannedAnswer(d answerDoc, n *yamlx.Node, sc *Scenario) host.CannedAnswer {
	a := host.CannedAnswer{Server: d.Server, Key: d.Key, Action: host.ActionAccept, Content: d.Content, Rule: f.where(n)}
	if d.Server != "" {
		sc.refs = append(sc.refs, f.ref(refServer, n, "server", d.Server))
	}
	if d.Message != nil {
		a.Message = d.Message.Regexp
	}
	if d.Action != nil {
		a.Action = string(*d.Action)
	}
	if n.Get("content") != nil && a.Action != host.ActionAccept {
		errorAtKey(n, "content", "only with action: accept")
	}
	return a
}

func (f *fileCtx) variants(root *yamlx.Node, docs []variantDoc, sc *Scenario) {
	seen := map[string]int{}
	for i, d := range docs {
		n := root.At(yamlx.Index("variants", i))
		v := &variant{name: string(d.Name), description: d.Description, system: d.System}
		if v.name != "" {
			if first, dup := seen[v.name]; dup {
				errorAt(n, "name", "duplicate variant name %q (first at line %d)", v.name, first)
			}
			seen[v.name] = n.At("name").Line()
		}
		if d.Host != nil {
			v.settings = f.hostSettings(d.Host, n.At("host"), &v.refs)
		}
		sc.variants = append(sc.variants, v)
	}
}

func (f *fileCtx) gates(root *yamlx.Node, texts []string, sc *Scenario) {
	for i, s := range texts {
		p := yamlx.Index("gates", i)
		g, err := gate.Parse(s)
		if err != nil {
			errorAt(root, p, "%v", err)
			continue
		}
		g.Pos = fmt.Sprintf("%s:%d", f.name, root.At(p).Line())
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
		problem := func(format string, args ...any) {
			f.l.problems.Add(Problem{File: r.file, Line: r.line, Path: r.path, Msg: fmt.Sprintf(format, args...)})
		}
		switch r.kind {
		case refServer:
			if !slices.Contains(servers, r.name) {
				problem("%q is not a server of this scenario%s", r.name, serversHint(r.name, servers))
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
				problem("%q is not a namespaced tool name: want server__tool", r.name)
			case !slices.Contains(servers, server):
				problem("%q: %q is not a server of this scenario%s", r.name, server, serversHint(server, servers))
			}
		}
	}
}

func serversHint(name string, servers []string) string {
	if s := yamlx.Suggest(name, servers); s != "" {
		return s
	}
	if len(servers) == 0 {
		return " (it has none)"
	}
	return " (servers: " + strings.Join(servers, ", ") + ")"
}
