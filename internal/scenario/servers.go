package scenario

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/hosteval/hosteval/internal/catalog/toolsfile"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// LoadServers reads a servers file, as strictly as Load reads the files
// that use it, and returns the servers named, in the order named (all of
// them, in file order, when no name is given). A server with an oauth:
// block is an error: [LoadServersAuth] builds its handler.
func LoadServers(path string, names ...string) ([]host.ServerSpec, error) {
	return LoadServersAuth(path, names, nil)
}

// LoadServersAuth is LoadServers with newOAuth building the handler of each
// server with an oauth: block, carried in its spec. The CLI's tools, chat
// and catalog commands start servers from it.
func LoadServersAuth(path string, names []string, newOAuth NewOAuth) ([]host.ServerSpec, error) {
	l := newLoader()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("servers file %s: %w", path, err)
	}
	sf := l.serversFile(abs, l.display(abs))
	if err := l.problems.Err(); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		names = sf.names
	}
	var specs []host.ServerSpec
	handlers := &oauthHandlers{build: newOAuth}
	for _, name := range names {
		def, ok := sf.defs[name]
		if !ok || def == nil {
			return nil, fmt.Errorf("%s: no server named %q (it has: %v)", sf.name, name, sf.names)
		}
		spec := def.spec
		if spec.OAuth, err = handlers.handler(def); err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

type serversFile struct {
	name  string
	defs  map[string]*serverDef // nil for a server whose definition has problems
	names []string
	ok    bool // read and listed: names not in it are problems
	// lint is its lint: section, for hosteval lint; nil without one.
	lint *lintDoc
	// lintNode is where the section is, for its problems' lines.
	lintNode *yamlx.Node
}

// LintSettings are what a servers file says to hosteval lint: its lint:
// section, and where each server is defined.
type LintSettings struct {
	// File is the file as named to the user; Lines are where each server
	// is defined in it, by name: SARIF's physical location of findings.
	File  string
	Lines map[string]int
	// Rules are rule ID -> level (error, warning, note or off).
	Rules map[string]string
	// Suppress are the suppressions, in file order.
	Suppress []LintSuppression
	// FailOn is error, warning, note, none, or "" when not set;
	// LongTokens is 0 when not set.
	FailOn     string
	LongTokens int
}

// LintSuppression is one suppression of a lint: section.
type LintSuppression struct {
	Rule, Server, Tool, Reason string
	// Source is file:line.
	Source string
}

// LoadLint reads a servers file's lint: section, with every problem of
// the file at once (each with its line); rules are the rule IDs there are
// (internal/lint's, which the scenario language does not import): a rule
// ID not among them is a problem at its line.
func LoadLint(path string, rules []string) (*LintSettings, error) {
	l := newLoader()
	// The lint: section is all it needs: ${CASE_DIR} may stay a mark.
	l.caseDir = true
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("servers file %s: %w", path, err)
	}
	sf := l.serversFile(abs, l.display(abs))
	ls := &LintSettings{File: sf.name, Lines: map[string]int{}}
	if d, n := sf.lint, sf.lintNode; d != nil && n != nil {
		if d.FailOn != nil {
			ls.FailOn = string(*d.FailOn)
		}
		if d.LongTokens != nil {
			ls.LongTokens = *d.LongTokens
		}
		if len(d.Rules) > 0 {
			ls.Rules = map[string]string{}
		}
		for _, e := range d.Rules {
			if !slices.Contains(rules, e.Key) {
				n.Report(Problem{Line: e.Line, Path: "lint.rules", Msg: fmt.Sprintf("no rule %q%s (the rules: docs/lint.md)", e.Key, yamlx.Suggest(e.Key, rules))})
				continue
			}
			ls.Rules[e.Key] = string(e.Value)
		}
		for i, s := range d.Suppress {
			at := n.At(yamlx.Index("suppress", i))
			if s.Rule != "" && !slices.Contains(rules, s.Rule) {
				errorAt(at, "rule", "no rule %q%s (the rules: docs/lint.md)", s.Rule, yamlx.Suggest(s.Rule, rules))
				continue
			}
			ls.Suppress = append(ls.Suppress, LintSuppression{Rule: s.Rule, Server: s.Server, Tool: s.Tool, Reason: s.Reason,
				Source: fmt.Sprintf("%s:%d", sf.name, at.Line())})
		}
	}
	if err := l.problems.Err(); err != nil {
		return nil, err
	}
	for name, def := range sf.defs {
		if def != nil {
			ls.Lines[name] = def.line
		}
	}
	return ls, nil
}

