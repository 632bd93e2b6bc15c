// Package scaffold writes the first files of a suite for a server that
// already exists (hosteval init): a servers.yaml with the server's entry, a
// scenario file with one commented case per tool the server lists, its
// arguments filled in from the tool's input schema, and a gates.yaml. It
// owns what those files say and the rule that it never writes over a file;
// connecting to the server and listing its tools is the caller's (through
// internal/host).
package scaffold

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hosteval/hosteval/internal/host"
)

// SchemaBase is where the JSON Schemas of the files are published (the
// repository's docs/ folder on its main branch), for the editor line at the
// top of every file written. `hosteval schema KIND` prints the same schema
// for a copy beside the files.
const SchemaBase = "https://raw.githubusercontent.com/hosteval/hosteval/main/docs/"

// Server is what the files describe: the server as the servers file will
// start it, what it said of itself, and its tools.
type Server struct {
	// Spec is the server's entry: Name, and Command, Args and Env, or URL
	// and Headers, written as given (a ${VAR} stays a reference).
	Spec host.ServerSpec
	// Info names the server as it named itself, and the protocol revision
	// it was reached with.
	ServerName, ServerVersion, Protocol string
	Tools                               []Tool
}

// Shareable reports whether every tool the server lists is read-only
// (and it lists one): no case can change what another sees, so one
// process may serve every case of a run.
// A server given a ${CASE_DIR} is each case's own, whatever its tools.
func (s Server) Shareable() bool {
	for _, v := range append(slices.Clone(s.Spec.Args), s.Spec.Env...) {
		if strings.Contains(v, "${CASE_DIR}") {
			return false
		}
	}
	for _, t := range s.Tools {
		if !t.ReadOnly {
			return false
		}
	}
	return len(s.Tools) > 0
}

// Trial is what happened when init called a tool once, with the
// arguments its scenario gives, before writing the files: the scenario
// expects what happened, and answers the questions the server asked.
type Trial struct {
	// Outcome is the call's outcome (record.Outcome*), Error its text
	// when it failed.
	Outcome, Error string
	// Questions are the server's questions to the person during the call,
	// answered with Answer's content.
	Questions []Question
}

// Question is a server's question to the person during a trial call.
type Question struct {
	Server, Key, Message string
	// Schema is the form's requested schema.
	Schema map[string]any
}

// Tool is one tool the server listed.
type Tool struct {
	// Name is the server's own name for it.
	Name        string
	Description string
	// InputSchema is the tool's input schema as listed (a JSON object).
	InputSchema any
	// ReadOnly says the tool runs without the person's approval (its
	// annotations say it is read-only); Destructive that its annotations
	// warn it may destroy data.
	ReadOnly, Destructive bool
	// NotOffered, when set, says why the host does not offer the tool to
	// a model (it cannot be called through this host).
	NotOffered string
	// Trial is init's call of the tool; nil when it was not called.
	Trial *Trial
}

// Files are the names of the files written, in a folder.
const (
	ServersFile = "servers.yaml"
	GatesFile   = "gates.yaml"
)

// ErrExists is returned, wrapped with the file's name, when a file init
// would write is already there: init never writes over a file.
var ErrExists = errors.New("already exists (init never writes over a file)")

// ScenarioFile is the name of the scenario file for a server.
func ScenarioFile(server string) string { return server + ".yaml" }

