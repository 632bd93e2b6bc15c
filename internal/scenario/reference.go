package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hosteval/hosteval/internal/gate"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// The published schemas and the reference, generated from the structs
// files are read into (schema.go, expectdoc.go, internal/model,
// internal/report's gates file), so that what an editor checks and what
// docs/scenarios.md says is what the loader reads. The files in docs/ are
// rewritten with go test ./internal/scenario -update, and a test fails
// when they are stale.

// SchemaKinds are the kinds of file a schema is published for: the
// suite's files, then the model files of chat and lab (-script, -rules).
var SchemaKinds = []string{"scenario", "servers", "gates", "script", "rules"}

const schemaBase = "https://github.com/hosteval/hosteval/docs/"

// Schema returns the JSON Schema (draft 2020-12) of a kind of file
// ("scenario", "servers" or "gates"), as docs/<kind>.schema.json holds it.
func Schema(kind string) ([]byte, error) {
	s, err := schemaOf(kind)
	if err != nil {
		return nil, err
	}
	return marshalSchema(s)
}

func schemaOf(kind string) (*jsonschema.Schema, error) {
	id := schemaBase + kind + ".schema.json"
	switch kind {
	case "scenario":
		return yamlx.Schema(reflect.TypeFor[scenarioDoc](), id, "hosteval scenario",
			"One scenario: servers, a model, the user's questions, the person's canned answers, host limits and expected outcomes. A file holds one or more, as YAML documents separated by ---."), nil
	case "servers":
		return yamlx.Schema(reflect.TypeFor[serversFileDoc](), id, "hosteval servers file",
			"The servers scenarios name, and how to start or reach each: a servers.yaml is found by walking up from a scenario file."), nil
	case "gates":
		return gate.FileSchema(id), nil
	case "script":
		return yamlx.Schema(reflect.TypeFor[[]model.ScriptStep](), id, "hosteval script file",
			"A scripted model for hosteval chat and lab (-script FILE): the list of steps of a scenario's model: {scripted: [...]}, on its own."), nil
	case "rules":
		return yamlx.Schema(reflect.TypeFor[model.RulesConfig](), id, "hosteval rules file",
			"A rules model for hosteval chat and lab (-rules FILE): what a scenario's model: {rules: {...}} holds, on its own."), nil
	}
	return nil, fmt.Errorf("no schema for %q: want one of %s", kind, strings.Join(SchemaKinds, ", "))
}

