package scenario

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// The documents of scenario and servers files, as written. internal/yamlx
// reads a file into them (strictly: every problem at once), and reflects
// them into the published JSON Schemas and the reference
// (docs/scenarios.md): a field's `doc` tag is its description there, its
// `example` tag its example. load.go, servers.go and modelspec.go turn them
// into Scenarios, checking what needs more than one field.

// scenarioDoc is one scenario: one YAML document of a scenario file.
type scenarioDoc struct {
	Name        scenarioName        `yaml:"name" required:"true" doc:"The scenario's name: unique in the suite, letters, digits, _ . and -. Case IDs and records use it." example:"ticket-accepted"`
	Description string              `yaml:"description" doc:"What the scenario checks, for people reading reports." example:"The person accepts the ticket."`
	ServersFile string              `yaml:"servers_file" doc:"The servers file that names resolve in, relative to this file. Default: the nearest servers.yaml in this file's folder or a folder above it." example:"../servers.yaml"`
	Servers     []serverEntry       `yaml:"servers" want:"a list of server names or definitions" doc:"The servers to start: names from the servers file, or inline definitions ({name, command, ...} or {name, url, ...}). Each case gets its own processes unless a server is shareable." example:"[cmdb, tickets]"`
	Host        *hostDoc            `yaml:"host" doc:"Limits and settings of the host."`
	System      *string             `yaml:"system" doc:"The system prompt." example:"You are the on-call assistant."`
	Model       *modelDoc           `yaml:"model" doc:"The model (one of scripted, rules, openai, lexical). Required, unless models is given." example:"{scripted: [{answer: done}]}"`
	Models      []modelDoc          `yaml:"models" want:"a list of models" doc:"Several models, each a case of its own (give each a name when two are of one kind)." example:"[{name: a, scripted: [{answer: a}]}, {openai: {model: gpt-oss-120b}}]"`
	Turns       []string            `yaml:"turns" doc:"The user's questions, one per turn, in one conversation. Required, unless question or dataset is given." example:"[\"who owns jump-prod-02?\", \"open a ticket for it\"]"`
	Question    *string             `yaml:"question" doc:"A one-turn conversation: the same as turns: [question]." example:"who owns jump-prod-02?"`
	Dataset     *datasetDoc         `yaml:"dataset" doc:"Rows of questions, each with the tools that should answer it, instead of turns: a file (.yaml, .jsonl or .csv, relative to this file) or a list of rows. Every row is cases of its own (rows x variants x models x repeat), with its routing verdict in the record." example:"routing/questions.csv"`
	Distractors *distractorsDoc     `yaml:"distractors" doc:"The catalog as an axis: the dataset's rows are asked beside that many other tools, drawn from other servers' catalogs, each size a routing group of its own."`
	Mode        *routeMode          `yaml:"mode" doc:"For a dataset: route ends each case at the model's first answer and scores the calls it proposed, sending nothing to any server (no side effects, no tool latency, no person): the run lists each server's tools once, or a catalog: file stands in for it. full (the default) runs the whole loop and scores every call of the case. A row's mode wins." example:"route"`
	Files       yamlx.Map[fileText] `yaml:"files" doc:"Files written into the case folder (${CASE_DIR}) before the servers start: relative path -> text. A server of the scenario must use ${CASE_DIR}." example:"{notes/a.txt: \"alpha\\n\"}"`
	Elicitation []answerDoc         `yaml:"elicitation" want:"a list of answers" doc:"The person's canned answers to the servers' questions (elicitation), tried in order; a question no answer matches is declined and counted."`
	Approvals   []string            `yaml:"approvals" doc:"The tools the person approves when asked (a tool not on its server's auto-run list needs approval): namespaced names, or a prefix ending in *. The rest are denied." example:"[tickets__open_ticket, \"support__*\"]"`
	Variants    []variantDoc        `yaml:"variants" want:"a list of variants" doc:"Named sets of overrides (host settings, system prompt), each a case of its own: the A/B of tool descriptions."`
	Repeat      *int                `yaml:"repeat" min:"1" max:"10000" doc:"How many times each case runs (default 1)." example:"3"`
	Timeout     *duration           `yaml:"timeout" doc:"The deadline of one case's turns and checks, counted once its servers are connected (connecting has its own budget, connect_timeout; default 60s)." example:"30s"`
	Expect      []expectDoc         `yaml:"expect" doc:"What must hold after the conversation; each expectation is one of the kinds below, chosen by its keys."`
	Gates       []string            `yaml:"gates" want:"a list of gates" doc:"Gates on this scenario's groups (one per variant and model): \"<metric> <op> <number>\" or \"... baseline\"; see the gate metrics." example:"[\"pass_rate >= 1\"]"`
	Cassettes   *cassettesDoc       `yaml:"cassettes" doc:"Where the cases' model requests (and the answers of servers with record_server) are recorded and replayed: one file per case, so a suite recorded once against a real endpoint runs offline. run -record DIR and -replay DIR override it."`
}

