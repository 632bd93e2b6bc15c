package catalog

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/tokens"
)

func TestFindings(t *testing.T) {
	entries, arrBytes := fixture()
	arr := string(arrBytes)
	c := measure(t, entries, Options{})
	byKind := map[string]Finding{}
	var kinds []string
	for _, f := range c.Findings {
		byKind[f.Kind] = f
		kinds = append(kinds, f.Kind)
	}
	if diff := cmp.Diff([]string{KindSchemaKeyword, KindRepeatedDefs, KindHTMLEscaping, KindLongDescription, KindServerPrefix}, kinds); diff != "" {
		t.Errorf("finding kinds (-want +got):\n%s", diff)
	}
	// removeSecond removes the second occurrence of s.
	removeSecond := func(in, s string) string {
		i := strings.Index(in, s)
		j := strings.Index(in[i+len(s):], s) + i + len(s)
		return in[:j] + in[j+len(s):]
	}
	delta := func(before, after string) Size {
		return Size{len(before) - len(after), tokens.Count(before) - tokens.Count(after)}
	}
	escaper := strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`)
	prefixes := strings.NewReplacer("[cmdb] ", "", "[docs] ", "")

	tests := []struct {
		kind string
		want Finding
		// array and tools are the figures computed here from the bytes, by
		// text substitution rather than re-encoding.
		array Size
		tools []Size
	}{
		{
			kind: KindSchemaKeyword,
			want: Finding{Kind: KindSchemaKeyword, Summary: `"$schema" in 1 input schema: dropping it saves 17 tokens per request`,
				Bytes: 57, Tokens: 17, TurnTokens: 51, Share: 0.036,
				Tools: []FindingTool{{Name: "cmdb__get_asset", Server: "cmdb", Bytes: 57, Tokens: 17}}},
			array: delta(arr, strings.Replace(arr, schemaURL, "", 1)),
			tools: []Size{delta(defGetAsset, strings.Replace(defGetAsset, schemaURL, "", 1))},
		},
		{
			kind: KindRepeatedDefs,
			want: Finding{Kind: KindRepeatedDefs,
				Summary: "1 repeat of a schema definitions block another tool already carries (2 tools share blocks) take 10.2% of the catalog: sharing them saves 48 tokens per request",
				Bytes:   186, Tokens: 48, TurnTokens: 144, Share: 0.1017,
				Tools: []FindingTool{{Name: "docs__search", Server: "docs", Bytes: 186, Tokens: 48, SameAs: "cmdb__find_assets"}},
				Notes: []string{
					"2 tools carry the same 177-byte $defs block, first cmdb__find_assets",
					"server docs: the repeats take 48 of its 305 tokens (15.7%)",
				}},
			array: delta(arr, removeSecond(arr, defsBlock)),
			tools: []Size{delta(defSearch, strings.Replace(defSearch, defsBlock, "", 1))},
		},
		{
			kind: KindHTMLEscaping,
			want: Finding{Kind: KindHTMLEscaping,
				Summary: `5 "<", ">" or "&" in 2 tools: a host that escapes them as \u003c sends 25 more bytes, 14 more tokens per request`,
				Bytes:   25, Tokens: 14, TurnTokens: 42, Share: 0.0297,
				Tools: []FindingTool{
					{Name: "cmdb__find_assets", Server: "cmdb", Bytes: 15, Tokens: 9, Count: 3},
					{Name: "docs__search", Server: "docs", Bytes: 10, Tokens: 5, Count: 2},
				}},
			// A cost on top, not a saving: escaped minus sent.
			array: delta(escaper.Replace(arr), arr),
			tools: []Size{delta(escaper.Replace(defFindAssets), defFindAssets), delta(escaper.Replace(defSearch), defSearch)},
		},
		{
			kind: KindLongDescription,
			want: Finding{Kind: KindLongDescription,
				Summary: "1 description over 150 tokens or 25% of the catalog: 160 tokens per request",
				Bytes:   722, Tokens: 160, TurnTokens: 480, Share: 0.339,
				Tools: []FindingTool{{Name: "docs__explain", Server: "docs", Bytes: 722, Tokens: 160, Note: "160 tokens, over 150; 33.9% of the catalog"}}},
			array: delta(arr, strings.Replace(arr, "[docs] "+longDescription, "", 1)),
			tools: []Size{delta(defExplain, strings.Replace(defExplain, "[docs] "+longDescription, "", 1))},
		},
		{
			kind: KindServerPrefix,
			want: Finding{Kind: KindServerPrefix,
				Summary: `the host's "[server] " prefix on 4 descriptions costs 14 tokens per request`,
				Bytes:   28, Tokens: 14, TurnTokens: 42, Share: 0.0297,
				Tools: []FindingTool{
					{Name: "cmdb__get_asset", Server: "cmdb", Bytes: 7, Tokens: 4},
					{Name: "cmdb__find_assets", Server: "cmdb", Bytes: 7, Tokens: 4},
					{Name: "docs__search", Server: "docs", Bytes: 7, Tokens: 3},
					{Name: "docs__explain", Server: "docs", Bytes: 7, Tokens: 3},
				}},
			array: delta(arr, prefixes.Replace(arr)),
			tools: []Size{
				delta(defGetAsset, prefixes.Replace(defGetAsset)), delta(defFindAssets, prefixes.Replace(defFindAssets)),
				delta(defSearch, prefixes.Replace(defSearch)), delta(defExplain, prefixes.Replace(defExplain)),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			got, ok := byKind[tt.kind]
			if !ok {
				t.Fatalf("no %s finding", tt.kind)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("finding (-want +got):\n%s", diff)
			}
			if g := (Size{got.Bytes, got.Tokens}); g != tt.array {
				t.Errorf("array figures = %+v, want %+v from the text", g, tt.array)
			}
			for i, ft := range got.Tools {
				if i < len(tt.tools) {
					if g := (Size{ft.Bytes, ft.Tokens}); g != tt.tools[i] {
						t.Errorf("%s figures = %+v, want %+v from the text", ft.Name, g, tt.tools[i])
					}
				}
			}
		})
	}
}

