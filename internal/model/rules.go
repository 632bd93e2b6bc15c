package model

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"text/template"

	"github.com/hosteval/hosteval/internal/yamlx"
)

// Defaults of a [RulesConfig] whose fields are empty.
const (
	// DefaultRulesFallback answers a question that no rule matches.
	DefaultRulesFallback = "I have no rule for this question."
	// DefaultRulesAnswer answers from a result no answer rule covers.
	DefaultRulesAnswer = "{{.Text}}"
	// DefaultRulesErrorAnswer answers from a failed call no answer rule covers.
	DefaultRulesErrorAnswer = "I could not do this: {{.Error}}"
)

// RulesConfig configures a [Rules] model: regular expressions on the
// question choose a tool call, and templates over the result write the
// answer. The seed's Harbour Cycles mock model is:
//
//	rules:
//	  - {match: '\bB-\d{3}\b', call: bikes__get_bike, args: {bike_id: '{{index .Groups 0}}'}}
//	  - {match: '\b(S|M|L)\b', call: bikes__list_available, args: {size: '{{index .Groups 1}}', limit: 3}}
//	fallback: "Please give a bike ID (for example B-101) or a size (S, M or L)."
//	answers:
//	  - {error: true, template: "I could not check this: {{.Error}}"}
//	  - tool: bikes__get_bike
//	    template: "Bike {{.Result.bike_id}} ({{.Result.size}}, {{.Result.kind}}) is {{if .Result.available}}free now{{else}}not free now{{end}}, at {{.Result.dock}}."
//	  - tool: bikes__list_available
//	    template: "Free {{.Result.size}} bikes: {{range $i, $b := .Result.bikes}}{{if $i}}, {{end}}{{$b.bike_id}} at {{$b.dock}}{{else}}none{{end}}."
//
// Every template is a text/template over [TemplateData].
type RulesConfig struct {
	// Name, when set, makes the model's name "rules:<name>".
	Name string `yaml:"name" doc:"Names the model rules:<name> in case IDs and records." example:"bikes"`
	// Rules are tried in order on the latest user message; the first whose
	// Match matches makes the call.
	Rules []Rule `yaml:"rules" doc:"Tried in order on the latest question; the first whose match matches makes its call."`
	// Fallback is the answer (a template) when no rule matches.
	Fallback string `yaml:"fallback" doc:"The answer (a template) when no rule matches." example:"Please give a bike ID (for example B-101)."`
	// Answers are tried in order on the turn's last result; the first that
	// fits writes the answer.
	Answers []AnswerRule `yaml:"answers" doc:"Tried in order on the turn's last result; the first that fits writes the answer."`
	// Answer is the template for a successful result no answer rule covers.
	Answer string `yaml:"answer" doc:"The answer template for a successful result no answer rule covers (default {{.Text}})." example:"'{{.Result.owner}}'"`
}

// Rule maps a question to a tool call.
type Rule struct {
	// Match is a regular expression (RE2 syntax) on the question.
	Match string `yaml:"match" doc:"A regular expression (RE2) on the question; its groups are .Groups in templates." example:"'\\bB-\\d{3}\\b'"`
	// Call is the tool name, used as written (it need not exist).
	Call string `yaml:"call" doc:"The tool to call, as written (it need not exist)." example:"bikes__get_bike"`
	// Args is a mapping of arguments. String values are templates over
	// Question and Groups; other values pass through ("limit: 3" stays 3).
	Args yamlx.Value `yaml:"args" doc:"The arguments: string values are templates over .Question and .Groups, other values pass through." example:"{bike_id: '{{index .Groups 0}}', limit: 3}"`
	// Then, when set, is a second call made after the first call succeeded,
	// with argument templates over its result.
	Then *ThenCall `yaml:"then" doc:"A second call made after the first succeeded, with argument templates over its .Result."`
}

// ThenCall is the second call of a [Rule].
type ThenCall struct {
	Call string      `yaml:"call" doc:"The tool to call." example:"tickets__open_ticket"`
	Args yamlx.Value `yaml:"args" doc:"The arguments: string values are templates over the first call's .Result." example:"{host: '{{.Result.hostname}}'}"`
}