// serversFile reads a servers file once, however many scenarios use it.
func (l *loader) serversFile(abs, display string) *serversFile {
	if sf, ok := l.serversFiles[abs]; ok {
		return sf
	}
	sf := &serversFile{name: display, defs: map[string]*serverDef{}}
	l.serversFiles[abs] = sf
	l.suite.ServersFiles = append(l.suite.ServersFiles, display)
	f := &fileCtx{l: l, name: display, dir: filepath.Dir(abs)}
	data, err := os.ReadFile(abs)
	if err != nil {
		l.problems.Add(Problem{File: display, Msg: fileError(err)})
		return sf
	}
	l.source(display, data)
	docs := f.parse(data)
	if len(docs) == 0 {
		if l.problems.Len() == 0 {
			l.problems.Add(Problem{File: display, Msg: `empty file: want a "servers:" mapping`})
		}
		return sf
	}
	root := docs[0].Root()
	if root == nil {
		return sf // over its alias budget: reported
	}
	var d serversFileDoc
	root.Decode(&d)
	if d.Servers == nil {
		return sf // reported
	}
	sf.ok = true
	sf.lint, sf.lintNode = d.Lint, root.At("lint")
	for _, e := range d.Servers {
		sf.names = append(sf.names, e.Key)
		sf.defs[e.Key] = nil
		if !serverNameRE.MatchString(e.Key) {
			root.Report(Problem{Line: e.Line, Path: "servers", Msg: fmt.Sprintf("%q is not a valid server name: want %s", e.Key, serverNameWant)})
			continue
		}
		n := root.At("servers." + e.Key)
		if n.Kind() != yamlx.Mapping {
			continue // reported
		}
		def := f.serverDef(e.Value, n, e.Key)
		if def != nil && e.OK {
			def.line = e.Line
			sf.defs[e.Key] = def
		}
	}
	return sf
}