// Check reports the first of the files that is already in dir.
func Check(dir string, names ...string) error {
	for _, name := range names {
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s %w", p, ErrExists)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Write writes servers.yaml, <server>.yaml and gates.yaml into dir (made
// if needed) and returns their paths. A file already there is an error
// wrapping ErrExists, checked before anything is written; a file that
// appears meanwhile is not written over either.
func Write(dir string, s Server) ([]string, error) {
	// The folder as the user named it, in the commands the comments show.
	shown := strings.TrimSuffix(filepath.ToSlash(dir), "/") + "/"
	files := []struct {
		name string
		data []byte
	}{
		{ServersFile, serversFile(s)},
		{ScenarioFile(s.Spec.Name), scenarioFile(s, shown)},
		{GatesFile, gatesFile(s, shown)},
	}
	var names []string
	for _, f := range files {
		names = append(names, f.name)
	}
	if err := Check(dir, names...); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return written, fmt.Errorf("%s %w", p, ErrExists)
		}
		if err != nil {
			return written, err
		}
		_, werr := out.Write(f.data)
		if cerr := out.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return written, fmt.Errorf("write %s: %w", p, werr)
		}
		written = append(written, p)
	}
	return written, nil
}

var (
	notInServerName   = regexp.MustCompile(`[^A-Za-z0-9-]+`)
	notInScenarioName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)
)

// ServerName makes a name (a server's own, as it gave it) a valid server
// name in a servers file: letters, digits and -, at most 40 characters;
// "server" when nothing is left.
func ServerName(name string) string {
	s := strings.Trim(notInServerName.ReplaceAllString(name, "-"), "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	if s == "" {
		return "server"
	}
	return s
}

// header is the editor's schema line and what the file is.
func header(kind string, lines ...string) string {
	return "yaml-language-server: $schema=" + SchemaBase + kind + ".schema.json\n" + strings.Join(lines, "\n")
}

func serversFile(s Server) []byte {
	entry := &yaml.Node{Kind: yaml.MappingNode}
	spec := s.Spec
	if spec.URL != "" {
		add(entry, "url", str(spec.URL))
		if len(spec.Headers) > 0 {
			headers := &yaml.Node{Kind: yaml.MappingNode}
			for _, k := range sortedKeys(spec.Headers) {
				add(headers, k, str(spec.Headers[k]))
			}
			add(entry, "headers", headers)
		}
	} else {
		add(entry, "command", str(spec.Command))
		if s.Shareable() {
			v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"}
			v.LineComment = "every tool it lists is read-only: one process serves every case of a run"
			add(entry, "shareable", v)
		}
		if len(spec.Args) > 0 {
			args := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, a := range spec.Args {
				args.Content = append(args.Content, str(a))
			}
			add(entry, "args", args)
		}
		if len(spec.Env) > 0 {
			env := &yaml.Node{Kind: yaml.MappingNode}
			for _, kv := range spec.Env {
				k, v, _ := strings.Cut(kv, "=")
				add(env, k, str(v))
			}
			add(entry, "env", env)
		}
	}
	servers := &yaml.Node{Kind: yaml.MappingNode}
	add(servers, spec.Name, entry)
	root := &yaml.Node{Kind: yaml.MappingNode}
	add(root, "servers", servers)
	about := fmt.Sprintf("The server %s, as `hosteval init` reached it", spec.Name)
	if s.ServerName != "" {
		about += fmt.Sprintf(" (it calls itself %s %s", oneLine(s.ServerName, 60), oneLine(s.ServerVersion, 30))
		about = strings.TrimSpace(about) + ")"
	}
	return encode([]*yaml.Node{doc(root, header("servers",
		about+".",
		"A relative command resolves against this folder; ${VAR} is read from the",
		"environment when the suite loads (keep secrets there, not here); ${CASE_DIR} is",
		"each case's own fresh folder. shareable: true starts a server once per run,",
		"for every case: only for a server whose state no case changes.",
		"Reference: docs/scenarios.md in the hosteval repository."))})
}

func gatesFile(s Server, dir string) []byte {
	gates := &yaml.Node{Kind: yaml.SequenceNode}
	gates.Content = append(gates.Content, str("pass_rate >= 1"))
	root := &yaml.Node{Kind: yaml.MappingNode}
	add(root, "gates", gates)
	return encode([]*yaml.Node{doc(root, header("gates",
		"Gates the run must hold: every case passes. Check them with",
		"  hosteval run -gates "+dir+GatesFile+" "+dir,
		"and add limits as the suite grows, for example",
		"  - tool_def_tokens <= 2000",
		"  - {scenario: \""+s.Spec.Name+"-.*\", gate: \"p95_call_ms <= 500\"}",
		"  - tool_def_tokens <= baseline * 1.05    (with -baseline results/<a run>)",
		"The metrics: docs/scenarios.md in the hosteval repository."))})
}