// AnswerRule writes the answer from a result. A rule with Error set covers
// failed calls (results starting with "error:"); one without covers
// successful ones. Tool, when set, limits the rule to results of that tool.
type AnswerRule struct {
	Tool     string `yaml:"tool" doc:"Only results of this tool." example:"bikes__get_bike"`
	Error    bool   `yaml:"error" doc:"The rule covers failed calls (results starting with error:) instead of successful ones." example:"true"`
	Template string `yaml:"template" doc:"The answer, a template over .Result, .Text, .Error, .Tool, .Clipped." example:"'Bike {{.Result.bike_id}} is at {{.Result.dock}}.'"`
}

// TemplateData is what the rules model's templates see. Argument templates
// of a rule's first call see Question and Groups only.
type TemplateData struct {
	// Question is the latest user message.
	Question string
	// Groups are the matching rule's match: Groups 0 is the whole match,
	// Groups 1 the first parenthesised group, and so on.
	Groups []string
	// Tool is the name of the call whose result this is.
	Tool string
	// Result is the result parsed as JSON (numbers as json.Number, so they
	// print as sent), nil when the result is not JSON, e.g. when the host cut
	// it or the call failed.
	Result any
	// Text is the result exactly as the host gave it.
	Text string
	// Error is the failure text after "error:", empty for a success.
	Error string
	// Clipped reports that the host cut the result to its budget.
	Clipped bool
}

// clippedNote matches the note the host appends to a result it cut.
var clippedNote = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`result cut to \d+ (?:bytes|characters) by the host`) })

// Rules is a rule-based model: one call per turn chosen by a regular
// expression on the latest user message (optionally followed by one Then
// call), and an answer written from a template over the last result. It
// decides from the messages alone, so one Rules value can serve many
// conversations at once.
type Rules struct {
	name     string
	rules    []compiledRule
	fallback *template.Template
	answers  []compiledAnswer
	answer   *template.Template
	errorAns *template.Template
}

type compiledRule struct {
	match    *regexp.Regexp
	call     string
	args     *argTemplate
	thenCall string
	thenArgs *argTemplate // nil without then
}

type compiledAnswer struct {
	tool  string
	error bool
	tmpl  *template.Template
}

// NewRules compiles a rules configuration. Errors are [yamlx.Problem]s
// naming the field, e.g. "rules[1].match: error parsing regexp: ...".
func NewRules(cfg RulesConfig) (*Rules, error) {
	return newRules(cfg, "")
}

func newRules(cfg RulesConfig, prefix string) (*Rules, error) {
	m := &Rules{name: "rules"}
	if cfg.Name != "" {
		m.name = "rules:" + cfg.Name
	}
	for i, r := range cfg.Rules {
		p := fmt.Sprintf("%srules[%d]", prefix, i)
		if r.Match == "" {
			return nil, yamlx.Errorf(p+".match", "required")
		}
		re, err := regexp.Compile(r.Match)
		if err != nil {
			return nil, yamlx.At(p+".match", 0, err)
		}
		if strings.TrimSpace(r.Call) == "" {
			return nil, yamlx.Errorf(p+".call", "required")
		}
		args, err := compileArgs(r.Args, p+".args")
		if err != nil {
			return nil, err
		}
		cr := compiledRule{match: re, call: r.Call, args: args}
		if r.Then != nil {
			if strings.TrimSpace(r.Then.Call) == "" {
				return nil, yamlx.Errorf(p+".then.call", "required")
			}
			cr.thenCall = r.Then.Call
			if cr.thenArgs, err = compileArgs(r.Then.Args, p+".then.args"); err != nil {
				return nil, err
			}
		}
		m.rules = append(m.rules, cr)
	}
	var err error
	if m.fallback, err = parseOr(prefix+"fallback", cfg.Fallback, DefaultRulesFallback); err != nil {
		return nil, err
	}
	if m.answer, err = parseOr(prefix+"answer", cfg.Answer, DefaultRulesAnswer); err != nil {
		return nil, err
	}
	m.errorAns = template.Must(newTemplate("default error answer", DefaultRulesErrorAnswer))
	for i, a := range cfg.Answers {
		p := fmt.Sprintf("%sanswers[%d].template", prefix, i)
		if a.Template == "" {
			return nil, yamlx.Errorf(p, "required")
		}
		t, err := newTemplate(p, a.Template)
		if err != nil {
			return nil, yamlx.At(p, 0, err)
		}
		m.answers = append(m.answers, compiledAnswer{tool: a.Tool, error: a.Error, tmpl: t})
	}
	return m, nil
}