// serverDef builds one server definition read at n, expanding ${VAR} and
// resolving paths against the file's folder. It returns nil when the
// definition has problems.
func (f *fileCtx) serverDef(d serverDoc, n *yamlx.Node, name string) *serverDef {
	before := f.l.problems.Len()
	def := &serverDef{file: f.name, line: n.Line(), spec: host.ServerSpec{Name: name, Connect: d.Connect}}
	spec := &def.spec
	expand := func(key string, s *string) string {
		if s == nil {
			return ""
		}
		v, _ := f.expand(n, key, *s)
		return v
	}
	command, rawURL := expand("command", d.Command), expand("url", d.URL)
	switch {
	case d.Catalog != nil && (d.Command != nil || d.URL != nil):
		n.Errorf("want command (a stdio server), url (an HTTP server) or catalog (a file of its tools), only one")
	case d.Catalog != nil:
		spec.Catalog = f.catalog(n, "catalog", expand("catalog", d.Catalog))
		for _, key := range []string{"args", "env", "inherit_env", "dir", "headers", "oauth", "record_server", "shareable"} {
			if n.Get(key) != nil {
				errorAtKey(n, key, "not for a catalog: nothing is started")
			}
		}
	case d.Command != nil && d.URL != nil:
		n.Errorf("want command (a stdio server) or url (an HTTP server), not both")
	case d.Command == nil && d.URL == nil:
		n.Errorf("want command (a stdio server), url (an HTTP server) or catalog (a file of its tools)")
	case d.Command != nil:
		switch {
		case strings.TrimSpace(command) == "":
			errorAt(n, "command", "empty")
		case !filepath.IsAbs(command) && strings.Contains(command, "/"):
			command = filepath.Join(f.dir, command)
		}
		spec.Command = command
		for _, key := range []string{"headers", "oauth"} {
			if n.Get(key) != nil {
				errorAtKey(n, key, "only for a server with a url")
			}
		}
	default:
		u, err := url.Parse(rawURL)
		switch {
		case strings.Contains(rawURL, caseDirMark):
			// Not a URL until the case runs, and not allowed: see checkCaseDir.
		case err != nil:
			errorAt(n, "url", "%v", err)
		case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			errorAt(n, "url", "%q is not an http or https URL", rawURL)
		}
		spec.URL = rawURL
		for _, key := range []string{"args", "env", "inherit_env", "dir"} {
			if n.Get(key) != nil {
				errorAtKey(n, key, "only for a server with a command")
			}
		}
	}
	for i, a := range d.Args {
		spec.Args = append(spec.Args, expand(yamlx.Index("args", i), &a))
	}
	if d.Args != nil && spec.Args == nil {
		spec.Args = []string{}
	}
	for _, e := range d.Env {
		if !envNameRE().MatchString(e.Key) {
			n.Report(Problem{Line: e.Line, Path: yamlx.Join(n.Path(), "env."+e.Key), Msg: fmt.Sprintf("%q is not a variable name", e.Key)})
			continue
		}
		spec.Env = append(spec.Env, e.Key+"="+expand("env."+e.Key, &e.Value))
	}
	if d.Dir != nil {
		dir := expand("dir", d.Dir)
		switch {
		case strings.HasPrefix(dir, caseDirMark):
			// An absolute folder, known only when the case runs.
		case strings.Contains(dir, caseDirMark):
			errorAt(n, "dir", "${CASE_DIR} must start the folder, e.g. ${CASE_DIR}/sub")
		case !filepath.IsAbs(dir):
			dir = filepath.Join(f.dir, dir)
		}
		spec.Dir = dir
	}
	if d.Headers != nil {
		spec.Headers = map[string]string{}
		for _, e := range d.Headers {
			spec.Headers[e.Key] = expand("headers."+e.Key, &e.Value)
		}
	}
	if d.OAuth != nil && d.URL != nil {
		def.oauth = f.oauthConfig(n, d.OAuth)
		for k := range spec.Headers {
			if http.CanonicalHeaderKey(k) == "Authorization" {
				errorAtKey(n, "headers."+k, "the oauth: block supplies the Authorization header; remove one of the two")
			}
		}
	}
	spec.AutoRun = d.AutoRun
	for i, t := range d.AutoRun {
		r := f.ref(refAutoRun, n, yamlx.Index("auto_run", i), t)
		r.server = name
		def.refs = append(def.refs, r)
	}
	spec.InheritEnv = d.InheritEnv != nil && *d.InheritEnv
	spec.Shareable = d.Shareable != nil && *d.Shareable
	def.record = d.RecordServer != nil && *d.RecordServer
	if def.record && spec.Shareable {
		errorAtKey(n, "record_server", "a shareable server cannot be recorded: it outlives the case whose cassette would hold its answers")
	}
	def.caseDir = f.checkCaseDir(n, spec)
	if f.l.problems.Len() > before {
		return nil
	}
	return def
}

