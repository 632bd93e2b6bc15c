package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
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
model configured it is a manual panel: type "tool_name {json}" and the host
runs it with the same checks. /quit, an empty line, the end of input or
Ctrl-C ends the session. Step lines go to stdout; JSON logs (host events and the
servers' stderr) go to stderr.

The model comes from -model, -script or -rules; "-model openai:NAME" talks
to OPENAI_BASE_URL with OPENAI_API_KEY (HOSTEVAL_MODEL names a default).

examples:
  hosteval chat -servers cmdb,tickets
  hosteval chat -servers cmdb,tickets -model openai:gpt-oss-120b
  hosteval chat -servers cmdb,tickets -script script.yaml \
      -ask "who owns jump-prod-02? Open a ticket for it" \
      -approve tickets__open_ticket -answer 'accept {"priority":"P1"}'
  hosteval chat -servers support -tools support__search_knowledge -wire wire.jsonl`

func runChat(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "chat", chatUsage)
	var hf hostFlags
	hf.register(fs)
	ask := fs.String("ask", "", "ask one question and exit")
	answer := fs.String("answer", "", `answer every form without prompting: "accept {json}", "decline" or "cancel"`)
	approve := fs.String("approve", "", `comma-separated tools you approve without prompting ("*" for all); others are put to you, or denied with -ask`)
	modelFlag := fs.String("model", "", "model: openai:NAME (default $HOSTEVAL_MODEL when OPENAI_BASE_URL is set)")
	script := fs.String("script", "", "a scripted model: a YAML file with a list of steps")
	rules := fs.String("rules", "", "a rules model: a YAML file")
	system := fs.String("system", defaultSystem, "system prompt")
	wire := fs.String("wire", "", "write every JSON-RPC message and server stderr line to this file (JSON lines)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	opts, err := hf.options(e)
	if err != nil {
		return err
	}
	m, err := chatModel(e, *modelFlag, *script, *rules)
	if err != nil {
		return usageError{err}
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
	opts.Log, opts.ServerLog = e.stderr, e.stderr
	opts.Steps = func(s host.Step) { printStep(e.stdout, s) }
	if *wire != "" {
		f, err := os.Create(*wire)
		if err != nil {
			return usagef("-wire: %w", err)
		}
		defer f.Close()
		opts.Wire = f
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
	if m == nil {
		err = manualPanel(ctx, e, h, in, *ask)
	} else {
		err = converse(ctx, e, h.NewConversation(m, *system), in, *ask)
	}
	// A session that went on without a server still says so in its exit code.
	return errors.Join(err, serverErrors(h))
}

// converse asks ask, or else the person's questions until they stop.
func converse(ctx context.Context, e *env, conv *host.Conversation, in *host.Lines, ask string) error {
	turn := func(q string) error {
		res, err := conv.Ask(ctx, q)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "\nassistant> %s\n", res.Answer)
		return nil
	}
	if ask != "" {
		return turn(ask)
	}
	for {
		fmt.Fprint(e.stdout, "\nyou> ")
		line, readErr := in.Next(ctx)
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		q := strings.TrimSpace(line)
		if q == "" || q == "/quit" || q == "/exit" {
			fmt.Fprintln(e.stdout)
			return nil
		}
		if err := turn(q); err != nil {
			return err
		}
		// A last question without a newline is still asked.
		if readErr != nil {
			return nil
		}
	}
}

// defaultSystem is the seed's system prompt.
const defaultSystem = "You are an assistant for a security operations team. Use the tools to look things up; " +
	"never guess a hostname, owner or ticket id. Say plainly when a tool returns an error, " +
	"and never claim a ticket was opened unless the tool returned its id."

// manualPanel lets the person call tools directly, with the host's checks.
func manualPanel(ctx context.Context, e *env, h *host.Host, in *host.Lines, ask string) error {
	fmt.Fprintln(e.stdout, "[host] no model configured: type a tool call as `tool_name {json}`; /quit ends")
	step := 0
	trace := host.NewID()
	do := func(line string) {
		call, err := model.ParseCall(line)
		if err != nil {
			fmt.Fprintf(e.stdout, "[host] %v\n", err)
			return
		}
		step++
		text, ev := h.Call(ctx, host.CallRequest{Name: call.Name, Arguments: call.Arguments, TraceID: trace, Step: step})
		ev.Arguments, ev.Result = nil, ""
		data, _ := json.Marshal(ev)
		fmt.Fprintf(e.stdout, "[event] %s\n%s\n", data, text)
	}
	if ask != "" {
		do(ask)
		return nil
	}
	for {
		fmt.Fprint(e.stdout, "\ncall> ")
		line, err := in.Next(ctx)
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		line = strings.TrimSpace(line)
		if line == "" || line == "/quit" || line == "/exit" {
			fmt.Fprintln(e.stdout)
			return nil
		}
		do(line)
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
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
