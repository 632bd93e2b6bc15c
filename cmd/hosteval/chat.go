package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
	"github.com/hosteval/hosteval/internal/yamlx"
)

var chatCommand = command{
	name:        "chat",
	summary:     "talk to a model through the host, or call tools by hand",
	usage:       chatUsage,
	onInterrupt: cancelContext,
	run:         runChat,
}

const chatUsage = `usage: hosteval chat [flags]

Starts the servers, hands their tools to a model, runs the calls it asks
for, and asks you (never the model) when a server needs a decision. With no
model configured it is a manual panel: type "server__tool {json}" and the
host runs it with the same checks. It starts by listing the tools by the
names to type; /tools lists them again with their arguments, /help says
what you can type, and /quit, the end of input or Ctrl-C ends the session.
The conversation and the host's steps go to stdout; the host's events and
the servers' logs (JSON lines) go to stderr, or to -log FILE.

The model comes from -model, -script or -rules; "-model openai:NAME" talks
to OPENAI_BASE_URL with OPENAI_API_KEY (HOSTEVAL_MODEL names a default).
` + "`hosteval lab`" + ` is the same session as a web page.

examples:
  hosteval chat -servers cmdb,tickets
  hosteval chat -servers cmdb,tickets -model openai:gpt-oss-120b -log host.log
  hosteval chat -servers cmdb,tickets -script script.yaml \
      -ask "who owns jump-prod-02? Open a ticket for it" \
      -approve tickets__open_ticket -answer 'accept {"priority":"P1"}'
  hosteval chat -servers support -tools support__search_knowledge \
    -wire wire.jsonl`

// sessionFlags are the flags of a session with the host that a person
// takes part in, chat's and lab's: the servers and how the host runs them,
// the model, the system prompt, and where the logs go.
type sessionFlags struct {
	host                 hostFlags
	model, script, rules string
	system               string
	wire, log            string
}

func (f *sessionFlags) register(fs *flag.FlagSet) {
	f.host.register(fs)
	fs.StringVar(&f.model, "model", "", "model: openai:NAME (default $HOSTEVAL_MODEL when OPENAI_BASE_URL is set)")
	fs.StringVar(&f.script, "script", "", "a scripted model: a YAML file with a list of steps")
	fs.StringVar(&f.rules, "rules", "", "a rules model: a YAML file")
	fs.StringVar(&f.system, "system", defaultSystem, "system prompt")
	fs.StringVar(&f.wire, "wire", "", "write every JSON-RPC message and server stderr line to this file (JSON lines)")
	fs.StringVar(&f.log, "log", "", "write the host's events and the servers' logs to this file (JSON lines) instead of stderr")
}

// newModel builds the session's model from the flags; nil means none (the
// manual panel).
func (f *sessionFlags) newModel(e *env) (model.Model, error) {
	m, err := chatModel(e, f.model, f.script, f.rules)
	if err != nil {
		return nil, usageError{err}
	}
	return m, nil
}

// openLogs points the host's logs at -log (or stderr) and its wire trace
// at -wire. The returned func closes the files.
func (f *sessionFlags) openLogs(e *env, opts *host.Options) (func(), error) {
	var files []*os.File
	closeAll := func() {
		for _, file := range files {
			file.Close()
		}
	}
	opts.Log, opts.ServerLog = e.stderr, e.stderr
	for _, out := range []struct {
		flag, path string
		set        func(io.Writer)
	}{
		{"log", f.log, func(w io.Writer) { opts.Log, opts.ServerLog = w, w }},
		{"wire", f.wire, func(w io.Writer) { opts.Wire = w }},
	} {
		if out.path == "" {
			continue
		}
		file, err := os.Create(out.path)
		if err != nil {
			closeAll()
			return nil, usagef("-%s: %w", out.flag, err)
		}
		files = append(files, file)
		out.set(file)
	}
	return closeAll, nil
}