func marshalSchema(s *jsonschema.Schema) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// sections title the object types of the reference and say what each is
// for, by the name the schemas give them ($defs) or the file kind.
var sections = map[string]struct{ title, intro string }{
	"scenario":              {"Scenario files", "A scenario file holds one or more scenarios, as YAML documents separated by `---`. Every problem of every file is reported at once, with `file:line` and the field's path, before anything runs (exit 2)."},
	"servers":               {"Servers files", "A `servers.yaml` maps names to servers; a scenario names them, and the nearest `servers.yaml` in its folder or a folder above is used (or `servers_file:`). In every string, `${VAR}` is the environment variable (an unset one is a problem), `${HERE}` the file's folder, `$$` a literal `$`; `${CASE_DIR}` is the case's own fresh folder, in args, env and dir only."},
	"script":                {"Script files (`chat` and `lab` `-script`)", "A script file is a scenario's `model: {scripted: [...]}` list on its own: a YAML list of steps, each a [scripted: a step](#scripted-a-step), consumed across the session's turns (once it has run out, the model answers `done`). `docs/examples/script.yaml` is the README's. The file is read as strictly as a scenario, every problem with `file:line`."},
	"rules":                 {"Rules files (`chat` and `lab` `-rules`)", "A rules file is what a scenario's `model: {rules: {...}}` holds, on its own: regular expressions on the question choose a call; templates (Go text/template) over the result write the answer. `docs/seed-rules.yaml` is the README's. The file is read as strictly as a scenario, every problem with `file:line`."},
	"gates":                 {"Gates files", "Thresholds a run must hold (`hosteval gate -gates FILE`, `hosteval run -gates FILE`). A gate's right side is a number, or `baseline` (the same metric of the same group in the `-baseline` run), optionally `* 1.05`, `+ 2` or `- 0.1`."},
	"hostDoc":               {"host", "The host's limits and settings, in a scenario's `host:` or a variant's."},
	"serverDoc":             {"A server", "One server: `command` (a stdio server), `url` (a Streamable HTTP server) or `catalog` (a file of its tools, written by `hosteval catalog -save`), only one. Its `connect_timeout`, `discover_timeout` and `initialize_timeout` are its own, over the host's (a scenario's `host:` and the flags set those)."},
	"oauthDoc":              {"oauth", "How hosteval gets tokens for a url server that needs OAuth 2.1: it discovers the server's authorization server, registers (or uses the client given), runs the flow, and caches the token (readable by you only) under your configuration folder (`~/.config/hosteval/tokens` on Linux), refreshing it when it expires, also mid-run. `run`, `chat`, `tools` and `catalog` authorise every such server before any host starts. In CI (`CI` set, or no terminal) an authorization_code flow that needs a person fails at once: use `client_credentials`, or a cached token."},
	"inlineServerDoc":       {"An inline server", "A server defined in a scenario's `servers:` list instead of the servers file: a name and the fields of a server."},
	"modelFields":           {"model", "A model: a name and exactly one of `scripted`, `rules`, `openai` or `lexical`."},
	"ScriptStep":            {"scripted: a step", "One model message of a script: exactly one of `call`, `calls` or `answer`. The script is one list consumed across the turns; once it has run out, the model answers `done`."},
	"scriptCallFields":      {"scripted: a call of calls", "One of several calls proposed in one message: a call string, or this mapping."},
	"RulesConfig":           {"rules", "A rules model: regular expressions on the question choose a call; templates (Go text/template) over the result write the answer."},
	"Rule":                  {"rules: a rule", "A regular expression on the question and the call it makes."},
	"ThenCall":              {"rules: then", "A second call, made after the rule's call succeeded."},
	"AnswerRule":            {"rules: an answer", "An answer template for results of a tool, or for failed calls."},
	"LexicalConfig":         {"lexical", "The lexical router: not a model but a proxy for one, for CI without an endpoint. For each question it ranks the offered tools by BM25 (internal/lexical: k1 1.2, b 0.75; words split on `_`, `-` and case, lowercased, plurals stemmed, stop words dropped) over the bytes the host sends of each tool: its name, its description and its parameters' names and descriptions. It calls the best tool, or none when the best scores under `min_score`; its top 3 tools and scores are in each routing record. An argument is filled only when a word of the question is one of the parameter's `enum` values or matches its `pattern`. After a result it answers with the result. Deterministic and offline: a description A/B moves it, and reports mark it a lexical proxy."},
	"OpenAIConfig":          {"openai", "Any OpenAI-compatible Chat Completions endpoint (vLLM, Ollama, a hosted API). Retries back off exponentially and honour Retry-After; token usage is recorded."},
	"lintDoc":               {"lint", "How `hosteval lint` checks the servers' catalogs (the rules, each with a bad and a good example: [lint.md](lint.md)). Flags win: `-rule ID=LEVEL`, `-suppress 'RULE:SERVER/TOOL=REASON'`, `-fail-on`, `-long-tokens`."},
	"suppressDoc":           {"lint: a suppression", "One rule's findings accepted, on one tool (or every tool) of one server (or every server), for a reason kept with them: a suppressed finding is listed with its reason in every output (SARIF marks it suppressed), and a suppression that matches no finding is warned about."},
	"answerDoc":             {"elicitation: an answer", "The person's canned answer to a server's question. Every condition given must hold; the first answer that fits is used."},
	"rowDoc":                {"dataset: a row", "One question of a dataset and the tools that should answer it. In a CSV file the header names these keys as columns (an unknown or repeated column is a problem); tools, forbid, tags and turns cells are lists separated by `;` (an empty tools cell: no tool); args and expect cells are YAML flow text (`{hostname: jump-prod-02}`, `[{steps: {max: 1}}]`). A JSONL file has one row as a JSON object per line. Rows are cases of their own: `scenario[/variant][/model]/<row id>#repeat`, and `-run` selects them by `scenario/row` too. A row's routing verdict (record `route`: the tools proposed, the class chosen, right or not by its match rule and forbid, its arguments) is what the routing figures and gates count; the case fails only on its expectations (the scenario's and the row's `expect`)."},
	"criticDoc":             {"dataset: an argument's critic", "A mapping of exactly one of these keys stands for a check of the argument's value instead of the value itself (`tol` goes with `near`); write `{exact: {...}}` for an expected value that is a mapping with these keys."},
	"distractorsDoc":        {"distractors", "The catalog as an axis of a dataset: its rows are asked beside 0, 25, 50 ... other tools, each size a routing group of its own (case IDs carry it: `scenario[/variant]/d25/row#0`; the record's `route.distractors`). The tools of a size are the first of one permutation of every source's tools drawn from the seed, skipping a row's expected tools: the same on every run and machine, and nested (the 25 are among the 50). They come after the scenario's own tools, under their own server's prefix, and are never called: a route-only case calls nothing, and in a whole conversation the host answers a call of one with an error saying its server is not connected, sending nothing."},
	"variantDoc":            {"variants: a variant", "A named set of overrides over the scenario; each variant is a case of its own."},
	"toolExpectDoc":         {"expect: a tool expectation", "About the calls of one tool (the key `tool`): some call (or the `nth`) must have every property given."},
	"orderExpectDoc":        {"expect: an order expectation", "Tools called in a relative order (the key `order`)."},
	"serverExpectDoc":       {"expect: a server expectation", "About one server's connection (the key `server`)."},
	"stateExpectDoc":        {"expect: a state expectation", "A call the harness makes after the conversation (the key `state`), and what its result must hold: state the tools changed, checked through the server."},
	"judgeExpectDoc":        {"expect: a judge expectation", "A model grades the case's final answer against a rubric after the conversation (the key `judge`). Its prompt is fixed (internal/model/judge.tmpl), its answer structured (`{score, reason}`); its request is recorded and replayed in the case's cassette like the model's. The score and reason are in the record's `judgements`, and in the detail of a failure."},
	"judgeDoc":              {"judge", "What the judge grades against, with what, and the score needed."},
	"judgeModelDoc":         {"judge: model", "The judge: exactly one of `openai` or `scripted`."},
	"scriptedGradeDoc":      {"judge: a scripted grade", "One grade of a scripted judge."},
	"cassettesDoc":          {"cassettes", "Where the cases' model requests are recorded and replayed (docs/models.md). Only what decides an answer is kept (request and response bodies), never a header, a URL or a key."},
	"toolsChangedExpectDoc": {"expect: a tools_changed expectation", "How one server's tools changed during the case (the key `tools_changed`): the server said so (notifications/tools/list_changed), and the host listed them again and offered the new table from its next model request on. Each change is a `host.tools_changed` event in the case log and in the record's `tool_changes`."},
	"caseExpectDoc":         {"expect: answer, count and bound checks", "A mapping with none of `tool`, `order`, `server`, `state`, `judge` or `tools_changed`: checks of the answer and counts over the case, all of which must hold. A count is a number (exactly) or `{min: N, max: N}`."},
	"Price":                 {"openai: price", "Prices in dollars per million tokens; every answer of the model then has its cost, and reports sum it."},
	"Limits":                {"openai: limits", "Bounds on the requests of a whole run to one endpoint, shared by every case (a 429 slows them all down)."},
	"rangeBounds":           {"A range", "A count between bounds: `{min: N}`, `{max: N}` or both."},
	"scopedGate":            {"A scoped gate", "A gate checked only on the groups whose names its regular expressions match in full."},
}

