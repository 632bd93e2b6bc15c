package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scaffold"
	"github.com/hosteval/hosteval/internal/shellwords"
	"github.com/hosteval/hosteval/internal/text"
)

var initCommand = command{
	name:        "init",
	summary:     "start a suite for a server: servers.yaml, a scenario per tool, gates",
	usage:       initUsage,
	onInterrupt: cancelContext,
	run:         runInit,
}

const initUsage = `usage: hosteval init [flags] [-- COMMAND [ARGS...]]

Connects to a server through the host, lists its tools, and writes a first
suite for it into a folder (-dir, default hosteval/):

  servers.yaml   the server's entry, named -name or after the name the
                 server gives itself
  <name>.yaml    one scenario per tool: a scripted model calls the tool with
                 arguments filled in from its input schema (examples,
                 defaults, enums; values made up from the type are marked
                 TODO), and expects the call to succeed; a tool that is not
                 read-only is approved in its scenario, and says so
  gates.yaml     pass_rate >= 1

Every file starts with the editor's schema line, pointing at the schemas
published in the hosteval repository (hosteval schema prints them for a
copy beside the files). init never writes over a file: one that is already
there is an error naming it, and nothing is written.

Give the server as a command after --, or with -command and -args, or as
a Streamable HTTP -url with -header. Values are written as given: write
${VAR} in -env, -header, -args to keep a secret out of the files (init
reads it from the environment to connect, and so does run); ${CASE_DIR}
is each case's own fresh folder when the suite runs (a temporary one
while init connects).

examples:
  hosteval init -- npx -y @modelcontextprotocol/server-memory
  hosteval init -name memory -env 'MEMORY_FILE_PATH=${CASE_DIR}/memory.jsonl' \
    -- npx -y @modelcontextprotocol/server-memory
  hosteval init -dir evals -command ./bin/cmdb
  hosteval init -url https://mcp.example.com/mcp \
    -header 'Authorization: Bearer ${MCP_TOKEN}'`

// headerFlag is the repeatable -header "Name: value".
type headerFlag map[string]string

func (h headerFlag) String() string { return strings.Join(slices.Sorted(maps.Keys(h)), ",") }

func (h headerFlag) Set(v string) error {
	name, value, ok := strings.Cut(v, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return errors.New(`want "Name: value"`)
	}
	h[name] = strings.TrimSpace(value)
	return nil
}

// envFlag is the repeatable -env KEY=VALUE.
type envFlag []string

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (e *envFlag) String() string { return strings.Join(*e, ",") }

func (e *envFlag) Set(v string) error {
	k, _, ok := strings.Cut(v, "=")
	if !ok || !envName.MatchString(k) {
		return errors.New("want KEY=VALUE")
	}
	*e = append(*e, v)
	return nil
}

