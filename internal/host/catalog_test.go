package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/record"
)

func rawTools(tools ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		out[i] = json.RawMessage(t)
	}
	return out
}

func TestNewCatalogRefuses(t *testing.T) {
	tests := []struct {
		name  string
		tools []json.RawMessage
		want  string
	}{
		{"no name", rawTools(`{"description":"x"}`), "tool 1 has no name"},
		{"a name twice", rawTools(`{"name":"a"}`, `{"name":"a"}`), `tool "a" is listed twice`},
		{"not a tool", rawTools(`{"name":3}`), "tool 1:"},
	}
	for _, tt := range tests {
		_, err := NewCatalog("f.json", tt.tools)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestCatalogServer: a catalog stands in for a server: its tools are
// offered as the catalog holds them (schema bytes and all), the hosts of a
// run share one table, a call of one of its tools is answered by the host
// and sends nothing, and a proposal runs nothing at all.
func TestCatalogServer(t *testing.T) {
	cat, err := NewCatalog("catalogs/x.json", rawTools(
		`{"name":"get_thing","description":"Get one thing.","inputSchema":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}`,
		`{"name":"list things","inputSchema":{"type":"object"}}`,
		`{"name":"slow","execution":{"taskSupport":"required"}}`))
	if err != nil {
		t.Fatal(err)
	}
	cat.Protocol = Revision20260728
	var tables Tables
	start := func() *Host {
		h, err := Start(context.Background(), Options{Servers: []ServerSpec{{Name: "x", Catalog: cat}}, Tables: &tables,
			Descriptions: map[string]string{"x__get_thing": "Fetch a thing by id."}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	h1, h2 := start(), start()
	want := `[{"type":"function","function":{"name":"x__get_thing","description":"[x] Fetch a thing by id.","parameters":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}},` +
		`{"type":"function","function":{"name":"x__list_things","description":"[x]","parameters":{"type":"object"}}}]`
	if diff := cmp.Diff(want, string(h1.ToolsJSON())); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if &h1.ToolsJSON()[0] != &h2.ToolsJSON()[0] {
		t.Error("two hosts over one catalog built two tables, want one")
	}
	if s := h1.Servers()[0]; s.Tools != 3 || s.Protocol != Revision20260728 || s.EraReason != "catalog: catalogs/x.json" || s.Error != "" {
		t.Errorf("server = %+v", s)
	}
	if !h1.Offers("x__get_thing") || h1.Offers("x__slow") || h1.Offers("x__nope") {
		t.Error("Offers: want x__get_thing offered, the task-only tool and an unknown one not")
	}

	res, err := h1.NewConversation(script(t, `[{call: "x__get_thing {id: a}"}, {answer: done}]`), "").Ask(context.Background(), "q")
	if err != nil {
		t.Fatal(err)
	}
	c := res.Calls[0]
	if c.Outcome != record.OutcomeError || c.Rounds != 0 || !strings.Contains(c.Error, "the server x is not connected (its tools were read from catalogs/x.json)") {
		t.Errorf("call = %+v, want an error sending nothing", c)
	}

	res, calls, err := h2.NewConversation(script(t, `[{calls: ["x__get_thing {id: a}", "nope {}"]}]`), "").Propose(context.Background(), "q")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Calls) != 0 || len(res.Requests) != 1 || len(calls) != 2 || calls[0].Name != "x__get_thing" || calls[1].Name != "nope" {
		t.Errorf("Propose = %+v, %+v; want the two calls proposed and none run", res, calls)
	}
}

// TestCatalogInstructions: a connected server's catalog carries its
// instructions as it gave them, under both revisions, and a subset keeps
// them.
func TestCatalogInstructions(t *testing.T) {
	for _, mode := range []Mode{ModeAuto, ModeLegacy} {
		h := startHost(t, Options{Servers: []ServerSpec{fixture("cmdb")}, Protocol: mode})
		c := h.Catalog("cmdb")
		const want = "A read-only inventory of the company's hosts: who owns each one, what it runs and where. " +
			"Look a host up here before acting on it; never guess a hostname or an owner."
		if c == nil || c.Instructions != want {
			t.Fatalf("%s: catalog %+v, want the instructions %q", mode, c, want)
		}
		if sub := c.Subset("s", []int{0}); sub.Instructions != want {
			t.Errorf("%s: subset instructions %q", mode, sub.Instructions)
		}
	}
}