// TestFindingNotReencodable checks that a definition that does not
// re-encode to the bytes sent gets a note, not a saving.
func TestFindingNotReencodable(t *testing.T) {
	// Spaces after colons: valid JSON that no compact encoder gives back.
	spaced := strings.ReplaceAll(defGetAsset, `":"`, `": "`)
	entries := []Entry{
		{Name: "cmdb__get_asset", Server: "cmdb", Def: json.RawMessage(spaced)},
		{Name: "cmdb__find_assets", Server: "cmdb", Def: json.RawMessage(defFindAssets)},
	}
	c := measure(t, entries, Options{})
	want := []Finding{
		{Kind: KindSchemaKeyword, Summary: `"$schema" in 1 input schema: dropping it saves 0 tokens per request`,
			Tools: []FindingTool{{Name: "cmdb__get_asset", Server: "cmdb",
				Note: "not measured: re-encoding the unchanged definition gives 267 bytes, not the 273 sent"}},
			Notes: []string{"1 definition re-encoded unchanged would differ from the bytes sent: not counted"}},
	}
	got := c.Findings[:1]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	// The other tool's prefix is still measured; the spaced one is not.
	prefix := c.Findings[len(c.Findings)-1]
	if prefix.Kind != KindServerPrefix || prefix.Bytes != 7 || prefix.Tools[0].Note == "" || prefix.Tools[1].Bytes != 7 {
		t.Errorf("server prefix finding = %+v, want only cmdb__find_assets measured (7 bytes)", prefix)
	}
}