func runInit(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "init", initUsage)
	dir := fs.String("dir", "hosteval", "folder to write the files into (made if needed)")
	name := fs.String("name", "", "the server's name in the files (default: the name it gives itself)")
	command := fs.String("command", "", "the program of a stdio server (or give it after --)")
	cmdArgs := fs.String("args", "", "its arguments, split as a shell would")
	url := fs.String("url", "", "the URL of a Streamable HTTP server")
	headers := headerFlag{}
	fs.Var(headers, "header", `a header for -url, "Name: value" (repeatable)`)
	var envs envFlag
	fs.Var(&envs, "env", "a variable for the server, KEY=VALUE (repeatable)")
	protocol := fs.String("protocol", "auto", "protocol mode: auto, legacy or 2026-07-28")
	var budgets budgetFlags
	budgets.register(fs)
	if err := parseFlagsFirst(fs, args); err != nil {
		return err
	}
	if err := budgets.check(); err != nil {
		return err
	}
	mode, err := host.ParseMode(*protocol)
	if err != nil {
		return usagef("-protocol: %w", err)
	}
	spec, err := initSpec(*command, *cmdArgs, fs.Args(), *url, headers, envs)
	if err != nil {
		return err
	}
	if *name != "" && scaffold.ServerName(*name) != *name {
		return usagef("-name %q: want letters, digits and -, e.g. %s", *name, scaffold.ServerName(*name))
	}
	// Before the server starts: a file in the way is known at once.
	check := []string{scaffold.ServersFile, scaffold.GatesFile}
	if *name != "" {
		check = append(check, scaffold.ScenarioFile(*name))
	}
	if err := scaffold.Check(*dir, check...); err != nil {
		return usageError{err}
	}

	spec.Name = *name
	if spec.Name == "" {
		spec.Name = "server"
	}
	written := spec
	written.Command = commandFrom(spec.Command, *dir)
	running, cleanup, err := expandSpec(spec, *dir, e.getenv)
	if err != nil {
		return err
	}
	defer cleanup()

	person := &trialPerson{}
	opts := host.Options{Protocol: mode, Servers: []host.ServerSpec{running}, Groups: e.groups, Elicitor: person, Approver: person}
	budgets.apply(&opts)
	h, err := host.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer h.Close()
	info := h.Servers()[0]
	if info.Error != "" {
		return fmt.Errorf("server did not connect: %s", info.Error)
	}
	if *name == "" {
		written.Name = scaffold.ServerName(info.ServerName)
	}
	s := scaffold.Server{Spec: written, ServerName: info.ServerName, ServerVersion: info.ServerVersion, Protocol: info.Protocol}
	var trials []*host.Tool
	for _, t := range h.Tools() {
		tool := scaffold.Tool{Name: t.MCP.Name, Description: t.MCP.Description, InputSchema: t.MCP.InputSchema, ReadOnly: t.AutoRun}
		if a := t.MCP.Annotations; a != nil && a.DestructiveHint != nil {
			tool.Destructive = *a.DestructiveHint && !a.ReadOnlyHint
		}
		if !t.Offered {
			tool.NotOffered = "it needs task augmentation"
		} else {
			trials = append(trials, t)
		}
		s.Tools = append(s.Tools, tool)
	}
	// Each scenario runs once before anything is written, as the suite
	// will run it: a server shared by every case is called in this one
	// process; any other gets a process (and a ${CASE_DIR}) of its own
	// for each call, so that no call sees what another changed.
	fmt.Fprintf(e.stderr, "%s: %s; calling each once, as its scenario will\n", written.Name, text.Count(len(s.Tools), "tool"))
	for _, t := range trials {
		i := slices.IndexFunc(s.Tools, func(st scaffold.Tool) bool { return st.Name == t.MCP.Name })
		th := h
		if !s.Shareable() {
			fresh, cleanupFresh, err := startTrialHost(ctx, spec, *dir, e.getenv, opts)
			if err != nil {
				return err
			}
			th = fresh
			defer cleanupFresh()
		}
		if s.Tools[i].Trial, err = trialCall(ctx, th, person, t.Name, s.Tools[i], written.Name); err != nil {
			return err
		}
		if th != h {
			th.Close()
		}
	}
	files, err := scaffold.Write(*dir, s)
	if errors.Is(err, scaffold.ErrExists) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s: %s (protocol %s); wrote %s\n", written.Name, text.Count(len(s.Tools), "tool"), info.Protocol, strings.Join(files, ", "))
	fmt.Fprintf(e.stderr, "next: replace the TODO values in %s, then: hosteval run -gates %s %s\n",
		filepath.Join(*dir, scaffold.ScenarioFile(written.Name)), filepath.Join(*dir, scaffold.GatesFile), *dir)
	return nil
}

// startTrialHost starts a host of its own for one trial call, with the
// server's ${VAR}s expanded afresh (a new ${CASE_DIR}).
func startTrialHost(ctx context.Context, spec host.ServerSpec, dir string, getenv func(string) string, opts host.Options) (*host.Host, func(), error) {
	running, cleanup, err := expandSpec(spec, dir, getenv)
	if err != nil {
		return nil, cleanup, err
	}
	opts.Servers = []host.ServerSpec{running}
	h, err := host.Start(ctx, opts)
	if err != nil {
		cleanup()
		return nil, func() {}, err
	}
	if info := h.Servers()[0]; info.Error != "" {
		h.Close()
		cleanup()
		return nil, func() {}, fmt.Errorf("server did not connect: %s", info.Error)
	}
	return h, cleanup, nil
}

// trialCall calls a tool once, as its scenario will (the same arguments,
// approved, the server's questions answered as the scenario answers them),
// so that the scenario init writes expects what happened and passes as
// written. The questions name the server as the files do (written).
func trialCall(ctx context.Context, h *host.Host, person *trialPerson, name string, t scaffold.Tool, written string) (*scaffold.Trial, error) {
	args, err := scaffold.Args(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("the arguments of %s: %w", t.Name, err)
	}
	person.start()
	text, call := h.Call(ctx, host.CallRequest{Name: name, Arguments: string(args), TraceID: "init-" + t.Name, Step: 1})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tr := &scaffold.Trial{Outcome: call.Outcome, Questions: person.questions(written)}
	if call.Outcome != record.OutcomeOK {
		tr.Error = text
	}
	return tr, nil
}

// trialPerson is the person during init's trial calls: it approves every
// call (each scenario approves its tool) and answers every form with the
// answer its scenario will hold (scaffold.Answer), noting the questions.
type trialPerson struct {
	mu    sync.Mutex
	asked []scaffold.Question
}

func (p *trialPerson) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = nil
}

