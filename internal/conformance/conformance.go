// Package conformance holds what hosteval's client must do in each client
// scenario of the official MCP conformance suite
// (@modelcontextprotocol/conformance, `make conformance`): the tool calls
// a scenario expects ([Plans]), the OAuth configuration of an auth
// scenario ([OAuth]), the protocol mode for the revision under test
// ([Mode]), and the scripted model that proposes the calls ([Model]).
// `hosteval conformance-client` runs the host with them, as every other
// command runs it, so that the suite judges what hosteval sends.
package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/oauth"
)

// Server is the name of the scenario's server in the host, the prefix of
// its tools.
const Server = "conf"

// Call is one call a scenario expects: the server's own tool name, and the
// arguments as the model writes them.
type Call struct {
	Tool string
	Args string
}

// Plan gives the calls a scenario expects. Some depend on the tools the
// server offered (every tool, or an argument copied from a tool's schema),
// so a plan sees the host's table; ctx is MCP_CONFORMANCE_CONTEXT.
type Plan func(tools []*host.Tool, ctx map[string]any) ([]Call, error)

// fixedCalls is a plan that does not depend on the server.
func fixedCalls(calls ...Call) Plan {
	return func([]*host.Tool, map[string]any) ([]Call, error) { return calls, nil }
}

// everyTool calls every tool the host offers, with args: a tool the host
// wrongly kept (an invalid x-mcp-header) would then be called, and the suite
// would see it.
func everyTool(args string) Plan {
	return func(tools []*host.Tool, _ map[string]any) ([]Call, error) {
		var calls []Call
		for _, t := range tools {
			if t.Offered {
				calls = append(calls, Call{Tool: t.MCP.Name, Args: args})
			}
		}
		return calls, nil
	}
}

// contextToolCalls makes the calls listed in the context's toolCalls.
func contextToolCalls(_ []*host.Tool, ctx map[string]any) ([]Call, error) {
	raw, ok := ctx["toolCalls"].([]any)
	if !ok {
		return nil, errors.New("MCP_CONFORMANCE_CONTEXT has no toolCalls list")
	}
	var calls []Call
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
		calls = append(calls, Call{Tool: name, Args: string(data)})
	}
	return calls, nil
}

// echoSchema sends json_schema_2020_12_tool's input schema, as the host
// holds it, to json_schema_echo: the suite checks what survived.
func echoSchema(tools []*host.Tool, _ map[string]any) ([]Call, error) {
	i := slices.IndexFunc(tools, func(t *host.Tool) bool { return t.MCP.Name == "json_schema_2020_12_tool" })
	if i < 0 {
		return nil, errors.New("the server offers no json_schema_2020_12_tool")
	}
	data, err := json.Marshal(map[string]any{"schema": tools[i].MCP.InputSchema})
	if err != nil {
		return nil, err
	}
	return []Call{{Tool: "json_schema_echo", Args: string(data)}}, nil
}

// Plans maps each client scenario of the suite to the calls it expects
// (docs/peers.md, section 7). Connecting (discover or initialize, then
// tools/list) is the host's own part of every scenario.
func Plans() map[string]Plan {
	plans := map[string]Plan{
		"initialize":                          fixedCalls(),
		"request-metadata":                    fixedCalls(),
		"json-schema-ref-no-deref":            fixedCalls(),
		"tools_call":                          fixedCalls(Call{"add_numbers", `{"a": 5, "b": 3}`}),
		"elicitation-sep1034-client-defaults": fixedCalls(Call{"test_client_elicitation_defaults", `{}`}),
		"sse-retry":                           fixedCalls(Call{"test_reconnection", `{}`}),
		"sep-2322-client-request-state": fixedCalls(
			Call{"test_mrtr_echo_state", `{}`},
			Call{"test_mrtr_no_state", `{}`},
			Call{"test_mrtr_unrelated", `{}`},
			Call{"test_mrtr_no_result_type", `{}`},
		),
		"http-standard-headers":            everyTool(`{}`),
		"http-invalid-tool-headers":        everyTool(`{"region": "us-west1"}`),
		"http-custom-headers":              contextToolCalls,
		"json-schema-2020-12-preservation": echoSchema,
	}
	// The auth scenarios: connect through OAuth (see OAuth), list, call.
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
		plans["auth/"+name] = fixedCalls(Call{"test-tool", `{}`})
	}
	return plans
}

// ClientMetadataURL is the client ID metadata document the suite's
// authorization servers accept as hosteval's client id (its own clients
// use the same URL).
const ClientMetadataURL = "https://conformance-test.local/client-metadata.json"

// OAuth is the oauth: block a user would write for an auth/ scenario's
// server, as the go-sdk's own client configures itself: hosteval known by
// its client ID metadata document, else by dynamic registration; the
// pre-registered client the scenario passes in its context
// (MCP_CONFORMANCE_CONTEXT client_id, client_secret) when it passes one;
// auth/client-credentials-basic with the client credentials flow. ok is
// false for a scenario without OAuth.
func OAuth(scenario string, ctx map[string]any) (cfg oauth.Config, ok bool) {
	if !strings.HasPrefix(scenario, "auth/") {
		return oauth.Config{}, false
	}
	id, _ := ctx["client_id"].(string)
	secret, _ := ctx["client_secret"].(string)
	switch scenario {
	case "auth/client-credentials-basic":
		return oauth.Config{Flow: oauth.FlowClientCredentials, ClientID: id, ClientSecret: oauth.Secret(secret)}, true
	case "auth/wif-jwt-bearer":
		// A workload handed a ready token.
		jwt, _ := ctx["valid_jwt"].(string)
		return oauth.Config{Flow: oauth.FlowJWTBearer, ClientID: id, Assertion: oauth.Secret(jwt)}, true
	case "auth/enterprise-managed-authorization":
		idToken, _ := ctx["idp_id_token"].(string)
		idpEndpoint, _ := ctx["idp_token_endpoint"].(string)
		idpClient, _ := ctx["idp_client_id"].(string)
		return oauth.Config{Flow: oauth.FlowEnterprise, ClientID: id, ClientSecret: oauth.Secret(secret),
			Assertion: oauth.Secret(idToken), IDPTokenEndpoint: idpEndpoint, IDPClientID: idpClient}, true
	}
	cfg = oauth.Config{ClientMetadataURL: ClientMetadataURL}
	if id != "" && secret != "" {
		cfg.ClientID, cfg.ClientSecret = id, oauth.Secret(secret)
	}
	return cfg, true
}

// Mode is the protocol mode for the revision a scenario tests
// (MCP_CONFORMANCE_PROTOCOL_VERSION): none leaves the host on auto,
// 2026-07-28 or newer pins it, an older one makes it connect as legacy.
func Mode(revision string) host.Mode {
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

// Model proposes all of a scenario's calls in one message (the host runs
// them one after another, in order), then answers.
func Model(calls []Call) (model.Model, error) {
	var steps []model.ScriptStep
	if len(calls) > 0 {
		step := model.ScriptStep{}
		for _, c := range calls {
			step.Calls = append(step.Calls, model.ScriptCall{Call: host.Namespaced(Server, c.Tool), RawArgs: &c.Args})
		}
		steps = append(steps, step)
	}
	steps = append(steps, model.ScriptStep{Answer: "done"})
	return model.New(model.Config{Scripted: steps})
}
