package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/scenario"
)

var chatCommand = command{
	name:    "chat",
	summary: "talk to a model through the host, or call tools by hand",
	usage:   chatUsage,
	run:     runChat,
}

const chatUsage = `usage: hosteval chat [flags]

Starts the servers, hands their tools to a model, runs the calls it asks
for, and asks you (never the model) when a server needs a decision. With no
model configured it is a manual panel: type "tool_name {json}" and the host
runs it with the same checks. /quit, an empty line or the end of input ends
the session. Step lines go to stdout; JSON logs (host events and the
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

// hostFlags are the flags chat, tools and catalog share: which servers, and
// how the host runs.
type hostFlags struct {
	serversFile    string
	servers        string
	protocol       string
	tools          string
	toolTimeout    time.Duration
	maxResultBytes int
	maxSteps       int
	noElicitation  bool
}

func (f *hostFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.serversFile, "servers-file", "scenarios/servers.yaml", "the servers file")
	fs.StringVar(&f.servers, "servers", "", "comma-separated servers from the servers file (default: all)")
	fs.StringVar(&f.protocol, "protocol", "auto", "protocol mode: auto, legacy or 2026-07-28")
	fs.StringVar(&f.tools, "tools", "", "comma-separated allow-list of namespaced tools offered to the model")
	fs.DurationVar(&f.toolTimeout, "tool-timeout", 10*time.Second, "how long to wait for each round of a tool call")
	fs.IntVar(&f.maxResultBytes, "max-result-bytes", 4000, "result budget in bytes (-1: none)")
	fs.IntVar(&f.maxSteps, "max-steps", 8, "model requests per turn at most")
	fs.BoolVar(&f.noElicitation, "no-elicitation", false, "declare no elicitation capability")
}

// options builds host options from the flags, with the servers of the
// servers file that -servers names; usage problems name the flag.
func (f *hostFlags) options() (host.Options, error) {
	opts, err := f.optionsWithoutServers()
	if err != nil {
		return host.Options{}, err
	}
	if opts.Servers, err = scenario.LoadServers(f.serversFile, splitList(f.servers)...); err != nil {
		return host.Options{}, err
	}
	return opts, nil
}

// optionsWithoutServers builds host options from the flags but the servers,
// leaving the servers file unread.
func (f *hostFlags) optionsWithoutServers() (host.Options, error) {
	mode, err := host.ParseMode(f.protocol)
	if err != nil {
		return host.Options{}, fmt.Errorf("-protocol: %w", err)
	}
	return host.Options{
		Protocol: mode, ToolTimeout: f.toolTimeout, MaxResultBytes: f.maxResultBytes,
		MaxSteps: f.maxSteps, Allow: splitList(f.tools), NoElicitation: f.noElicitation,
	}, nil
}

func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runChat(ctx context.Context, e *env, args []string) int {
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
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		return usageErr(e, "chat: unexpected argument %q", fs.Arg(0))
	}
	opts, err := hf.options()
	if err != nil {
		return usageErr(e, "chat: %v", err)
	}
	m, err := chatModel(e, *modelFlag, *script, *rules)
	if err != nil {
		return usageErr(e, "chat: %v", err)
	}

	// One reader owns stdin: the prompt and the Terminal person take lines
	// from it in turn, and a withdrawn form takes none.
	in := host.NewLines(e.stdin)
	term := host.NewTerminal(in, e.stdout)
	opts.Elicitor, opts.Approver = host.Elicitor(term), host.Approver(term)
	if *answer != "" {
		el, err := parseAnswer(*answer)
		if err != nil {
			return usageErr(e, "chat: -answer: %v", err)
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
			return usageErr(e, "chat: -wire: %v", err)
		}
		defer f.Close()
		opts.Wire = f
	}

	h, err := host.Start(ctx, opts)
	if err != nil {
		fmt.Fprintf(e.stderr, "hosteval: chat: %v\n", err)
		return exitInfra
	}
	defer h.Close()
	code := exitOK
	for _, s := range h.Servers() {
		if s.Error != "" {
			fmt.Fprintf(e.stdout, "[host] server %s is not available: %s\n", s.Name, s.Error)
			code = exitInfra
		}
	}
	if unknown := h.UnknownNames(); len(unknown) > 0 {
		fmt.Fprintf(e.stdout, "[host] -tools names tools no server offers: %s\n", strings.Join(unknown, ", "))
	}

	if m == nil {
		if err := manualPanel(ctx, e, h, in, *ask); err != nil {
			fmt.Fprintf(e.stderr, "hosteval: chat: %v\n", err)
			return exitInfra
		}
		return code
	}
	conv := h.NewConversation(m, *system)
	turn := func(q string) error {
		res, err := conv.Ask(ctx, q)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "\nassistant> %s\n", res.Answer)
		return nil
	}
	if *ask != "" {
		if err := turn(*ask); err != nil {
			fmt.Fprintf(e.stderr, "hosteval: chat: %v\n", err)
			return exitInfra
		}
		return code
	}
	for {
		fmt.Fprint(e.stdout, "\nyou> ")
		line, readErr := in.Next(ctx)
		q := strings.TrimSpace(line)
		if q == "" || q == "/quit" || q == "/exit" {
			fmt.Fprintln(e.stdout)
			return code
		}
		if err := turn(q); err != nil {
			fmt.Fprintf(e.stderr, "hosteval: chat: %v\n", err)
			return exitInfra
		}
		// A last question without a newline is still asked.
		if readErr != nil {
			return code
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
		if err := decodeYAMLFile(script, &cfg.Scripted); err != nil {
			return nil, fmt.Errorf("-script: %w", err)
		}
	}
	if rules != "" {
		set++
		cfg.Rules = new(model.RulesConfig)
		if err := decodeYAMLFile(rules, cfg.Rules); err != nil {
			return nil, fmt.Errorf("-rules: %w", err)
		}
	}
	if modelFlag == "" && set == 0 && e.getenv(model.EnvBaseURL) != "" && e.getenv(model.EnvModel) != "" {
		modelFlag = "openai:" + e.getenv(model.EnvModel)
	}
	if modelFlag != "" {
		set++
		name, ok := strings.CutPrefix(modelFlag, "openai:")
		if !ok {
			return nil, fmt.Errorf("-model: want openai:NAME, not %q", modelFlag)
		}
		oc := model.OpenAIConfig{Model: name}.WithEnv(e.getenv)
		cfg.OpenAI = &oc
	}
	switch set {
	case 0:
		return nil, nil
	case 1:
		return model.New(cfg)
	}
	return nil, errors.New("give only one of -model, -script and -rules")
}

// decodeYAMLFile decodes a YAML file strictly into v.
func decodeYAMLFile(path string, v any) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