// questions are the questions since start, their server named as the
// files name it.
func (p *trialPerson) questions(server string) []scaffold.Question {
	p.mu.Lock()
	defer p.mu.Unlock()
	qs := slices.Clone(p.asked)
	for i := range qs {
		qs[i].Server = server
	}
	return qs
}

func (p *trialPerson) Approve(context.Context, host.ApprovalRequest) (bool, error) { return true, nil }

func (p *trialPerson) Elicit(_ context.Context, req host.ElicitRequest) (host.ElicitAnswer, error) {
	if req.Mode == "url" {
		return host.ElicitAnswer{Action: host.ActionDecline}, nil
	}
	p.mu.Lock()
	p.asked = append(p.asked, scaffold.Question{Server: req.Server, Key: req.Key, Message: req.Message, Schema: req.Schema})
	p.mu.Unlock()
	_, content := scaffold.Answer(req.Schema)
	return host.ElicitAnswer{Action: host.ActionAccept, Content: content}, nil
}

// initSpec is the server as the command line gives it, before names and
// ${VAR} are settled.
func initSpec(command, args string, rest []string, url string, headers headerFlag, envs envFlag) (host.ServerSpec, error) {
	var spec host.ServerSpec
	given := 0
	for _, g := range []bool{command != "", len(rest) > 0, url != ""} {
		if g {
			given++
		}
	}
	switch {
	case given == 0:
		return spec, usagef("give the server: a command after --, -command, or -url")
	case given > 1:
		return spec, usagef("give the server once: a command after --, -command, or -url")
	case url != "":
		if args != "" || len(envs) > 0 {
			return spec, usagef("-args and -env are for a command, not -url")
		}
		spec.URL, spec.Headers = url, headers
		return spec, nil
	case len(headers) > 0:
		return spec, usagef("-header is for -url")
	case len(rest) > 0:
		if args != "" {
			return spec, usagef("-args is for -command: give the arguments after the command")
		}
		spec.Command, spec.Args = rest[0], rest[1:]
	default:
		words, err := shellwords.Split(args)
		if err != nil {
			return spec, usagef("-args: %w", err)
		}
		spec.Command, spec.Args = command, words
	}
	spec.Env = envs
	return spec, nil
}

// commandFrom is a command as the servers file in dir names it: a
// relative path (one with a slash) resolves against the file's folder, so
// it is rewritten relative to dir.
func commandFrom(command, dir string) string {
	if command == "" || filepath.IsAbs(command) || !strings.Contains(command, "/") {
		return command
	}
	absDir, err1 := filepath.Abs(dir)
	absCmd, err2 := filepath.Abs(command)
	if err1 != nil || err2 != nil {
		return command
	}
	rel, err := filepath.Rel(absDir, absCmd)
	if err != nil {
		return command
	}
	rel = filepath.ToSlash(rel)
	if !strings.Contains(rel, "/") {
		rel = "./" + rel // without a slash it would be looked up on PATH
	}
	return rel
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandSpec is the spec to connect with: ${VAR} read with getenv (an
// unset one is an error), ${HERE} the folder of the files, ${CASE_DIR} a
// temporary folder, removed by cleanup.
func expandSpec(spec host.ServerSpec, dir string, getenv func(string) string) (host.ServerSpec, func(), error) {
	cleanup := func() {}
	here, err := filepath.Abs(dir)
	if err != nil {
		return spec, cleanup, err
	}
	caseDir := ""
	var missing []string
	expand := func(s string) string {
		return varRef.ReplaceAllStringFunc(s, func(ref string) string {
			name := varRef.FindStringSubmatch(ref)[1]
			switch name {
			case "HERE":
				return here
			case "CASE_DIR":
				if caseDir == "" {
					if d, err := os.MkdirTemp("", "hosteval-init-"); err == nil {
						caseDir = d
					}
				}
				return caseDir
			}
			v := getenv(name)
			if v == "" {
				missing = append(missing, name)
			}
			return v
		})
	}
	out := spec
	out.Command, out.URL = expand(spec.Command), expand(spec.URL)
	out.Args = nil
	for _, a := range spec.Args {
		out.Args = append(out.Args, expand(a))
	}
	out.Env = nil
	for _, kv := range spec.Env {
		out.Env = append(out.Env, expand(kv))
	}
	if spec.Headers != nil {
		out.Headers = map[string]string{}
		for k, v := range spec.Headers {
			out.Headers[k] = expand(v)
		}
	}
	if caseDir != "" {
		cleanup = func() { os.RemoveAll(caseDir) }
	}
	if len(missing) > 0 {
		cleanup()
		return spec, func() {}, usagef("${%s} is not set in the environment", strings.Join(missing, "}, ${"))
	}
	return out, cleanup, nil
}