func runChat(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "chat", chatUsage)
	var sf sessionFlags
	sf.register(fs)
	ask := fs.String("ask", "", "ask one question and exit")
	answer := fs.String("answer", "", `answer every form without prompting: "accept {json}", "decline" or "cancel"`)
	approve := fs.String("approve", "", `comma-separated tools you approve without prompting ("*" for all); others are put to you, or denied with -ask`)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	opts, err := sf.host.options(e)
	if err != nil {
		return err
	}
	m, err := sf.newModel(e)
	if err != nil {
		return err
	}

	// One reader owns stdin: the prompt and the Terminal person take lines
	// from it in turn, and a withdrawn form takes none. The person's lines
	// end when the session is interrupted, also while a prompt waits.
	in := host.NewLines(newContextReader(ctx, e.stdin))
	term := host.NewTerminal(in, e.stdout)
	opts.Elicitor, opts.Approver = host.Elicitor(term), host.Approver(term)
	if *answer != "" {
		el, err := parseAnswer(*answer)
		if err != nil {
			return usagef("-answer: %w", err)
		}
		opts.Elicitor = el
	}
	if *approve != "" || *ask != "" {
		// A one-shot question has nobody at the terminal to approve: what
		// -approve does not list is denied.
		opts.Approver = host.CannedApprovals{Tools: splitList(*approve)}
	}
	if *ask != "" && *answer == "" {
		opts.Elicitor = host.DeclineAll{}
	}
	closeLogs, err := sf.openLogs(e, &opts)
	if err != nil {
		return err
	}
	defer closeLogs()
	opts.Steps = func(s host.Step) { printStep(e.stdout, s) }
	if m != nil {
		// The model reads a failed call's text; the person reads what
		// became of it. (The manual panel says it after each call.)
		opts.Calls = func(ev record.Call) {
			if ev.Outcome != record.OutcomeOK {
				fmt.Fprintf(e.stdout, "[host] %s\n", host.Explain(ev))
			}
		}
	}

	// OAuth servers sign in here, before the host starts.
	if err := sf.host.login(ctx); err != nil {
		return err
	}
	h, err := host.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer h.Close()
	for _, s := range h.Servers() {
		if s.Error != "" {
			fmt.Fprintf(e.stdout, "[host] server %s is not available: %s\n", s.Name, s.Error)
		}
	}
	if unknown := h.UnknownNames(); len(unknown) > 0 {
		fmt.Fprintf(e.stdout, "[host] -tools names tools no server offers: %s\n", strings.Join(unknown, ", "))
	}
	p := &prompt{e: e, h: h, in: in, manual: m == nil}
	if *ask == "" {
		p.listTools(false)
		fmt.Fprintln(e.stdout, p.hint())
	}
	if m == nil {
		err = p.manualPanel(ctx, *ask)
	} else {
		err = p.converse(ctx, h.NewConversation(m, sf.system), *ask)
	}
	// A session that went on without a server still says so in its exit code.
	return errors.Join(err, serverErrors(h))
}

// prompt is the person's side of a terminal session: the lines they type,
// and what the session prints for them.
type prompt struct {
	e      *env
	h      *host.Host
	in     *host.Lines
	manual bool
	// trace is the manual panel's trace: its calls and the tool changes
	// it saw.
	trace string
}

// next reads the person's next line at label, handling the session's own
// commands. It returns "" and done at the end of the session (/quit, the end
// of the input, an interrupt, with the interrupt's error).
func (p *prompt) next(ctx context.Context, label string) (line string, done bool, err error) {
	for {
		fmt.Fprintf(p.e.stdout, "\n%s> ", label)
		text, readErr := p.in.Next(ctx)
		if ctx.Err() != nil {
			return "", true, context.Cause(ctx)
		}
		text = strings.TrimSpace(text)
		switch text {
		case "":
			if readErr != nil {
				fmt.Fprintln(p.e.stdout)
				return "", true, nil
			}
			continue // an empty line is nothing typed, not the end
		case "/quit", "/exit":
			fmt.Fprintln(p.e.stdout)
			return "", true, nil
		case "/help", "/?":
			fmt.Fprintln(p.e.stdout, p.help())
		case "/tools":
			p.refresh(ctx)
			p.listTools(true)
		default:
			if strings.HasPrefix(text, "/") {
				fmt.Fprintf(p.e.stdout, "%s is not a command here. %s\n", strings.Fields(text)[0], p.hint())
				continue
			}
			// A last line without a newline is still taken; the next read
			// ends the session.
			return text, false, nil
		}
		if readErr != nil {
			return "", true, nil
		}
	}
}