// hostDoc are the host settings of a scenario or a variant.
type hostDoc struct {
	Protocol       *protocolMode `yaml:"protocol" doc:"auto (server/discover, falling back to 2025-11-25 initialize), legacy (2025-11-25 only) or 2026-07-28 (pinned: an older server is a version failure). Default auto." example:"auto"`
	budget.Budgets `yaml:",inline"`
	Allow          []string            `yaml:"allow" doc:"Only these namespaced tools are offered to the model (an empty list clears a scenario's list in a variant)." example:"[cmdb__get_asset, tickets__open_ticket]"`
	Deny           []string            `yaml:"deny" doc:"These namespaced tools are not offered to the model." example:"[tickets__delete_ticket]"`
	Descriptions   yamlx.Map[string]   `yaml:"descriptions" doc:"Tool descriptions the model sees instead of the server's: namespaced tool -> text (a variant's merge over the scenario's)." example:"{cmdb__get_asset: \"Get one host by its exact hostname.\"}"`
	Elicitation    *bool               `yaml:"elicitation" doc:"Whether the host declares the elicitation capability (default true)." example:"false"`
	AutoRun        yamlx.Map[[]string] `yaml:"auto_run" doc:"Per server, the tools (its own names) that run without asking the person, replacing the servers file's list; [] for none, [\"*\"] for all." example:"{tickets: [list_tickets]}"`
}

// serverDoc is one server definition, in a servers file or inline.
type serverDoc struct {
	Command        *string           `yaml:"command" doc:"The program of a stdio server: a path relative to the file's folder when it has a slash, else looked up on PATH." example:"${HERE}/bin/cmdb"`
	Args           []string          `yaml:"args" doc:"Its arguments." example:"[\"-data\", \"${HERE}/data.json\"]"`
	Env            yamlx.Map[string] `yaml:"env" doc:"Variables added to the minimal environment a server gets." example:"{CMDB_TOKEN: \"${CMDB_TOKEN}\"}"`
	InheritEnv     *bool             `yaml:"inherit_env" doc:"Pass the host's whole environment (it holds API keys: a server can hand anything it sees to the model)." example:"true"`
	Dir            *string           `yaml:"dir" doc:"The working folder, relative to the file's folder." example:"."`
	URL            *string           `yaml:"url" doc:"The URL of a Streamable HTTP server, instead of command." example:"http://127.0.0.1:8080/mcp"`
	Catalog        *string           `yaml:"catalog" doc:"A file of the server's tools (hosteval catalog -save), relative to this file, instead of command or url: nothing is started, the tools are offered as the file holds them, and a call of one is answered with an error saying the server is not connected. For route-only datasets (mode: route) over a catalog whose server or credentials CI does not have." example:"catalogs/everything.json"`
	Headers        yamlx.Map[string] `yaml:"headers" doc:"Headers sent with every request to a url server." example:"{Authorization: \"Bearer ${TOKEN}\"}"`
	OAuth          *oauthDoc         `yaml:"oauth" doc:"OAuth 2.1 for a url server: hosteval gets, caches and refreshes its tokens (instead of an Authorization header)." example:"{flow: client_credentials, client_id: ci-bot, client_secret: \"${NOTES_SECRET}\"}"`
	AutoRun        []string          `yaml:"auto_run" doc:"The server's tools (its own names) that run without asking the person. Default: those whose annotations say read-only; [] for none; [\"*\"] for all." example:"[get_asset, find_assets]"`
	Shareable      *bool             `yaml:"shareable" doc:"Start the server once per run and share it between cases: only for a server that is stateless, or whose state no expectation reads." example:"true"`
	budget.Connect `yaml:",inline"`
	RecordServer   *bool `yaml:"record_server" doc:"Keep this server's answers (handshake, tool list, tool results) in each case's cassette, and in replay serve them from a stand-in instead of starting the server: for a server whose answers change over time (a live API). Only with cassettes (the scenario's or run -record/-replay); not with shareable." example:"true"`
}

