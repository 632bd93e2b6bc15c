package catalog

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// Hand-written definitions in the host's shape: compact, HTML escaping off,
// the envelope in struct order, schema keys sorted as encoding/json sorts
// map keys.
const (
	schemaURL = `"$schema":"https://json-schema.org/draft/2020-12/schema",`

	defGetAsset = `{"type":"function","function":{"name":"cmdb__get_asset","description":"[cmdb] Look up one asset by hostname.","parameters":{` + schemaURL + `"properties":{"hostname":{"type":"string"}},"required":["hostname"],"type":"object"}}}`

	// defsBlock is repeated in two tools of two servers.
	defsBlock = `"$defs":{"Asset":{"properties":{"env":{"enum":["prod","staging","dev"],"type":"string"},"hostname":{"type":"string"},"owner":{"type":"string"}},"required":["hostname"],"type":"object"}},`

	defFindAssets = `{"type":"function","function":{"name":"cmdb__find_assets","description":"[cmdb] Find assets where owner <> \"ops\" & env is prod.","parameters":{` + defsBlock + `"properties":{"match":{"$ref":"#/$defs/Asset"}},"type":"object"}}}`

	defSearch = `{"type":"function","function":{"name":"docs__search","description":"[docs] Search runbooks for <asset> pages.","parameters":{` + defsBlock + `"properties":{"about":{"$ref":"#/$defs/Asset"},"query":{"type":"string"}},"required":["query"],"type":"object"}}}`

	longDescription = "Explain a runbook step by step for an on-call engineer who has never seen the system before. " +
		"The explanation covers what the step changes, which hosts and services it touches, what can go wrong, how to tell that it went wrong, and how to roll it back. " +
		"Use it when the person asks why a step exists or what it does; do not use it to run the step, and do not use it for steps that are already explained in the ticket. " +
		"The answer is plain text in short paragraphs, at most one screen long, with the commands quoted exactly as the runbook gives them so that they can be copied. " +
		"It never runs anything itself and it never changes the runbook. " +
		"When the runbook and the live system disagree, it says so and trusts neither."

	defExplain = `{"type":"function","function":{"name":"docs__explain","description":"[docs] ` + longDescription + `","parameters":{"properties":{"step":{"type":"integer"}},"required":["step"],"type":"object"}}}`
)

// fixture is the catalog most tests measure: four tools of two servers.
func fixture() ([]Entry, []byte) {
	entries := []Entry{
		{Name: "cmdb__get_asset", Server: "cmdb", Def: json.RawMessage(defGetAsset)},
		{Name: "cmdb__find_assets", Server: "cmdb", Def: json.RawMessage(defFindAssets)},
		{Name: "docs__search", Server: "docs", Def: json.RawMessage(defSearch)},
		{Name: "docs__explain", Server: "docs", Def: json.RawMessage(defExplain)},
	}
	return entries, array(entries)
}

// array joins definitions the way the host does.
func array(entries []Entry) []byte {
	defs := make([]string, len(entries))
	for i, e := range entries {
		defs[i] = string(e.Def)
	}
	return []byte("[" + strings.Join(defs, ",") + "]")
}

func measure(t testing.TB, entries []Entry, opts Options) *Catalog {
	t.Helper()
	c, err := Measure(context.Background(), entries, array(entries), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