// scenarioFile is one scenario per tool the host offers, each commented.
func scenarioFile(s Server, dir string) []byte {
	var docs []*yaml.Node
	var skipped []string
	names := map[string]bool{}
	for _, t := range s.Tools {
		if t.NotOffered != "" {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", t.Name, t.NotOffered))
			continue
		}
		name := scenarioName(s.Spec.Name, t.Name, names)
		docs = append(docs, toolScenario(s.Spec.Name, name, t))
	}
	lines := []string{
		fmt.Sprintf("A first suite for the server %s, written by `hosteval init` from the %d", s.Spec.Name, len(s.Tools)),
		"tools it listed" + reachedWith(s) + ".",
		"One scenario per tool: a scripted model calls the tool once with the",
		"arguments below, then answers; the expectation is that the call succeeds.",
		"Run it with",
		"  hosteval run -gates " + dir + GatesFile + " " + dir,
		"",
		"Next: replace every value marked TODO (made up from the argument's type) with one",
		"that works against your server; then expect more of each call (result_matches,",
		"a state: check), and ask real questions of a real model (model: {openai: ...}).",
		"Reference: docs/scenarios.md in the hosteval repository.",
	}
	if len(skipped) > 0 {
		lines = append(lines, "", "Not here, since this host cannot call them: "+strings.Join(skipped, ", ")+".")
	}
	if len(docs) == 0 {
		// A scenario file with no scenario does not load: say so instead.
		root := &yaml.Node{Kind: yaml.MappingNode}
		add(root, "name", str(ServerName(s.Spec.Name)+"-connects"))
		add(root, "servers", flowSeq(s.Spec.Name))
		model := &yaml.Node{Kind: yaml.MappingNode}
		add(model, "scripted", &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{mapping("answer", str("It has no tools."))}})
		add(root, "model", model)
		add(root, "question", str("What can you do?"))
		expect := &yaml.Node{Kind: yaml.SequenceNode}
		expect.Content = append(expect.Content, flowMapping("server", str(s.Spec.Name), "connected", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"}))
		add(root, "expect", expect)
		lines = append(lines, "", "The server listed no tool this host can call: the one scenario checks that it connects.")
		return encode([]*yaml.Node{doc(root, header("scenario", lines...))})
	}
	docs[0].HeadComment = header("scenario", lines...) + "\n\n" + docs[0].HeadComment
	return encode(docs)
}

func reachedWith(s Server) string {
	var parts []string
	if s.ServerName != "" {
		parts = append(parts, strings.TrimSpace(oneLine(s.ServerName, 60)+" "+oneLine(s.ServerVersion, 30)))
	}
	if s.Protocol != "" {
		parts = append(parts, "protocol "+s.Protocol)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// scenarioName is server-tool made a valid scenario name, unique among
// names (which it joins).
func scenarioName(server, tool string, names map[string]bool) string {
	base := strings.Trim(notInScenarioName.ReplaceAllString(server+"-"+tool, "-"), "-.")
	name := base
	for i := 2; names[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	names[name] = true
	return name
}

// toolScenario is the scenario of one tool.
func toolScenario(server, name string, t Tool) *yaml.Node {
	full := host.Namespaced(server, t.Name)
	args, optional := arguments(t.InputSchema)

	var about []string
	title := t.Name
	if d := oneLine(t.Description, 100); d != "" {
		title += ": " + d
	}
	about = append(about, title)
	if t.ReadOnly {
		about = append(about, "Read-only (its annotations say so): it runs without asking the person.")
	} else {
		about = append(about,
			"Not read-only: it may change the server's state, so the host runs it only",
			"after the person approves; this scenario approves it (approvals). Run it",
			"against a server whose data may change.")
		if t.Destructive {
			about = append(about, "Its annotations warn that it may destroy data.")
		}
	}

	outcome := "ok"
	if tr := t.Trial; tr != nil {
		if tr.Outcome == "ok" {
			about = append(about, "init called it once with these arguments: it answered.")
		} else {
			outcome = tr.Outcome
			about = append(about, fmt.Sprintf("init called it once with these arguments: %s (%s).", tr.Outcome, oneLine(tr.Error, 120)),
				"TODO: give arguments that work against your server, then expect outcome: ok.")
		}
		if len(tr.Questions) > 0 {
			about = append(about, "The server asked the person: the answers below are made from its form",
				"(a default, the first choice; TODO marks a value made up from its type).")
		}
	}

	root := &yaml.Node{Kind: yaml.MappingNode}
	add(root, "name", str(name))
	add(root, "servers", flowSeq(server))
	if !t.ReadOnly {
		add(root, "approvals", flowSeq(full))
	}
	call := &yaml.Node{Kind: yaml.MappingNode}
	add(call, "call", str(full))
	argsKey := str("args")
	if len(optional) > 0 {
		argsKey.HeadComment = "optional: " + strings.Join(optional, "\noptional: ")
	}
	call.Content = append(call.Content, argsKey, args)
	scripted := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{call, mapping("answer", str("Done."))}}
	model := &yaml.Node{Kind: yaml.MappingNode}
	add(model, "scripted", scripted)
	add(root, "model", model)
	question := str("Use " + t.Name + ".")
	question.LineComment = "what a person would ask, for a real model"
	add(root, "question", question)
	if t.Trial != nil && len(t.Trial.Questions) > 0 {
		answers := &yaml.Node{Kind: yaml.SequenceNode}
		for _, q := range t.Trial.Questions {
			a := &yaml.Node{Kind: yaml.MappingNode}
			add(a, "server", str(q.Server))
			if q.Key != "" {
				add(a, "key", str(q.Key))
			} else {
				add(a, "message", str("^"+regexp.QuoteMeta(q.Message)+"$"))
			}
			add(a, "action", str("accept"))
			content, _ := Answer(q.Schema)
			add(a, "content", content)
			answers.Content = append(answers.Content, a)
		}
		add(root, "elicitation", answers)
	}
	expect := &yaml.Node{Kind: yaml.SequenceNode}
	want := flowMapping("tool", str(full), "outcome", str(outcome))
	if t.Trial != nil && len(t.Trial.Questions) > 0 {
		add(want, "asked_user", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	}
	expect.Content = append(expect.Content, want)
	add(root, "expect", expect)
	return doc(root, strings.Join(about, "\n"))
}

// oneLine is the first line of s without control characters, cut to max
// runes: safe in a comment.
func oneLine(s string, max int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > max {
		s = strings.TrimSpace(string(r[:max-1])) + "…"
	}
	return s
}

func doc(root *yaml.Node, comment string) *yaml.Node {
	return &yaml.Node{Kind: yaml.DocumentNode, HeadComment: comment, Content: []*yaml.Node{root}}
}

func encode(docs []*yaml.Node) []byte {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			// Nodes built here from strings always encode.
			panic(fmt.Sprintf("scaffold: encode: %v", err))
		}
	}
	enc.Close()
	return buf.Bytes()
}

func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func add(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, str(key), v)
}

func mapping(key string, v *yaml.Node) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	add(m, key, v)
	return m
}

func flowMapping(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	for i := 0; i+1 < len(kv); i += 2 {
		add(m, kv[i].(string), kv[i+1].(*yaml.Node))
	}
	return m
}

func flowSeq(items ...string) *yaml.Node {
	s := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, it := range items {
		s.Content = append(s.Content, str(it))
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