// inlineServerDoc is a server defined in a scenario's servers list.
type inlineServerDoc struct {
	Name      serverName `yaml:"name" required:"true" doc:"The server's name: the prefix of its tools (server__tool)." example:"echo"`
	serverDoc `yaml:",inline"`
}

// serversFileDoc is a servers file.
type serversFileDoc struct {
	Servers yamlx.Map[serverDoc] `yaml:"servers" required:"true" doc:"The servers scenarios name: name (letters, digits, - and single _) -> definition."`
	Lint    *lintDoc             `yaml:"lint" doc:"How hosteval lint checks these servers' catalogs (the rules: docs/lint.md): rule levels, suppressions, where it fails. Flags win over it."`
}

// lintDoc is a servers file's lint: section.
type lintDoc struct {
	Rules      yamlx.Map[lintLevel] `yaml:"rules" doc:"Rule ID -> level: error, warning or note, or off to turn the rule off (-rule ID=LEVEL wins)." example:"{call-priority: error, param-description-missing: off}"`
	Suppress   []suppressDoc        `yaml:"suppress" want:"a list of suppressions" doc:"Findings accepted, per rule and tool, each with its reason: they are listed in every output, and one that matches no finding is warned about."`
	FailOn     *lintFailOn          `yaml:"fail_on" doc:"The least severity that fails hosteval lint (exit 1): error (the default), warning, note or none (-fail-on wins)." example:"warning"`
	LongTokens *int                 `yaml:"long_tokens" min:"1" max:"1000000" doc:"Rule cost-long-description flags descriptions over this many tokens (default 150, as hosteval catalog)." example:"300"`
}

// suppressDoc is one suppression of a lint finding.
type suppressDoc struct {
	Rule   string `yaml:"rule" required:"true" doc:"The rule ID (docs/lint.md)." example:"param-description-missing"`
	Server string `yaml:"server" doc:"Only this server's findings (default: every server's)." example:"cmdb"`
	Tool   string `yaml:"tool" doc:"Only this tool's findings, by its own name (default: every tool of the server, and its instructions)." example:"get_asset"`
	Reason string `yaml:"reason" required:"true" doc:"Why the finding is accepted: listed with it in every output." example:"the hostname parameter is self-describing"`
}

// lintLevel is a rule's level in a lint: section (internal/lint's
// severities, spelled here: the scenario language imports no room that
// checks catalogs).
type lintLevel string

// Enum lists the levels a rule takes.
func (lintLevel) Enum() []string { return []string{"error", "warning", "note", "off"} }

// lintFailOn is a lint: section's fail_on.
type lintFailOn string

// Enum lists the levels fail_on takes.
func (lintFailOn) Enum() []string { return []string{"error", "warning", "note", "none"} }