func (p *prompt) hint() string {
	if p.manual {
		return "No model is configured: type a call as `server__tool {json}`. /tools lists the tools and their arguments, /help the commands, /quit ends."
	}
	return "Ask a question. /tools lists the tools the model is offered, /help the commands, /quit ends."
}

func (p *prompt) help() string {
	var b strings.Builder
	if p.manual {
		b.WriteString("Type a tool call: its name as listed by /tools, then its arguments as a JSON\n" +
			"object or a YAML flow mapping, e.g. cmdb__get_asset {\"hostname\": \"jump-prod-02\"}.\n" +
			"The host checks it as it checks a model's call: tools that are not read-only\n" +
			"ask you first, and a server's questions come to you.\n")
	} else {
		b.WriteString("Type a question: the model answers, calling tools through the host. Tools\n" +
			"that are not read-only ask you first, and a server's questions come to you;\n" +
			"anything but y is no.\n")
	}
	b.WriteString("  /tools   the tools, by the names the model uses (server__tool), with their arguments\n")
	b.WriteString("  /help    this help\n")
	b.WriteString("  /quit    end the session (also the end of input, or Ctrl-C)")
	return b.String()
}

// listTools prints the offered tools by the names to type; full adds each
// tool's argument template.
func (p *prompt) listTools(full bool) {
	tools := p.h.Offered()
	if len(tools) == 0 {
		fmt.Fprintln(p.e.stdout, "[host] no tools are offered")
		return
	}
	width := 0
	for _, t := range tools {
		width = max(width, len(t.Name))
	}
	fmt.Fprintf(p.e.stdout, "%s:\n", text.Count(len(tools), "tool"))
	for _, t := range tools {
		desc, _, _ := strings.Cut(strings.TrimSpace(t.MCP.Description), "\n")
		if !t.AutoRun {
			desc = "(asks you first) " + desc
		}
		fmt.Fprintf(p.e.stdout, "  %-*s  %s\n", width, t.Name, text.Shorten(desc, 80))
		if full || p.manual {
			fmt.Fprintf(p.e.stdout, "  %-*s    %s\n", width, "", argTemplate(t))
		}
	}
}

// argTemplate is a call of tool to copy and fill in: its required
// arguments with a placeholder of their type (an enum's first choice), and
// the names of the optional ones.
func argTemplate(t *host.Tool) string {
	props, required := inputFields(t)
	var args, optional []string
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if !required[name] {
			optional = append(optional, name)
			continue
		}
		spec, _ := props[name].(map[string]any)
		key, _ := json.Marshal(name)
		args = append(args, string(key)+": "+placeholder(spec))
	}
	out := t.Name + " {" + strings.Join(args, ", ") + "}"
	if len(optional) > 0 {
		out += "   optional: " + strings.Join(optional, ", ")
	}
	return out
}

// inputFields returns the properties of a tool's input schema and which
// of them are required.
func inputFields(t *host.Tool) (props map[string]any, required map[string]bool) {
	schema, _ := t.MCP.InputSchema.(map[string]any)
	if schema == nil {
		if data, err := json.Marshal(t.MCP.InputSchema); err == nil {
			json.Unmarshal(data, &schema)
		}
	}
	props, _ = schema["properties"].(map[string]any)
	required = map[string]bool{}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	return props, required
}

func placeholder(spec map[string]any) string {
	if c := host.Choices(spec); len(c) > 0 && spec["type"] != "array" {
		v, _ := json.Marshal(c[0].Value)
		return string(v)
	}
	switch spec["type"] {
	case "integer", "number":
		return "0"
	case "boolean":
		return "false"
	case "array":
		return "[]"
	case "object":
		return "{}"
	}
	return `"..."`
}

