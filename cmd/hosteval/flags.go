package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/scenario"
	"github.com/hosteval/hosteval/internal/shellwords"
)

// budgetFlags are the host's time budgets, one flag each, on every command
// that starts servers (run, tools, catalog, chat, conformance-client). A
// flag left at zero keeps the budget of the scenario, the servers file or
// the host's default, in that order.
type budgetFlags struct {
	connect, discover, initialize, tool, person time.Duration
	// maxTool and progressExtends: a server's progress may extend a round
	// up to maxTool.
	maxTool         time.Duration
	progressExtends bool
}

func (b *budgetFlags) register(fs *flag.FlagSet) {
	d := host.Options{}.Effective()
	def := func(v time.Duration, zero string) string {
		if v == 0 {
			return " (default: " + zero + ")"
		}
		return fmt.Sprintf(" (default %v)", v)
	}
	fs.DurationVar(&b.connect, "connect-timeout", 0, "how long one server may take to start and connect"+def(d.ConnectTimeout, "the host's"))
	fs.DurationVar(&b.discover, "discover-timeout", 0, "how long auto mode waits for server/discover before it tries 2025-11-25"+def(d.DiscoverTimeout, "the host's"))
	fs.DurationVar(&b.initialize, "initialize-timeout", 0, "how long the 2025-11-25 initialize handshake may take"+def(d.InitializeTimeout, "the host's"))
	fs.DurationVar(&b.tool, "tool-timeout", 0, "how long to wait for each round of a tool call"+def(d.ToolTimeout, "the host's"))
	fs.DurationVar(&b.person, "person-timeout", 0, "how long to wait for the person to approve or answer; then the answer is no"+def(d.PersonTimeout, "no limit"))
	fs.BoolVar(&b.progressExtends, "progress-extends", false, "let a server's progress give a round of a tool call the tool timeout again, up to -max-tool-time")
	fs.DurationVar(&b.maxTool, "max-tool-time", 0, "the most one round of a tool call may take when progress extends it"+def(d.MaxToolTime, "the host's"))
}

// check reports a negative budget.
func (b *budgetFlags) check() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"connect-timeout", b.connect}, {"discover-timeout", b.discover}, {"initialize-timeout", b.initialize}, {"tool-timeout", b.tool}, {"person-timeout", b.person}, {"max-tool-time", b.maxTool}} {
		if f.d < 0 {
			return usagef("-%s %v: want a duration of 0 or more", f.name, f.d)
		}
	}
	return nil
}

// set reports whether any budget flag was given.
func (b *budgetFlags) set() bool { return *b != budgetFlags{} }

// apply sets the budgets given on the command line in o.
func (b *budgetFlags) apply(o *host.Options) {
	for _, f := range []struct {
		dst *time.Duration
		v   time.Duration
	}{{&o.ConnectTimeout, b.connect}, {&o.DiscoverTimeout, b.discover}, {&o.InitializeTimeout, b.initialize}, {&o.ToolTimeout, b.tool}, {&o.PersonTimeout, b.person}, {&o.MaxToolTime, b.maxTool}} {
		if f.v > 0 {
			*f.dst = f.v
		}
	}
	if b.progressExtends {
		o.ProgressExtends = true
	}
}

// hostFlags are the flags chat, tools and catalog share: which servers,
// and how the host runs them.
type hostFlags struct {
	budgets        budgetFlags
	serversFile    string
	servers        string
	protocol       string
	tools          string
	maxResultBytes int
	maxSteps       int
	noElicitation  bool
	open           bool
	// logins are the OAuth handlers of the servers options loaded.
	logins *logins
}

func (f *hostFlags) register(fs *flag.FlagSet) {
	f.budgets.register(fs)
	fs.StringVar(&f.serversFile, "servers-file", "scenarios/servers.yaml", "the servers file")
	fs.StringVar(&f.servers, "servers", "", "comma-separated servers from the servers file (default: all)")
	fs.StringVar(&f.protocol, "protocol", "auto", "protocol mode: auto, legacy or 2026-07-28")
	fs.StringVar(&f.tools, "tools", "", "comma-separated allow-list of namespaced tools offered to the model")
	fs.IntVar(&f.maxResultBytes, "max-result-bytes", 4000, "result budget in bytes (-1: none)")
	fs.IntVar(&f.maxSteps, "max-steps", 8, "model requests per turn at most")
	fs.BoolVar(&f.noElicitation, "no-elicitation", false, "declare no elicitation capability")
	registerOpen(fs, &f.open)
}

