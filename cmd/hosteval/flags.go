package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/scenario"
	"github.com/hosteval/hosteval/internal/shellwords"
)

// budgetFlags are the host's budgets, one flag each (internal/budget
// declares them: -connect-timeout, ..., -max-steps), on every command that
// starts servers (run, tools, catalog, chat, lab, conformance-client,
// init). A flag left at zero keeps the budget of the scenario, the servers
// file or the host's default, in that order.
type budgetFlags struct{ budget.Budgets }

func (b *budgetFlags) register(fs *flag.FlagSet) { budget.Register(fs, &b.Budgets) }

// check reports a budget no flag may give (a negative one).
func (b *budgetFlags) check() error {
	if err := budget.CheckFlags(b.Budgets); err != nil {
		return usageError{err}
	}
	return nil
}

// set reports whether any budget flag was given.
func (b *budgetFlags) set() bool { return b.Budgets != budget.Budgets{} }

// apply sets the budgets given on the command line in o.
func (b *budgetFlags) apply(o *host.Options) { o.Budgets = budget.Over(o.Budgets, b.Budgets) }

// hostFlags are the flags chat, tools and catalog share: which servers,
// and how the host runs them.
type hostFlags struct {
	budgets       budgetFlags
	serversFile   string
	servers       string
	protocol      string
	tools         string
	noElicitation bool
	open          bool
	// logins are the OAuth handlers of the servers options loaded.
	logins *logins
}

func (f *hostFlags) register(fs *flag.FlagSet) {
	f.budgets.register(fs)
	fs.StringVar(&f.serversFile, "servers-file", "scenarios/servers.yaml", "the servers file")
	fs.StringVar(&f.servers, "servers", "", "comma-separated servers from the servers file (default: all)")
	fs.StringVar(&f.protocol, "protocol", "auto", "protocol mode: auto, legacy or 2026-07-28")
	fs.StringVar(&f.tools, "tools", "", "comma-separated allow-list of namespaced tools offered to the model")
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
	f.logins = newLogins(e, f.open, f.budgets.PersonTimeout)
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
	opts := host.Options{Protocol: mode, Allow: splitList(f.tools), NoElicitation: f.noElicitation, Groups: e.groups}
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
