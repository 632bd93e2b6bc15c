// Command cmdb is a fixture MCP server over stdio: a read-only, in-memory
// configuration management database of about 35 hosts across several
// services and environments. Its find_assets answer for every prod
// customer-db host is several kilobytes on purpose, larger than the host's
// default result budget, while get_asset stays small.
//
// It speaks 2026-07-28 and 2025-11-25 and logs one JSON line per request on
// stderr.
package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/servers/internal/fixture"
)

const version = "1.0.0"

func main() { fixture.Main("cmdb", run) }

func run(ctx context.Context, p *fixture.Process) error {
	srv := p.NewServer(version, &mcp.ServerOptions{
		Instructions: "A read-only inventory of the company's hosts: who owns each one, what it runs and where. " +
			"Look a host up here before acting on it; never guess a hostname or an owner.",
	})
	addTools(srv, newInventory())
	return p.Serve(ctx, srv, fixture.Hooks{})
}

type getAssetIn struct {
	Hostname string `json:"hostname" jsonschema:"The exact hostname, e.g. jump-prod-02 or customer-db-prod-01. Use find_assets to list hostnames when you do not know it."`
}

type findAssetsIn struct {
	Service string `json:"service,omitempty" jsonschema:"Only hosts of this service, e.g. customer-db, remote-access, web-frontend, payments-api. Omit for every service."`
	Env     string `json:"env,omitempty" jsonschema:"Only hosts in this environment. Omit for every environment."`
	Limit   int    `json:"limit,omitempty" jsonschema:"How many hosts to return at most (1-50); total still counts every match. Keep it small: full records are large."`
}

type findAssetsOut struct {
	Total  int      `json:"total" jsonschema:"How many hosts matched, including those beyond the limit."`
	Assets []*Asset `json:"assets" jsonschema:"The first matching hosts, by hostname."`
	Note   string   `json:"note,omitempty" jsonschema:"A hint when nothing matched."`
}

func addTools(srv *mcp.Server, inv *Inventory) {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}

	mcp.AddTool(srv, &mcp.Tool{
		Name:  "get_asset",
		Title: "Get one host",
		Description: "Look up one host in the CMDB by its exact hostname (e.g. jump-prod-02) and return its full record: " +
			"service, environment, owner and team, criticality, OS, address, backup policy and on-call notes. " +
			"Use it to answer who owns a host or what it does. The name must match exactly; " +
			"if you only know the service or environment, call find_assets first.",
		Annotations: readOnly,
		InputSchema: fixture.Schema[getAssetIn](func(props map[string]*jsonschema.Schema) {
			props["hostname"].MinLength = new(1)
			props["hostname"].MaxLength = new(253)
			props["hostname"].Examples = []any{"jump-prod-02", "customer-db-prod-01"}
		}),
	}, func(_ context.Context, _ *mcp.CallToolRequest, in getAssetIn) (*mcp.CallToolResult, *Asset, error) {
		a, ok := inv.Get(in.Hostname)
		if !ok {
			return nil, nil, fmt.Errorf("there is no host named %q in the CMDB (names are exact and lower-case, e.g. jump-prod-02). "+
				"Call find_assets with a service (one of %s) and/or an env (prod, staging, dev) to list hostnames, then call get_asset again",
				in.Hostname, strings.Join(inv.Services(), ", "))
		}
		return nil, a, nil
	})

	mcp.AddTool(srv, &mcp.Tool{
		Name:  "find_assets",
		Title: "Find hosts",
		Description: "List hosts from the CMDB, optionally filtered by service name (e.g. customer-db) and environment (prod, staging, dev). " +
			"Returns {total, assets}: total counts every match, assets holds the first `limit` full records sorted by hostname. " +
			"Records are large (about 700 bytes each), so ask for a small limit, or filter, and use get_asset for one host.",
		Annotations: readOnly,
		InputSchema: fixture.Schema[findAssetsIn](func(props map[string]*jsonschema.Schema) {
			props["service"].Examples = []any{"customer-db", "remote-access"}
			props["env"].Enum = []any{"prod", "staging", "dev"}
			props["limit"].Minimum = new(1.0)
			props["limit"].Maximum = new(50.0)
			props["limit"].Default = []byte("10")
		}),
	}, func(_ context.Context, _ *mcp.CallToolRequest, in findAssetsIn) (*mcp.CallToolResult, findAssetsOut, error) {
		total, found := inv.Find(in.Service, in.Env, in.Limit)
		out := findAssetsOut{Total: total, Assets: found}
		if total == 0 {
			out.Note = fmt.Sprintf("no host matched; services are %s and environments are %s",
				strings.Join(inv.Services(), ", "), strings.Join(envs, ", "))
		}
		return nil, out, nil
	})
}