// Reference returns docs/scenarios.md: every field of every kind of file,
// every expectation key and every gate metric, with its meaning and an
// example.
func Reference() ([]byte, error) {
	var b strings.Builder
	b.WriteString(`# Scenario, servers and gates files: the reference

<!-- Generated by go test ./internal/scenario -update from the structs hosteval reads these files into; do not edit. -->

Every key below is what the loader reads, from the same Go structs: the
JSON Schemas next to this file (scenario.schema.json, servers.schema.json,
gates.schema.json, also printed by ` + "`hosteval schema scenario|servers|gates|script|rules`" + `)
let an editor complete and check a file. Put the line

    # yaml-language-server: $schema=../docs/scenario.schema.json

(the path relative to the file) at the top of a scenario file, and the servers
or gates schema at the top of those files. Loading is strict: an unknown key
(with the closest known one suggested), a wrong type, a missing required key,
a value outside its list, a bad regular expression or duration, a name that
is not a server of the scenario are all reported at once, each with
` + "`file:line`" + ` and the key's path, before anything runs. An empty value
(` + "`key:`" + ` with nothing, ` + "`~`" + `) counts as not written. YAML anchors,
aliases and merge keys (` + "`<<: *anchor`" + `) work; a document may reach at most
` + strconv.Itoa(yamlx.AliasBudget) + ` nodes through aliases (a node counts each time an alias reaches
it), so a file of nested aliases is refused at once with "too many alias
expansions" and the line of the alias.

`)
	done := map[string]bool{}
	for _, kind := range SchemaKinds {
		s, err := schemaOf(kind)
		if err != nil {
			return nil, err
		}
		w := refWriter{b: &b, defs: s.Defs, done: done}
		if s.Type == "array" {
			w.list(kind, s)
		} else {
			w.object(kind, s, 2)
		}
		if w.err != nil {
			return nil, w.err
		}
	}
	b.WriteString("## Gate metrics\n\nWhat a gate (`<metric> <op> <number>`) checks, per scenario+variant+model group; a routing metric " +
		"(routing_accuracy and those after it) per routing group, the cases made from dataset rows of one scenario, variant, model and " +
		"catalog size. The first choice is the first tool proposed, or none; `recall:<tool>` and `precision:<tool>` take a tool's " +
		"namespaced name, or `no_tool` for the rows that expect none. A group where a routing figure is undefined (no row expects the " +
		"tool, the tool was never chosen) is skipped; a gate that no group defines fails.\n\n")
	b.WriteString("| metric | meaning | over a group's cases | example gate |\n|---|---|---|---|\n")
	for _, m := range gate.Metrics() {
		fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` |\n", m.Name, m.Meaning, m.Aggregation, metricExample(m))
	}
	return []byte(b.String()), nil
}

// metricExample is a gate a team might write on the metric.
func metricExample(m gate.Metric) string {
	switch {
	case m.Name == "pass_rate":
		return "pass_rate >= 0.9"
	case m.Arg != "":
		return m.Base() + ":tickets__open_ticket >= 0.8"
	case m.Name == "confusions":
		return "confusions <= baseline"
	case m.Routing:
		return m.Name + " >= 0.9"
	case strings.HasSuffix(m.Name, "_ms"):
		return m.Name + " <= baseline * 1.2"
	case m.Aggregation == "sum" || m.Name == "failed" || m.Name == "errored":
		return m.Name + " == 0"
	case strings.HasPrefix(m.Name, "tool_def") || strings.Contains(m.Name, "tokens"):
		return m.Name + " <= baseline * 1.05"
	case m.Name == "cases" || m.Name == "passed":
		return m.Name + " >= 1"
	}
	return m.Name + " <= baseline + 1"
}

// refWriter writes the sections of one schema: an object's table, then,
// depth first, the objects it refers to, each once.
type refWriter struct {
	b     *strings.Builder
	defs  map[string]*jsonschema.Schema
	done  map[string]bool
	queue []string
	err   error
}

func (w *refWriter) object(name string, s *jsonschema.Schema, level int) {
	sec, ok := sections[name]
	if !ok {
		w.err = fmt.Errorf("no reference section for %s: give it a title and an intro in sections (internal/scenario/reference.go)", name)
		return
	}
	fmt.Fprintf(w.b, "%s %s\n\n", strings.Repeat("#", level), sec.title)
	if level == 2 {
		fmt.Fprintf(w.b, "Schema: [%s.schema.json](%s.schema.json).\n\n", name, name)
	}
	fmt.Fprintf(w.b, "%s\n\n", sec.intro)
	w.b.WriteString("| key | type | meaning | example |\n|---|---|---|---|\n")
	w.queue = nil
	for _, key := range s.PropertyOrder {
		p := s.Properties[key]
		req := ""
		if slices.Contains(s.Required, key) {
			req = " (required)"
		}
		example := ""
		if len(p.Examples) > 0 {
			example = "`" + key + ": " + flow(p.Examples[0]) + "`"
		}
		fmt.Fprintf(w.b, "| `%s`%s | %s | %s | %s |\n", key, req, w.typeOf(p), cell(p.Description), cell(example))
	}
	w.b.WriteString("\n")
	for _, ref := range w.queue {
		w.object(ref, w.defs[ref], 3)
	}
}

// list writes the section of a file that is a list: what one item is.
func (w *refWriter) list(name string, s *jsonschema.Schema) {
	sec, ok := sections[name]
	if !ok {
		w.err = fmt.Errorf("no reference section for %s: give it a title and an intro in sections (internal/scenario/reference.go)", name)
		return
	}
	fmt.Fprintf(w.b, "## %s\n\nSchema: [%s.schema.json](%s.schema.json).\n\n%s\n\n", sec.title, name, name, sec.intro)
	w.queue = nil
	fmt.Fprintf(w.b, "Each item: %s.\n\n", w.typeOf(s.Items))
	for _, ref := range w.queue {
		w.object(ref, w.defs[ref], 3)
	}
}

// typeOf names a schema's type for the table, linking the objects it
// refers to (and queueing their sections).
func (w *refWriter) typeOf(s *jsonschema.Schema) string {
	if s == nil {
		return "any"
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok {
		if !w.done[name] {
			w.done[name] = true
			w.queue = append(w.queue, name)
		}
		return fmt.Sprintf("[%s](#%s)", sections[name].title, anchorOf(sections[name].title))
	}
	if len(s.AnyOf) > 0 {
		var parts []string
		for _, a := range s.AnyOf {
			parts = append(parts, w.typeOf(a))
		}
		return strings.Join(parts, " or ")
	}
	if s.Const != nil {
		return "`" + flow(*s.Const) + "`"
	}
	if len(s.Enum) > 0 {
		var values []string
		for _, v := range s.Enum {
			values = append(values, "`"+flow(v)+"`")
		}
		return "one of " + strings.Join(values, ", ")
	}
	switch s.Type {
	case "string":
		switch {
		case s.Pattern == yamlx.Duration().Pattern:
			return "duration (e.g. `10s`, `1m30s`)"
		case s.Format == "regex":
			return "regular expression"
		case s.Pattern != "":
			return "name (`" + s.Pattern + "`)"
		}
		return "string"
	case "integer":
		switch {
		case s.Minimum != nil && s.Maximum != nil:
			return fmt.Sprintf("integer, %g to %g", *s.Minimum, *s.Maximum)
		case s.Minimum != nil:
			return fmt.Sprintf("integer ≥ %g", *s.Minimum)
		}
		return "integer"
	case "number":
		return "number"
	case "boolean":
		return "true or false"
	case "array":
		return "list of " + w.typeOf(s.Items)
	case "object":
		if s.Properties != nil {
			for _, key := range s.PropertyOrder {
				w.typeOf(s.Properties[key])
			}
			return "mapping"
		}
		return "mapping of name → " + w.typeOf(s.AdditionalProperties)
	}
	if s.Not == nil && s.Type == "" {
		return "any value"
	}
	return "?"
}

// anchorOf is the GitHub anchor of a heading.
func anchorOf(title string) string {
	s := strings.ToLower(title)
	s = regexp.MustCompile(`[^a-z0-9 _-]`).ReplaceAllString(s, "")
	return strings.ReplaceAll(s, " ", "-")
}

// cell escapes a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// flow writes a JSON value in YAML's flow style: [a, b], {k: v}, strings
// plain unless YAML would read them otherwise.
func flow(v any) string {
	switch v := v.(type) {
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = flow(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range v {
				if !yield(k) {
					return
				}
			}
		})
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = flow(k) + ": " + flow(v[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case string:
		if plainRE().MatchString(v) && !reservedRE().MatchString(v) {
			return v
		}
		return jsonText(v)
	case nil:
		return "~"
	}
	return jsonText(v)
}

// jsonText is v as JSON, without HTML escaping.
func jsonText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSuffix(buf.String(), "\n")
}

// Compiled on first use: only the reference's pages need them.
var (
	plainRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z0-9_./$(][^:#{}\[\],&*!|>'"%@` + "`" + `]*$`)
	})
	reservedRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?i:true|false|yes|no|on|off|null|~|[-+]?[0-9][0-9_.:e+-]*)$|\s$`)
	})
)