// options builds host options from the flags, with the servers of the
// servers file that -servers names; usage problems name the flag.
func (f *hostFlags) options(e *env) (host.Options, error) {
	opts, err := f.optionsWithoutServers(e)
	if err != nil {
		return host.Options{}, err
	}
	f.logins = newLogins(e, f.open, f.budgets.person)
	if opts.Servers, err = scenario.LoadServersAuth(f.serversFile, splitList(f.servers), f.logins.build); err != nil {
		return host.Options{}, usageError{err}
	}
	return opts, nil
}

// login authorises the servers with an oauth: block that options loaded
// (see logins.login): call it after options and before host.Start.
func (f *hostFlags) login(ctx context.Context) error {
	if f.logins == nil {
		return nil
	}
	return f.logins.login(ctx)
}

// optionsWithoutServers builds host options from the flags but the servers,
// leaving the servers file unread.
func (f *hostFlags) optionsWithoutServers(e *env) (host.Options, error) {
	if err := f.budgets.check(); err != nil {
		return host.Options{}, err
	}
	mode, err := host.ParseMode(f.protocol)
	if err != nil {
		return host.Options{}, usagef("-protocol: %w", err)
	}
	opts := host.Options{
		Protocol: mode, MaxResultBytes: f.maxResultBytes,
		MaxSteps: f.maxSteps, Allow: splitList(f.tools), NoElicitation: f.noElicitation,
		Groups: e.groups,
	}
	f.budgets.apply(&opts)
	return opts, nil
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

// parseModelFlag parses -model: "openai:<model>", with the endpoint's base
// URL and key from OPENAI_BASE_URL and OPENAI_API_KEY (read with getenv),
// or "lexical[:<min_score>]", the lexical router.
// It is the one parser of -model, for run and chat.
func parseModelFlag(s string, getenv func(string) string) (scenario.ModelSpec, error) {
	if s == "lexical" || strings.HasPrefix(s, "lexical:") {
		// The lexical router, with the min_score after the colon.
		var cfg model.LexicalConfig
		if text, ok := strings.CutPrefix(s, "lexical:"); ok {
			v, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return scenario.ModelSpec{}, fmt.Errorf("model %q: want lexical or lexical:<min_score>, e.g. lexical:2.5", s)
			}
			cfg.MinScore = v
		}
		spec := scenario.ModelSpec{Name: "lexical", Config: model.Config{Lexical: &cfg}}
		if _, err := spec.New(); err != nil {
			return scenario.ModelSpec{}, fmt.Errorf("model %q: %w", s, err)
		}
		return spec, nil
	}
	name, ok := strings.CutPrefix(s, "openai:")
	if !ok || strings.TrimSpace(name) == "" {
		return scenario.ModelSpec{}, fmt.Errorf("model %q: want openai:<model> (e.g. openai:gpt-oss-120b) or lexical[:<min_score>]", s)
	}
	cfg := model.OpenAIConfig{Model: name}.WithEnv(getenv)
	spec := scenario.ModelSpec{Name: "openai:" + name, Config: model.Config{OpenAI: &cfg}}
	if _, err := spec.New(); err != nil {
		return scenario.ModelSpec{}, fmt.Errorf("model %q: %w", s, err)
	}
	return spec, nil
}

// addFlag is the repeatable -add flag: ad-hoc stdio servers.
type addFlag []host.ServerSpec

var addName = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

func (a *addFlag) String() string {
	if a == nil {
		return ""
	}
	names := make([]string, len(*a))
	for i, s := range *a {
		names[i] = s.Name
	}
	return strings.Join(names, ",")
}

func (a *addFlag) Set(v string) error {
	name, cmdline, ok := strings.Cut(v, "=")
	if !ok {
		return errors.New("want name=command [args]")
	}
	if !addName.MatchString(name) {
		return fmt.Errorf("server name %q: want letters, digits, _ and -", name)
	}
	words, err := shellwords.Split(cmdline)
	if err != nil {
		return fmt.Errorf("server %s: %w", name, err)
	}
	if len(words) == 0 {
		return fmt.Errorf("server %s: no command", name)
	}
	for _, s := range *a {
		if s.Name == name {
			return fmt.Errorf("server %s is added twice", name)
		}
	}
	*a = append(*a, host.ServerSpec{Name: name, Command: words[0], Args: words[1:]})
	return nil
}