// converse asks ask, or else the person's questions until they stop.
func (p *prompt) converse(ctx context.Context, conv *host.Conversation, ask string) error {
	if ask != "" {
		res, err := conv.Ask(ctx, ask)
		if err != nil {
			return err
		}
		fmt.Fprintf(p.e.stdout, "\nassistant> %s\n", answerText(res))
		return nil
	}
	for {
		q, done, err := p.next(ctx, "you")
		if done {
			return err
		}
		res, err := conv.Ask(ctx, q)
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err != nil {
			// The endpoint failed for good on this question; the person
			// may try again, or quit.
			fmt.Fprintf(p.e.stdout, "\n[host] the model did not answer: %v. Ask again, or /quit.\n", err)
			continue
		}
		fmt.Fprintf(p.e.stdout, "\nassistant> %s\n", answerText(res))
	}
}

// answerText is a turn's answer as the person reads it: one the endpoint
// cut short says so.
func answerText(res host.TurnResult) string {
	if res.Truncated == "" {
		return res.Answer
	}
	return fmt.Sprintf("%s\n[host] the answer was cut short (finish_reason %s): it is not a whole answer.", res.Answer, res.Truncated)
}

// defaultSystem is the seed's system prompt.
const defaultSystem = "You are an assistant for a security operations team. Use the tools to look things up; " +
	"never guess a hostname, owner or ticket id. Say plainly when a tool returns an error, " +
	"and never claim a ticket was opened unless the tool returned its id."

// manualPanel lets the person call tools directly, with the host's checks.
func (p *prompt) manualPanel(ctx context.Context, ask string) error {
	step := 0
	p.trace = host.NewID()
	trace := p.trace
	do := func(line string) {
		call, err := model.ParseCall(line)
		if err != nil {
			fmt.Fprintf(p.e.stdout, "That is not a call: %v. Type `server__tool {json}`, or /help.\n", err)
			return
		}
		if t := p.tool(call.Name); t != nil && call.Arguments == "{}" && hasRequired(t) && !strings.Contains(line, "{") {
			fmt.Fprintf(p.e.stdout, "%s needs arguments, e.g.\n  %s\n", t.Name, argTemplate(t))
			return
		}
		step++
		p.refresh(ctx)
		text, ev := p.h.Call(ctx, host.CallRequest{Name: call.Name, Arguments: call.Arguments, TraceID: trace, Step: step})
		sentence := host.Explain(ev)
		switch ev.Outcome {
		case record.OutcomeUnknownTool:
			sentence += " /tools lists the names."
		case record.OutcomeBadArguments:
			if t := p.tool(ev.Name); t != nil {
				sentence += " For example:\n  " + argTemplate(t)
			}
		}
		fmt.Fprintf(p.e.stdout, "[host] %s\n", sentence)
		if ev.Outcome == record.OutcomeOK {
			fmt.Fprintln(p.e.stdout, readable(text))
		}
	}
	if ask != "" {
		do(ask)
		return nil
	}
	for {
		line, done, err := p.next(ctx, "call")
		if done {
			return err
		}
		do(line)
	}
}

// refresh makes a manual panel follow the servers' tools: a server that
// said they changed is listed again, and the person told what changed.
// (With a model, each model request does it, and the steps say so.)
func (p *prompt) refresh(ctx context.Context) {
	if !p.manual {
		return
	}
	for _, c := range p.h.Refresh(ctx, p.trace) {
		var parts []string
		for _, x := range []struct {
			what  string
			names []string
		}{{"added", c.Added}, {"removed", c.Removed}, {"changed", c.Changed}} {
			if len(x.names) > 0 {
				parts = append(parts, x.what+" "+strings.Join(x.names, ", "))
			}
		}
		fmt.Fprintf(p.e.stdout, "[host] the tools of %s changed: %s. /tools lists them.\n", c.Server, strings.Join(parts, "; "))
	}
}