// answerDoc is one canned answer of the person to a server's question.
type answerDoc struct {
	Server  string         `yaml:"server" doc:"Only questions of this server." example:"tickets"`
	Message *yamlx.Regexp  `yaml:"message" doc:"Only questions whose message matches this regular expression." example:"(?i)open an incident"`
	Key     string         `yaml:"key" doc:"Only questions (input_required rounds) asking for this key." example:"confirm"`
	Action  *answerAction  `yaml:"action" doc:"accept, decline or cancel (default accept)." example:"accept"`
	Content map[string]any `yaml:"content" want:"a mapping of field: value" doc:"The form's values, with action: accept." example:"{priority: P1}"`
}

// variantDoc is a named set of overrides.
type variantDoc struct {
	Name        scenarioName `yaml:"name" required:"true" doc:"The variant's name, in case IDs (scenario/variant)." example:"short"`
	Description string       `yaml:"description" doc:"What the variant changes." example:"Terse descriptions."`
	Host        *hostDoc     `yaml:"host" doc:"Host settings over the scenario's: descriptions and auto_run merge key by key, the others replace."`
	System      *string      `yaml:"system" doc:"A system prompt instead of the scenario's." example:"Be brief."`
}

// modelFields are a model's fields; modelDoc reads them.
type modelFields struct {
	Name         string `yaml:"name" doc:"The model's name in case IDs and records (default: scripted, rules[:name], openai:<model>)." example:"rules-owner"`
	model.Config `yaml:",inline"`
}

// modelDoc is one model: a name and exactly one kind.
type modelDoc struct {
	modelFields
	// kind is the one kind written; "" when the model has problems.
	kind string
}

// UnmarshalYAML reads the fields, then checks that exactly one kind is
// written (model.New checks the rest, when the loader builds it).
func (m *modelDoc) UnmarshalYAML(n *yamlx.Node) error {
	if !n.Decode(&m.modelFields) {
		return nil
	}
	if n.Get("name") != nil && strings.TrimSpace(m.Name) == "" {
		n.At("name").Errorf("empty")
		return nil
	}
	var kinds []string
	for _, k := range []string{"scripted", "rules", "openai", "lexical"} {
		if n.Has(k) {
			kinds = append(kinds, k)
		}
	}
	switch {
	case len(kinds) == 0:
		n.Errorf("no model kind: want one of scripted, rules, openai or lexical")
	case len(kinds) > 1:
		n.Report(yamlx.Problem{Line: keyLine(n, kinds[1]), Path: n.Path(), Msg: fmt.Sprintf("want one model kind, got %s", joinAnd(kinds))})
	case n.Get(kinds[0]) == nil:
		n.Report(yamlx.Problem{Line: keyLine(n, kinds[0]), Path: yamlx.Join(n.Path(), kinds[0]), Msg: "empty"})
	default:
		m.kind = kinds[0]
		if m.kind == "scripted" && m.Scripted == nil {
			m.Scripted = []model.ScriptStep{} // written empty: a script with no steps
		}
	}
	return nil
}

// JSONSchema is the model's fields.
func (*modelDoc) JSONSchema(r *yamlx.Reflector) *jsonschema.Schema {
	s := r.For(reflect.TypeFor[modelFields]())
	s.Description = "A model: a name and one of scripted, rules, openai or lexical."
	return s
}

// keyLine is the line of a mapping's key.
func keyLine(n *yamlx.Node, key string) int {
	for _, f := range n.Fields() {
		if f.Key == key {
			return f.KeyLine
		}
	}
	return n.Line()
}

func joinAnd(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	s := words[0]
	for _, w := range words[1 : len(words)-1] {
		s += ", " + w
	}
	return s + " and " + words[len(words)-1]
}

// serverEntry is one item of a scenario's servers: a name from the servers
// file, or an inline definition.
type serverEntry struct {
	name   string
	inline *inlineServerDoc
	ok     bool // the inline definition was read without a problem
}

