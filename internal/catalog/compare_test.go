package catalog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const defFetch = `{"type":"function","function":{"name":"docs__fetch","description":"[docs] Fetch one runbook page by path.","parameters":{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"}}}`

// changedFixture is the fixture after a change to its servers: $schema
// dropped from one tool, one tool removed, one added.
func changedFixture() []Entry {
	entries, _ := fixture()
	return []Entry{
		{Name: "cmdb__get_asset", Server: "cmdb", Def: json.RawMessage(strings.Replace(defGetAsset, schemaURL, "", 1))},
		entries[1],
		entries[2],
		{Name: "docs__fetch", Server: "docs", Def: json.RawMessage(defFetch)},
	}
}

func TestCompare(t *testing.T) {
	entries, _ := fixture()
	before := measure(t, entries, Options{RequestsPerTurn: 2})
	after := measure(t, changedFixture(), Options{})
	size := func(c *Catalog, name string) *ToolSize {
		for _, tool := range c.Tools {
			if tool.Name == name {
				return &ToolSize{Bytes: tool.Bytes, Tokens: tool.Tokens, MarginalTokens: tool.MarginalTokens}
			}
		}
		t.Fatalf("no tool %s", name)
		return nil
	}
	want := &Comparison{
		RequestsPerTurn: 3,
		Before:          Figures{Tools: 4, Bytes: 1979, Tokens: 472, TurnTokens: 3 * 472},
		After:           Figures{Tools: 4, Bytes: 1979 - 57 - 886 + len(defFetch), Tokens: after.Total.Tokens, TurnTokens: 3 * after.Total.Tokens},
		Tools: []ToolChange{
			{Name: "cmdb__get_asset", Server: "cmdb", Change: Changed,
				Before: size(before, "cmdb__get_asset"), After: size(after, "cmdb__get_asset"),
				BytesDelta: -57, TokensDelta: -17,
				MarginalDelta: size(after, "cmdb__get_asset").MarginalTokens - size(before, "cmdb__get_asset").MarginalTokens},
			{Name: "docs__fetch", Server: "docs", Change: Added, After: size(after, "docs__fetch"),
				BytesDelta: len(defFetch), TokensDelta: size(after, "docs__fetch").Tokens, MarginalDelta: size(after, "docs__fetch").MarginalTokens},
			{Name: "docs__explain", Server: "docs", Change: Removed, Before: size(before, "docs__explain"),
				BytesDelta: -886, TokensDelta: -197, MarginalDelta: -196},
		},
		Unchanged: 2,
	}
	want.Delta = Figures{Tools: 0, Bytes: want.After.Bytes - 1979, Tokens: want.After.Tokens - 472, TurnTokens: 3 * (want.After.Tokens - 472)}
	got := Compare(before, after)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}
	if got.After.Bytes != len(array(changedFixture())) {
		t.Errorf("after bytes = %d, want the array's %d", got.After.Bytes, len(array(changedFixture())))
	}

	// Measure with Before compares the same way, and so does a before
	// catalog read back from its JSON.
	var buf bytes.Buffer
	if err := before.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	read, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	viaOpts := measure(t, changedFixture(), Options{Before: read})
	if diff := cmp.Diff(want, viaOpts.Compare); diff != "" {
		t.Errorf("Measure with Before (-want +got):\n%s", diff)
	}
}

func TestCompareSame(t *testing.T) {
	entries, _ := fixture()
	c := measure(t, entries, Options{})
	got := Compare(c, c)
	if len(got.Tools) != 0 || got.Unchanged != 4 || got.Delta != (Figures{}) {
		t.Errorf("Compare(c, c) = %+v, want no change and 4 unchanged", got)
	}
}