// scenarioServers resolves the scenario's servers: names from its servers
// file, or inline definitions.
func (l *loader) scenarioServers(f *fileCtx, root *yamlx.Node, d *scenarioDoc, sc *Scenario) {
	var sf *serversFile
	if root.Get("servers_file") != nil {
		rel := d.ServersFile
		abs, display := rel, rel
		if !filepath.IsAbs(rel) {
			abs, display = filepath.Join(f.dir, rel), filepath.Join(filepath.Dir(f.name), rel)
		}
		if info, err := os.Stat(abs); err != nil || !info.Mode().IsRegular() {
			msg := "is not a file, want a servers file"
			switch {
			case err != nil:
				msg = fileError(err)
			case info.IsDir():
				msg = "is a folder, want a servers file"
			}
			errorAt(root, "servers_file", "%s: %s", display, msg)
		} else {
			sf = l.serversFile(abs, display)
		}
	}
	searched := root.Get("servers_file") != nil
	seen := map[string]int{}
	for i, entry := range d.Servers {
		p := yamlx.Index("servers", i)
		item := root.At(p)
		var def *serverDef
		switch {
		case entry.name == "":
			continue // reported
		case entry.inline != nil:
			def = f.serverDef(entry.inline.serverDoc, item, entry.name)
			if !entry.ok {
				def = nil
			}
		default:
			if !searched {
				searched = true
				if abs := l.nearestServersFile(f.dir); abs != "" {
					sf = l.serversFile(abs, l.display(abs))
				} else {
					item.Errorf("no servers file for %q: set servers_file, or put a servers.yaml in %s or a folder above it", entry.name, filepath.Dir(f.name))
				}
			}
			if sf == nil || !sf.ok {
				continue // already reported
			}
			found, ok := sf.defs[entry.name]
			if !ok {
				item.Errorf("no server %q in %s%s", entry.name, sf.name, yamlx.Suggest(entry.name, sf.names))
				continue
			}
			def = found
		}
		if first, dup := seen[entry.name]; dup {
			item.Errorf("server %q is listed twice (first at line %d)", entry.name, first)
			continue
		}
		seen[entry.name] = item.Line()
		if def == nil {
			// Keep the name for later checks; the definition's problems are reported.
			def = &serverDef{spec: host.ServerSpec{Name: entry.name}}
		}
		sc.servers = append(sc.servers, def)
	}
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

var envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// expand expands the ${VAR} of the value read at path rel below n,
// reporting its problems there.
func (f *fileCtx) expand(n *yamlx.Node, rel, s string) (string, bool) {
	e := expander{lookupEnv: f.l.lookupEnv, here: f.dir, caseDir: f.l.caseDir}
	out, problems := e.expand(s)
	for _, msg := range problems {
		errorAt(n, rel, "%s", msg)
	}
	return out, len(problems) == 0
}

// expander replaces ${VAR} with the variable's value and $$ with $.
// ${HERE} is the file's folder. An unset variable is a problem, not an
// empty string: a server started with half its configuration fails in
// confusing ways.
type expander struct {
	lookupEnv func(string) (string, bool)
	here      string
	// caseDir keeps ${CASE_DIR} as a mark for the runner.
	caseDir bool
}

func (e expander) expand(s string) (string, []string) {
	var b strings.Builder
	var problems []string
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
			return "", append(problems, fmt.Sprintf("unterminated ${ in %q (write $$ for a literal $)", s))
		}
		name := s[i+2 : i+2+end]
		i += end + 3
		switch v, set := e.lookupEnv(name); {
		case !envNameRE().MatchString(name):
			problems = append(problems, fmt.Sprintf("${%s}: not a variable name", name))
		case name == "HERE":
			b.WriteString(e.here)
		case name == caseDirVar && e.caseDir:
			b.WriteString(caseDirMark)
		case !set:
			hint := ""
			if name == caseDirVar {
				hint = " (hosteval run sets ${CASE_DIR} to a fresh folder for each case; outside a run, set it to a folder)"
			}
			problems = append(problems, fmt.Sprintf("environment variable %s is not set%s", name, hint))
		default:
			b.WriteString(v)
		}
	}
	return b.String(), problems
}

// catalog reads a tools file (catalog -save), relative to the file's
// folder; one file read twice is one catalog, so that the run's cases
// share its tables.
func (f *fileCtx) catalog(n *yamlx.Node, key, rel string) *host.Catalog {
	if strings.TrimSpace(rel) == "" {
		errorAt(n, key, "empty")
		return nil
	}
	abs, display := rel, rel
	if !filepath.IsAbs(rel) {
		abs, display = filepath.Join(f.dir, rel), filepath.Join(filepath.Dir(f.name), rel)
	}
	if c, ok := f.l.catalogs[abs]; ok {
		return c
	}
	f.l.catalogs[abs] = nil
	data, err := f.l.readFile(abs)
	if err != nil {
		errorAt(n, key, "%s: %s", display, fileError(err))
		return nil
	}
	f.l.source(display, data)
	t, err := toolsfile.Read(data)
	if err != nil {
		errorAt(n, key, "%s: %v", display, err)
		return nil
	}
	c, err := host.NewCatalog(display, t.Tools)
	if err != nil {
		errorAt(n, key, "%s: %v", display, err)
		return nil
	}
	c.Server, c.Protocol, c.ServerName, c.ServerVersion = t.Server, t.Protocol, t.ServerName, t.ServerVersion
	c.Instructions = t.Instructions
	f.l.catalogs[abs] = c
	return c
}