func parseOr(path, text, def string) (*template.Template, error) {
	if text == "" {
		text = def
	}
	t, err := newTemplate(path, text)
	if err != nil {
		return nil, yamlx.At(path, 0, err)
	}
	return t, nil
}

// Name implements [Model]: "rules", or "rules:<name>".
func (m *Rules) Name() string { return m.name }

// Next implements [Model]. Without a result in the current turn it makes the
// first matching rule's call (or answers with the fallback); after a result
// it makes the rule's Then call if there is one and the first call
// succeeded, and otherwise answers. A template that fails becomes the answer
// "rules model: <error>", so a bad template fails an expectation rather
// than the run.
func (m *Rules) Next(ctx context.Context, req Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	turn := req.Messages
	question := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == RoleUser {
			question = req.Messages[i].Content
			turn = req.Messages[i+1:]
			break
		}
	}
	data := TemplateData{Question: question}
	var rule *compiledRule
	for i := range m.rules {
		if g := m.rules[i].match.FindStringSubmatch(question); g != nil {
			rule, data.Groups = &m.rules[i], g
			break
		}
	}

	results := toolResults(req.Messages, turn)
	switch {
	case len(results) == 0 && rule == nil:
		return answerFrom(m.fallback, data), nil
	case len(results) == 0:
		return m.call(req.Messages, rule.call, rule.args, data), nil
	}
	last := results[len(results)-1]
	data.Tool, data.Text = last.tool, last.text
	var failed bool
	data.Result, data.Error, failed, data.Clipped = parseResult(last.text)
	if rule != nil && rule.thenArgs != nil && len(results) == 1 && !failed {
		return m.call(req.Messages, rule.thenCall, rule.thenArgs, data), nil
	}
	return answerFrom(m.pickAnswer(data, failed), data), nil
}

func (m *Rules) call(msgs []Message, name string, args *argTemplate, data TemplateData) Response {
	text, err := args.render(data)
	if err != nil {
		return Response{Text: "rules model: " + err.Error()}
	}
	return Response{ToolCalls: []ToolCall{{ID: nextCallID(msgs), Name: name, Arguments: text}}}
}

func (m *Rules) pickAnswer(d TemplateData, failed bool) *template.Template {
	for _, a := range m.answers {
		if a.error == failed && (a.tool == "" || a.tool == d.Tool) {
			return a.tmpl
		}
	}
	if failed {
		return m.errorAns
	}
	return m.answer
}

func answerFrom(t *template.Template, data TemplateData) Response {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return Response{Text: "rules model: " + err.Error()}
	}
	return Response{Text: b.String()}
}

type toolResult struct{ tool, text string }

// toolResults returns the tool messages of the current turn, each with the
// name of the call it answers (looked up by ToolCallID in the whole
// conversation, since the host need not set Message.Name).
func toolResults(all, turn []Message) []toolResult {
	var out []toolResult
	for _, msg := range turn {
		if msg.Role != RoleTool {
			continue
		}
		name := msg.Name
		if name == "" {
			name = callName(all, msg.ToolCallID)
		}
		out = append(out, toolResult{tool: name, text: msg.Content})
	}
	return out
}

func callName(msgs []Message, id string) string {
	for _, msg := range msgs {
		for _, c := range msg.ToolCalls {
			if c.ID == id {
				return c.Name
			}
		}
	}
	return ""
}

// nextCallID continues call_1, call_2, ... from the calls already in the
// conversation, so a stateless model's IDs are unique within it.
func nextCallID(msgs []Message) string {
	return fmt.Sprintf("call_%d", callCount(msgs)+1)
}

// parseResult reads a tool message the way the host writes it: "error: ..."
// for a failure, JSON for a structured result, any other text otherwise
// (including JSON the host cut, which is no longer JSON).
func parseResult(text string) (result any, errText string, failed, clipped bool) {
	clipped = clippedNote().MatchString(text)
	if rest, ok := strings.CutPrefix(text, "error:"); ok {
		return nil, strings.TrimSpace(rest), true, clipped
	}
	if !json.Valid([]byte(text)) {
		return nil, "", false, clipped
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&result); err != nil {
		return nil, "", false, clipped
	}
	return result, "", false, clipped
}
