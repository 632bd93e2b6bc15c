package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/servers/fixturetest"
	"github.com/hosteval/hosteval/servers/internal/fixture"
)

var bin string

func TestMain(m *testing.M) {
	os.Exit(fixturetest.Main(m, "github.com/hosteval/hosteval/servers/cmdb", &bin))
}

// resultBudget is the host's default result budget: the big find_assets
// answer must exceed it, get_asset must not.
const resultBudget = 4000

func TestToolsList(t *testing.T) {
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto})
			if got := s.Protocol(); got != proto {
				t.Fatalf("negotiated %q, want %q", got, proto)
			}
			res, err := s.Session.ListTools(t.Context(), &mcp.ListToolsParams{Meta: fixturetest.Meta("trace-list", 0)})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
				if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint || !tool.Annotations.IdempotentHint {
					t.Errorf("%s: annotations %+v, want read-only and idempotent", tool.Name, tool.Annotations)
				}
				if tool.OutputSchema == nil {
					t.Errorf("%s: no output schema", tool.Name)
				}
				if len(tool.Description) < 100 {
					t.Errorf("%s: description too short for a model: %q", tool.Name, tool.Description)
				}
			}
			if diff := cmp.Diff([]string{"find_assets", "get_asset"}, names); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			find := schemaOf(t, res.Tools, "find_assets")
			limit := find.Properties["limit"]
			if limit.Minimum != 1 || limit.Maximum != 50 || string(limit.Default) != "10" {
				t.Errorf("find_assets limit schema = %+v, want minimum 1, maximum 50, default 10", limit)
			}
			if got := find.Properties["env"].Enum; !slices.Equal(got, []any{"prod", "staging", "dev"}) {
				t.Errorf("find_assets env enum = %v", got)
			}
			if len(find.Required) != 0 {
				t.Errorf("find_assets required = %v, want none", find.Required)
			}
			get := schemaOf(t, res.Tools, "get_asset")
			if !slices.Equal(get.Required, []string{"hostname"}) || get.Properties["hostname"].Description == "" {
				t.Errorf("get_asset schema = %+v", get)
			}
		})
	}
}

// schema is the part of a JSON Schema the tests look at.
type schema struct {
	Required   []string `json:"required"`
	Properties map[string]struct {
		Description string          `json:"description"`
		Enum        []any           `json:"enum"`
		Minimum     float64         `json:"minimum"`
		Maximum     float64         `json:"maximum"`
		Default     json.RawMessage `json:"default"`
	} `json:"properties"`
}