func (s *serverEntry) UnmarshalYAML(n *yamlx.Node) error {
	switch n.Kind() {
	case yamlx.Scalar:
		s.name = n.Text()
	case yamlx.Mapping:
		if n.Get("name") == nil {
			return fmt.Errorf("an inline server needs a name")
		}
		s.inline = &inlineServerDoc{}
		s.ok = n.Decode(s.inline)
		s.name = string(s.inline.Name)
	default:
		return fmt.Errorf("want a server name or a definition, got %s", n.Describe())
	}
	return nil
}

func (*serverEntry) JSONSchema(r *yamlx.Reflector) *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
		{Type: "string", Description: "A server of the servers file."},
		r.For(reflect.TypeFor[inlineServerDoc]()),
	}}
}

// Names, numbers and durations with a meaning.

var (
	scenarioNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	serverNameRE   = regexp.MustCompile(`^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$`)
)

const serverNameWant = `letters, digits, - and single _ (the host names tools server__tool)`

// scenarioName is the name of a scenario or a variant.
type scenarioName string

func (s *scenarioName) UnmarshalYAML(n *yamlx.Node) error {
	return decodeIdent(n, (*string)(s), scenarioNameRE, "letters, digits, _ . and -")
}

func (*scenarioName) JSONSchema(*yamlx.Reflector) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: scenarioNameRE.String()}
}

// serverName is the name of an inline server.
type serverName string

func (s *serverName) UnmarshalYAML(n *yamlx.Node) error {
	return decodeIdent(n, (*string)(s), serverNameRE, serverNameWant)
}

func (*serverName) JSONSchema(*yamlx.Reflector) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: serverNameRE.String()}
}

func decodeIdent(n *yamlx.Node, dst *string, re *regexp.Regexp, want string) error {
	var s string
	if !n.Decode(&s) {
		return nil
	}
	if !re.MatchString(s) {
		return fmt.Errorf("%q is not a valid name: want %s", s, want)
	}
	*dst = s
	return nil
}

// duration is a positive duration such as 10s.
type duration time.Duration

func (d *duration) UnmarshalYAML(n *yamlx.Node) error {
	var v time.Duration
	if !n.Decode(&v) {
		return nil
	}
	if v <= 0 {
		return fmt.Errorf("want a positive duration, got %s", n.Text())
	}
	*d = duration(v)
	return nil
}

func (*duration) JSONSchema(*yamlx.Reflector) *jsonschema.Schema { return yamlx.Duration() }

// protocolMode is a host.Mode.
type protocolMode host.Mode

func (m *protocolMode) UnmarshalYAML(n *yamlx.Node) error {
	var s string
	if !n.Decode(&s) {
		return nil
	}
	mode, err := host.ParseMode(s)
	if err != nil {
		return err
	}
	*m = protocolMode(mode)
	return nil
}

func (*protocolMode) JSONSchema(*yamlx.Reflector) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Enum: []any{string(host.ModeAuto), string(host.ModeLegacy), string(host.ModePinned)}}
}

// answerAction is what the person does with a question.
type answerAction string

var answerActions = []string{host.ActionAccept, host.ActionDecline, host.ActionCancel}

func (a *answerAction) UnmarshalYAML(n *yamlx.Node) error {
	var s string
	if !n.Decode(&s) {
		return nil
	}
	switch s {
	case host.ActionAccept, host.ActionDecline, host.ActionCancel:
		*a = answerAction(s)
		return nil
	}
	return fmt.Errorf("unknown action %q (want accept, decline or cancel)", s)
}

func (*answerAction) JSONSchema(*yamlx.Reflector) *jsonschema.Schema {
	var values []any
	for _, a := range answerActions {
		values = append(values, a)
	}
	return &jsonschema.Schema{Type: "string", Enum: values}
}

// fileText is the text of a file of files:.
type fileText string

func (t *fileText) UnmarshalYAML(n *yamlx.Node) error {
	if n.Kind() != yamlx.Scalar {
		return fmt.Errorf("want the file's text, got %s", n.Describe())
	}
	*t = fileText(n.Text())
	return nil
}

func (*fileText) JSONSchema(*yamlx.Reflector) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string"}
}

func ptrTo[T any](v T) *T { return &v }