// tool returns the offered tool of that name, or nil.
func (p *prompt) tool(name string) *host.Tool {
	for _, t := range p.h.Offered() {
		if t.Name == name {
			return t
		}
	}
	return nil
}

func hasRequired(t *host.Tool) bool {
	_, required := inputFields(t)
	return len(required) > 0
}

// readable returns a result as a person reads it: JSON indented, other
// text as it is.
func readable(text string) string {
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(text), "", "  ") == nil {
		return buf.String()
	}
	return text
}

// printStep prints a step the way the seed's host does:
// [who] text {"key": value}.
func printStep(w io.Writer, s host.Step) {
	if len(s.Data) == 0 {
		fmt.Fprintf(w, "[%s] %s\n", s.Who, s.Text)
		return
	}
	data, _ := json.Marshal(s.Data)
	fmt.Fprintf(w, "[%s] %s %s\n", s.Who, s.Text, data)
}

// parseAnswer parses -answer: "accept {json}", "decline" or "cancel".
func parseAnswer(s string) (host.Elicitor, error) {
	action, rest, _ := strings.Cut(strings.TrimSpace(s), " ")
	switch action {
	case host.ActionDecline, host.ActionCancel:
		if strings.TrimSpace(rest) != "" {
			return nil, fmt.Errorf("%s takes no content", action)
		}
		return host.Canned{Answers: []host.CannedAnswer{{Action: action}}}, nil
	case host.ActionAccept:
		var content map[string]any
		if strings.TrimSpace(rest) != "" {
			if err := json.Unmarshal([]byte(rest), &content); err != nil {
				return nil, fmt.Errorf("accept takes a JSON object: %w", err)
			}
		}
		return host.Canned{Answers: []host.CannedAnswer{{Action: action, Content: content}}}, nil
	}
	return nil, fmt.Errorf("want accept {json}, decline or cancel, not %q", action)
}

// chatModel picks the chat's model from the flags; nil means none (the
// manual panel).
func chatModel(e *env, modelFlag, script, rules string) (model.Model, error) {
	var cfg model.Config
	set := 0
	if script != "" {
		set++
		if err := decodeModelFile(script, &cfg.Scripted, "scripted"); err != nil {
			return nil, fmt.Errorf("-script: %w", err)
		}
	}
	if rules != "" {
		set++
		cfg.Rules = new(model.RulesConfig)
		if err := decodeModelFile(rules, cfg.Rules, "rules"); err != nil {
			return nil, fmt.Errorf("-rules: %w", err)
		}
	}
	if modelFlag == "" && set == 0 && e.getenv(model.EnvBaseURL) != "" && e.getenv(model.EnvModel) != "" {
		modelFlag = "openai:" + e.getenv(model.EnvModel)
	}
	if modelFlag != "" {
		set++
		spec, err := parseModelFlag(modelFlag, e.getenv)
		if err != nil {
			return nil, fmt.Errorf("-model: %w", err)
		}
		cfg.OpenAI = spec.OpenAI
	}
	switch set {
	case 0:
		return nil, nil
	case 1:
		return model.New(cfg)
	}
	return nil, errors.New("give only one of -model, -script and -rules")
}

// decodeModelFile reads a script or rules file with the strict reader and
// checks it as a model of that kind would, so that every problem comes
// with its file, line and path. kind is the key model.New names the file's
// value by in its errors (scripted, rules), which is the file's top here.
func decodeModelFile(path string, v any, kind string) error {
	return yamlx.DecodeFile(path, v, func(root *yamlx.Node) {
		var cfg model.Config
		switch v := v.(type) {
		case *[]model.ScriptStep:
			cfg.Scripted = *v
			if cfg.Scripted == nil {
				cfg.Scripted = []model.ScriptStep{}
			}
		case *model.RulesConfig:
			cfg.Rules = v
		}
		if _, err := model.New(cfg); err != nil {
			if p, ok := err.(yamlx.Problem); ok {
				p.Path = strings.TrimPrefix(strings.TrimPrefix(p.Path, kind), ".")
				err = p
			}
			root.Locate(err)
		}
	})
}