func schemaOf(t *testing.T, tools []*mcp.Tool, name string) schema {
	t.Helper()
	for _, tool := range tools {
		if tool.Name == name {
			b, _ := json.Marshal(tool.InputSchema)
			var s schema
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	t.Fatalf("no tool %s", name)
	return schema{}
}

func TestTools(t *testing.T) {
	type findOut struct {
		Total  int     `json:"total"`
		Assets []Asset `json:"assets"`
		Note   string  `json:"note"`
	}
	for _, proto := range fixturetest.Protocols {
		t.Run(proto, func(t *testing.T) {
			s := fixturetest.Start(t, bin, fixturetest.Options{Protocol: proto})
			call := func(t *testing.T, step int, tool string, args map[string]any) *mcp.CallToolResult {
				t.Helper()
				res, err := s.Session.CallTool(t.Context(), &mcp.CallToolParams{
					Name: tool, Arguments: args, Meta: fixturetest.Meta("trace-cmdb", step),
				})
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				return res
			}

			t.Run("get_asset", func(t *testing.T) {
				res := call(t, 1, "get_asset", map[string]any{"hostname": "jump-prod-02"})
				if res.IsError {
					t.Fatalf("tool error: %s", fixturetest.Text(res))
				}
				a := fixturetest.Structured[Asset](t, res)
				want := [4]string{"jump-prod-02", "remote-access", "prod", "Camille Michel"}
				got := [4]string{a.Hostname, a.Service, a.Env, a.Owner}
				if got != want {
					t.Errorf("hostname, service, env, owner = %q, want %q", got, want)
				}
				if n := structuredBytes(t, res); n >= resultBudget/2 {
					t.Errorf("get_asset structuredContent is %d bytes, want well under the %d-byte budget", n, resultBudget)
				}
			})
			t.Run("get_asset unknown host", func(t *testing.T) {
				res := call(t, 2, "get_asset", map[string]any{"hostname": "jump-prod-99"})
				text := fixturetest.Text(res)
				if !res.IsError || !strings.Contains(text, `no host named "jump-prod-99"`) || !strings.Contains(text, "find_assets") {
					t.Errorf("got isError=%v %q, want a tool error pointing to find_assets", res.IsError, text)
				}
			})
			t.Run("find_assets big", func(t *testing.T) {
				res := call(t, 3, "find_assets", map[string]any{"service": "customer-db", "env": "prod", "limit": 50})
				out := fixturetest.Structured[findOut](t, res)
				if out.Total < 8 || len(out.Assets) != out.Total {
					t.Errorf("total %d, %d assets; want 8 or more, all returned", out.Total, len(out.Assets))
				}
				for _, a := range out.Assets {
					if a.Service != "customer-db" || a.Env != "prod" {
						t.Errorf("%s is %s/%s, want customer-db/prod", a.Hostname, a.Service, a.Env)
					}
				}
				if n := structuredBytes(t, res); n <= resultBudget {
					t.Errorf("structuredContent is %d bytes, want over the %d-byte budget", n, resultBudget)
				}
			})
			t.Run("find_assets default limit", func(t *testing.T) {
				out := fixturetest.Structured[findOut](t, call(t, 4, "find_assets", map[string]any{}))
				if out.Total != len(hosts) || len(out.Assets) != 10 {
					t.Errorf("total %d with %d assets, want %d with 10", out.Total, len(out.Assets), len(hosts))
				}
				if out.Assets[0].Hostname != "ci-runner-dev-01" {
					t.Errorf("first asset %s, want ci-runner-dev-01 (sorted by hostname)", out.Assets[0].Hostname)
				}
			})
			t.Run("find_assets nothing", func(t *testing.T) {
				out := fixturetest.Structured[findOut](t, call(t, 5, "find_assets", map[string]any{"service": "mainframe"}))
				if out.Total != 0 || len(out.Assets) != 0 || !strings.Contains(out.Note, "customer-db") {
					t.Errorf("got %+v, want nothing and a note naming the services", out)
				}
			})
			t.Run("find_assets bad limit", func(t *testing.T) {
				for _, limit := range []int{0, 51} {
					res := call(t, 6, "find_assets", map[string]any{"limit": limit})
					if !res.IsError || !strings.Contains(fixturetest.Text(res), "limit") {
						t.Errorf("limit %d: got isError=%v %q, want a validation error", limit, res.IsError, fixturetest.Text(res))
					}
				}
			})
			t.Run("log", func(t *testing.T) {
				e := s.Stderr.WaitEntry(t, fixturetest.Timeout, fixturetest.ToolCall("get_asset", "trace-cmdb", 1))
				want := fixture.Entry{
					Operation: fixture.OpRequest, Server: "cmdb", Method: "tools/call", Tool: "get_asset",
					Outcome: fixture.OutcomeOK, Protocol: proto, SessionID: fixturetest.SessionID, TraceID: "trace-cmdb", Step: 1,
				}
				if diff := cmp.Diff(want, e, fixturetest.IgnoreTimes); diff != "" {
					t.Errorf("log line (-want +got):\n%s", diff)
				}
				if e.MS <= 0 || e.Time.IsZero() {
					t.Errorf("ms %v, ts %v; want both set", e.MS, e.Time)
				}
				bad := s.Stderr.WaitEntry(t, fixturetest.Timeout, fixturetest.ToolCall("get_asset", "trace-cmdb", 2))
				if bad.Outcome != fixture.OutcomeToolError {
					t.Errorf("unknown host logged as %q, want tool_error", bad.Outcome)
				}
				first := map[string]string{fixturetest.Revision2026: "server/discover", fixturetest.Revision2025: "initialize"}[proto]
				hello := s.Stderr.WaitEntry(t, fixturetest.Timeout, func(e fixture.Entry) bool { return e.Method == first })
				if hello.Outcome != fixture.OutcomeOK || hello.Protocol != proto {
					t.Errorf("%s logged as %+v", first, hello)
				}
				if _, err := s.Session.ListTools(t.Context(), &mcp.ListToolsParams{Meta: fixturetest.Meta("trace-cmdb", 7)}); err != nil {
					t.Fatal(err)
				}
				list := s.Stderr.WaitEntry(t, fixturetest.Timeout, func(e fixture.Entry) bool { return e.Method == "tools/list" })
				if list.Protocol != proto || list.TraceID != "trace-cmdb" || list.Step != 7 || list.Outcome != fixture.OutcomeOK {
					t.Errorf("tools/list logged as %+v, want protocol %s, trace-cmdb, step 7, ok", list, proto)
				}
			})
		})
	}
}

func structuredBytes(t *testing.T, res *mcp.CallToolResult) int {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// BenchmarkToolsCallStdio measures one tools/call round trip over stdio to
// a real server process: the floor the host's own overhead adds to.
func BenchmarkToolsCallStdio(b *testing.B) {
	s := fixturetest.Start(b, bin, fixturetest.Options{})
	params := &mcp.CallToolParams{Name: "get_asset", Arguments: map[string]any{"hostname": "jump-prod-02"}}
	for b.Loop() {
		res, err := s.Session.CallTool(b.Context(), params)
		if err != nil || res.IsError {
			b.Fatalf("get_asset: %v %v", err, res)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}
