package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/runner"
	"github.com/hosteval/hosteval/internal/scenario"
	"github.com/hosteval/hosteval/internal/shellwords"
	"github.com/hosteval/hosteval/internal/web"
	"github.com/hosteval/hosteval/internal/web/lab"
)

var labCommand = command{
	name:        "lab",
	summary:     "the host as a web page: chat, forms, calls and logs",
	usage:       labUsage,
	onInterrupt: cancelContext,
	run:         runLab,
}

const labUsage = `usage: hosteval lab [flags]

The host of ` + "`hosteval chat`" + ` as a local web page: the conversation on the
left, a row per tool call on the right (open one for its arguments, the
result as the model saw it, the server's own log lines and the wire
messages), and the logs of the host and the servers, filterable by
trace_id, step and server. A server's question is a form (a dropdown for an
enum), an effect asks for approval, and nothing reaches a server until you
press a button. With no model configured the page is a manual panel: you
choose a tool and fill in its arguments.

The servers stay connected while the page is open, in any number of tabs,
which all show the one session. The page listens on 127.0.0.1 on a free
port (-addr to choose one); Ctrl-C stops the servers and ends the lab.

It takes the flags of chat, or a scenario: -scenario FILE takes the servers,
the model, the system prompt and the host limits from the file's first
scenario (or the one -run names), and offers its turns as questions; a flag
given as well overrides the scenario's value.

examples:
  hosteval lab -servers cmdb,tickets -open
  hosteval lab -servers cmdb,tickets -rules rules.yaml
  hosteval lab -servers cmdb,tickets -model openai:gpt-oss-120b
  hosteval lab -scenario scenarios/tickets.yaml -run ticket-declined`

func runLab(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "lab", labUsage)
	var sf sessionFlags
	sf.register(fs)
	scenarioFile := fs.String("scenario", "", "take the servers, model, system prompt and host limits from this scenario file")
	runFilter := fs.String("run", "", "with -scenario: the scenario whose name matches this regexp (default: the file's first)")
	addr := fs.String("addr", web.DefaultAddr, "address to listen on: the loopback interface only")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var opts lab.Options
	var err error
	if *scenarioFile != "" {
		tmp, err := os.MkdirTemp("", "hosteval-lab-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if opts, err = scenarioLab(e, &sf, set, *scenarioFile, *runFilter, tmp); err != nil {
			return err
		}
	} else {
		if set["run"] {
			return usagef("-run chooses a scenario of -scenario's file: give -scenario too")
		}
		if opts.Host, err = sf.host.options(e); err != nil {
			return err
		}
		if opts.Model, err = sf.newModel(e); err != nil {
			return err
		}
		opts.System = sf.system
	}
	if sf.log == "" {
		// The servers' and the host's logs would scroll the address off the
		// terminal: they go to a file, in a folder of the lab's own that
		// outlives it, and the line says where.
		dir, err := os.MkdirTemp("", "hosteval-lab-")
		if err != nil {
			return err
		}
		sf.log = filepath.Join(dir, "lab.log")
		fmt.Fprintf(e.stderr, "hosteval lab: logs in %s (-log FILE to choose)\n", sf.log)
	}
	closeLogs, err := sf.openLogs(e, &opts.Host)
	if err != nil {
		return err
	}
	defer closeLogs()
	opts.Host.Groups = e.groups

	ln, err := web.Listen(*addr, false)
	if err != nil {
		return usagef("-addr: %w", err)
	}
	defer ln.Close()
	// OAuth servers sign in here, before the host starts, as in run and chat.
	l, err := lab.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer l.Close()
	for _, s := range l.Servers() {
		if s.Error != "" {
			fmt.Fprintf(e.stderr, "hosteval lab: server %s is not available: %s\n", s.Name, s.Error)
		}
	}
	url := web.URL(ln)
	fmt.Fprintf(e.stdout, "hosteval lab: %s (Ctrl-C stops the servers and ends the lab)\n", url)
	if sf.host.open {
		if err := openBrowser(e, url); err != nil {
			fmt.Fprintf(e.stderr, "hosteval lab: could not open a browser (%v): open %s yourself\n", err, url)
		}
	}
	if err := web.Serve(ctx, ln, l.Handler()); err != nil {
		return err
	}
	return context.Cause(ctx)
}

// scenarioLab takes a lab's servers, model, system prompt and host limits
// from a scenario, with the flags that were given over them. The
// scenario's canned answers and approvals are left out: in the lab, the
// person answers.
func scenarioLab(e *env, sf *sessionFlags, set map[string]bool, file, run, dir string) (lab.Options, error) {
	if set["servers"] || set["servers-file"] {
		return lab.Options{}, usagef("-scenario names its servers: give -scenario or -servers, not both")
	}
	var filter *regexp.Regexp
	if run != "" {
		re, err := regexp.Compile(run)
		if err != nil {
			return lab.Options{}, usagef("-run: %w", err)
		}
		filter = re
	}
	suite, err := scenario.Load(file)
	if err != nil {
		return lab.Options{}, usageError{err}
	}
	cases, err := suite.Cases(scenario.CaseOptions{Run: filter, Repeat: 1})
	if err != nil {
		return lab.Options{}, usageError{err}
	}
	if len(cases) == 0 {
		return lab.Options{}, usagef("-scenario %s: no scenario in it", file)
	}
	c := cases[0]
	caseDir, err := runner.PrepareCaseDir(c, dir)
	if err != nil {
		return lab.Options{}, err
	}
	opts := lab.Options{Host: c.HostOptionsIn(caseDir), System: c.System(), Title: c.Scenario.Name, Suggestions: c.Turns()}
	if err := sf.host.override(e, &opts.Host, set); err != nil {
		return lab.Options{}, err
	}
	if set["system"] {
		opts.System = sf.system
	}
	var m model.Model
	if set["model"] || set["script"] || set["rules"] {
		m, err = sf.newModel(e)
	} else {
		m, err = c.NewModel()
	}
	if err != nil {
		return lab.Options{}, usageError{err}
	}
	opts.Model = m
	return opts, nil
}

// override sets in o the host settings whose flags were given (set),
// over what a scenario says.
func (f *hostFlags) override(e *env, o *host.Options, set map[string]bool) error {
	fo, err := f.optionsWithoutServers(e)
	if err != nil {
		return err
	}
	if set["protocol"] {
		o.Protocol = fo.Protocol
	}
	if set["tools"] {
		o.Allow = fo.Allow
	}
	if set["no-elicitation"] {
		o.NoElicitation = fo.NoElicitation
	}
	f.budgets.apply(o)
	return nil
}

// openBrowser opens url with $HOSTEVAL_BROWSER (a command line; the URL is
// its last argument) or the system's opener.
func openBrowser(e *env, url string) error {
	var argv []string
	if b := e.getenv("HOSTEVAL_BROWSER"); b != "" {
		words, err := shellwords.Split(b)
		if err != nil || len(words) == 0 {
			return fmt.Errorf("HOSTEVAL_BROWSER %q: want a command", b)
		}
		argv = words
	} else {
		switch runtime.GOOS {
		case "darwin":
			argv = []string{"open"}
		case "windows":
			argv = []string{"rundll32", "url.dll,FileProtocolHandler"}
		default:
			argv = []string{"xdg-open"}
		}
	}
	cmd := exec.Command(argv[0], append(argv[1:], url)...)
	if err := cmd.Start(); err != nil {
		return err
	}
	// The opener returns at once, or becomes the browser, which may outlive
	// the lab: it is reaped when it exits, and never waited for.
	go cmd.Wait()
	return nil
}