func TestLongDescriptionThreshold(t *testing.T) {
	entries, _ := fixture()
	tests := []struct {
		longTokens int
		want       []string
	}{
		{0, []string{"docs__explain"}},
		{500, []string{"docs__explain"}}, // still over a quarter of the catalog
		{12, []string{"cmdb__find_assets", "docs__explain"}},
		{10, []string{"cmdb__get_asset", "cmdb__find_assets", "docs__search", "docs__explain"}},
	}
	for _, tt := range tests {
		c := measure(t, entries, Options{LongTokens: tt.longTokens})
		var got []string
		for _, f := range c.Findings {
			if f.Kind == KindLongDescription {
				for _, ft := range f.Tools {
					got = append(got, ft.Name)
				}
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("-long-tokens %d: flagged (-want +got):\n%s", tt.longTokens, diff)
		}
	}
}

// TestNoFindings checks a plain catalog: no prefix, nothing to escape,
// nothing repeated.
func TestNoFindings(t *testing.T) {
	entries := []Entry{
		{Name: "a", Server: "s", Def: json.RawMessage(`{"type":"function","function":{"name":"a","description":"Do a.","parameters":{"type":"object"}}}`)},
		{Name: "b", Server: "s", Def: json.RawMessage(`{"type":"function","function":{"name":"b","description":"Do b.","parameters":{"$defs":{"X":{"type":"string"}},"type":"object"}}}`)},
	}
	c := measure(t, entries, Options{})
	if len(c.Findings) != 0 {
		t.Errorf("findings = %+v, want none", c.Findings)
	}
}

// TestFindingTableCollapses checks that a finding about many tools is one
// row in the text table, its tools left to the JSON.
func TestFindingTableCollapses(t *testing.T) {
	tests := []struct {
		tools    int
		wantRows int
		wantNote bool
	}{
		{maxListed, 1 + maxListed, false},
		{maxListed + 2, 1, true},
	}
	for _, tt := range tests {
		var entries []Entry
		for i := range tt.tools {
			name := "t" + strings.Repeat("x", i)
			entries = append(entries, Entry{Name: name, Server: "s", Def: json.RawMessage(
				`{"type":"function","function":{"name":"` + name + `","description":"Do it.","parameters":{` + schemaURL + `"type":"object"}}}`)})
		}
		c := measure(t, entries, Options{})
		table := c.findingTable()
		if len(table.Rows) != tt.wantRows {
			t.Errorf("%d tools: %d rows, want %d", tt.tools, len(table.Rows), tt.wantRows)
		}
		note := "schema_keyword: " + plural(tt.tools, "tool") + ", listed in the JSON output"
		has := false
		for _, n := range table.Notes {
			has = has || n == note
		}
		if has != tt.wantNote {
			t.Errorf("%d tools: note %q present = %v, want %v; notes %q", tt.tools, note, has, tt.wantNote, table.Notes)
		}
		if got := len(c.Findings[0].Tools); got != tt.tools {
			t.Errorf("%d tools: the finding lists %d", tt.tools, got)
		}
	}
}

// TestFindingsBytesOnly: Findings finds what Measure finds, on the same
// tools with the same bytes at stake, and no token figure but a long
// description's own count; the share of the catalog is not a reason there.
func TestFindingsBytesOnly(t *testing.T) {
	entries, _ := fixture()
	full := measure(t, entries, Options{})
	got, err := Findings(context.Background(), entries, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(full.Findings) {
		t.Fatalf("%d findings, want %d (those of Measure)", len(got), len(full.Findings))
	}
	for i, f := range got {
		want := full.Findings[i]
		if f.Kind != want.Kind || f.Bytes != want.Bytes || f.Tokens != 0 || f.Share != 0 || len(f.Tools) != len(want.Tools) {
			t.Errorf("%s: bytes %d tokens %d share %v tools %d; want bytes %d, no tokens, %d tools", f.Kind, f.Bytes, f.Tokens, f.Share, len(f.Tools), want.Bytes, len(want.Tools))
			continue
		}
		for j, ft := range f.Tools {
			if w := want.Tools[j]; ft.Name != w.Name || ft.Bytes != w.Bytes || ft.Tokens != 0 || ft.SameAs != w.SameAs || ft.Count != w.Count {
				t.Errorf("%s: tool %+v, want %+v without tokens", f.Kind, ft, w)
			}
		}
	}
	if got[0].Summary != `"$schema" in 1 input schema: dropping it saves 57 bytes per request` {
		t.Errorf("summary %q", got[0].Summary)
	}
	// docs__explain is over 150 tokens by its own count; a description of
	// a third of a two-tool catalog is long to Measure, not to Findings.
	short := []Entry{
		{Name: "a", Server: "s", Def: json.RawMessage(`{"type":"function","function":{"name":"a","description":"Get one host by its exact hostname, with its owner, team, service, environment, address and the notes of whoever is on call.","parameters":{"type":"object"}}}`)},
		{Name: "b", Server: "s", Def: json.RawMessage(`{"type":"function","function":{"name":"b","parameters":{"type":"object"}}}`)},
	}
	if c := measure(t, short, Options{}); len(c.Findings) != 1 || c.Findings[0].Kind != KindLongDescription {
		t.Fatalf("Measure findings %+v, want the long description by its share", c.Findings)
	}
	if got, err := Findings(context.Background(), short, Options{}); err != nil || len(got) != 0 {
		t.Errorf("Findings = %+v, %v; want none", got, err)
	}
}

// TestFindingsUnparsedDefinitions: Findings parses a definition only when
// a finding may concern it; on definitions whose finding hides behind an
// escape, a duplicate key or a "function" that is no object, it finds what
// Measure (which parses every definition) finds, and it refuses what
// Measure refuses.
func TestFindingsUnparsedDefinitions(t *testing.T) {
	long := strings.Repeat("word ", 200)
	tests := []struct {
		name, def string
		kinds     []string
		err       bool
	}{
		{"plain", `{"type":"function","function":{"name":"a","description":"Plain.","parameters":{"type":"object"}}}`, nil, false},
		{"escaped $schema", `{"type":"function","function":{"name":"a","parameters":{"\u0024schema":"x","type":"object"}}}`, []string{KindSchemaKeyword}, false},
		{"server prefix", `{"type":"function","function":{"name":"a","description":"[s] Plain.","parameters":{"type":"object"}}}`, []string{KindServerPrefix}, false},
		{"escaped server prefix", `{"type":"function","function":{"name":"a","description":"\u005bs] Plain.","parameters":{"type":"object"}}}`, []string{KindServerPrefix}, false},
		{"long", `{"type":"function","function":{"name":"a","description":"` + long + `","parameters":{"type":"object"}}}`, []string{KindLongDescription}, false},
		{"long, then short", `{"type":"function","function":{"name":"a","description":"` + long + `","parameters":{"type":"object"}},"function":{"description":"x"}}`, nil, false},
		{"html", `{"type":"function","function":{"name":"a","description":"a <b>","parameters":{"type":"object"}}}`, []string{KindHTMLEscaping}, false},
		{"function not an object", `{"type":"function","function":"x"}`, nil, false},
		{"null", `null`, nil, true},
		{"array", `[]`, nil, true},
		{"invalid", `{"type":`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries := []Entry{{Name: "a", Server: "s", Def: json.RawMessage(tt.def)}}
			got, err := Findings(context.Background(), entries, Options{})
			_, merr := Measure(context.Background(), entries, array(entries), Options{})
			if (err != nil) != tt.err || (merr != nil) != tt.err {
				t.Fatalf("Findings error %v, Measure error %v; want an error: %v", err, merr, tt.err)
			}
			if tt.err {
				if err.Error() != merr.Error() {
					t.Errorf("Findings error %q, Measure's %q", err, merr)
				}
				return
			}
			full := measure(t, entries, Options{})
			var kinds, fullKinds []string
			for _, f := range got {
				kinds = append(kinds, f.Kind)
			}
			for _, f := range full.Findings {
				if f.Kind == KindLongDescription && f.Tools[0].Note != "" && !strings.Contains(f.Tools[0].Note, "tokens, over") {
					continue // long by its share of a one-tool catalog: Measure's only
				}
				fullKinds = append(fullKinds, f.Kind)
			}
			if !slices.Equal(kinds, tt.kinds) || !slices.Equal(kinds, fullKinds) {
				t.Errorf("Findings kinds %v, Measure's %v; want %v", kinds, fullKinds, tt.kinds)
			}
		})
	}
}
