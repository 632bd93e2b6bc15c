package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/tokens"
)

func TestMeasureTools(t *testing.T) {
	entries, _ := fixture()
	c := measure(t, entries, Options{})

	// The figures, pinned: a change to the tokenizer or to the way they are
	// computed shows here first.
	want := []Tool{
		{Name: "cmdb__get_asset", Server: "cmdb", Bytes: 267, Tokens: 66, MarginalBytes: 268, MarginalTokens: 65,
			Split: Split{Description: Size{37, 11}, Parameters: Size{142, 36}, Envelope: Size{88, 19}}},
		{Name: "cmdb__find_assets", Server: "cmdb", Bytes: 397, Tokens: 103, MarginalBytes: 398, MarginalTokens: 102,
			Split: Split{Description: Size{56, 17}, Parameters: Size{251, 67}, Envelope: Size{90, 19}}},
		{Name: "docs__search", Server: "docs", Bytes: 424, Tokens: 108, MarginalBytes: 425, MarginalTokens: 107,
			Split: Split{Description: Size{41, 12}, Parameters: Size{298, 79}, Envelope: Size{85, 17}}},
		{Name: "docs__explain", Server: "docs", Bytes: 886, Tokens: 197, MarginalBytes: 887, MarginalTokens: 196,
			Split: Split{Description: Size{722, 160}, Parameters: Size{78, 19}, Envelope: Size{86, 18}}},
	}
	ignoreDigest := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".SHA256" }, cmp.Ignore())
	if diff := cmp.Diff(want, c.Tools, ignoreDigest); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	// The same figures, computed here from the bytes with nothing of the
	// package but the tokenizer.
	arr := string(array(entries))
	for i, e := range entries {
		got := c.Tools[i]
		if got.Bytes != len(e.Def) || got.Tokens != tokens.Count(string(e.Def)) {
			t.Errorf("%s: bytes, tokens = %d, %d; the definition has %d, %d", e.Name, got.Bytes, got.Tokens, len(e.Def), tokens.Count(string(e.Def)))
		}
		without := string(array(append(entries[:i:i], entries[i+1:]...)))
		if want := tokens.Count(arr) - tokens.Count(without); got.MarginalTokens != want {
			t.Errorf("%s: marginal tokens = %d, want %d", e.Name, got.MarginalTokens, want)
		}
		if want := len(arr) - len(without); got.MarginalBytes != want {
			t.Errorf("%s: marginal bytes = %d, want %d", e.Name, got.MarginalBytes, want)
		}
		var fn struct {
			Function struct {
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(e.Def, &fn); err != nil {
			t.Fatal(err)
		}
		// The description as sent: escapes (\"ops\") included, quotes not.
		_, rest, _ := strings.Cut(string(e.Def), `"description":"`)
		desc, _, _ := strings.Cut(rest, `","parameters"`)
		if want := (Size{len(desc), tokens.Count(desc)}); got.Description != want {
			t.Errorf("%s: description = %+v, want %+v", e.Name, got.Description, want)
		}
		if want := (Size{len(fn.Function.Parameters), tokens.Count(string(fn.Function.Parameters))}); got.Parameters != want {
			t.Errorf("%s: parameters = %+v, want %+v", e.Name, got.Parameters, want)
		}
		if sum := got.Description.Bytes + got.Parameters.Bytes + got.Envelope.Bytes; sum != got.Bytes {
			t.Errorf("%s: split bytes add up to %d, want %d", e.Name, sum, got.Bytes)
		}
	}
}

func TestMeasureTotals(t *testing.T) {
	entries, arr := fixture()
	tests := []struct {
		name string
		opts Options
		want Total
	}{
		{"default requests", Options{}, Total{
			Tools: 4, Bytes: 1979, Tokens: 472, DefBytes: 1974, DefTokens: 474,
			MarginalBytes: 1978, MarginalTokens: 470, SharedBytes: 1, SharedTokens: 2,
			TurnBytes: 3 * 1979, TurnTokens: 3 * 472,
			Split: Split{Description: Size{856, 200}, Parameters: Size{769, 201}, Envelope: Size{349, 73}},
		}},
		{"five requests", Options{RequestsPerTurn: 5}, Total{
			Tools: 4, Bytes: 1979, Tokens: 472, DefBytes: 1974, DefTokens: 474,
			MarginalBytes: 1978, MarginalTokens: 470, SharedBytes: 1, SharedTokens: 2,
			TurnBytes: 5 * 1979, TurnTokens: 5 * 472,
			Split: Split{Description: Size{856, 200}, Parameters: Size{769, 201}, Envelope: Size{349, 73}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := measure(t, entries, tt.opts)
			if diff := cmp.Diff(tt.want, c.Total); diff != "" {
				t.Errorf("total (-want +got):\n%s", diff)
			}
			if got, want := c.Total.Tokens, tokens.Count(string(arr)); got != want {
				t.Errorf("array tokens = %d, want tokens.Count of the array = %d", got, want)
			}
			// Bytes: n definitions, n-1 commas, 2 brackets. The marginals count
			// n commas, so one byte is shared: the brackets less one comma.
			if got, want := c.Total.Bytes, c.Total.DefBytes+len(entries)-1+2; got != want {
				t.Errorf("array bytes = %d, want %d", got, want)
			}
			if got := c.Total.MarginalTokens + c.Total.SharedTokens; got != c.Total.Tokens {
				t.Errorf("marginal + shared = %d, want the array's %d", got, c.Total.Tokens)
			}
		})
	}
}

func TestMeasureServers(t *testing.T) {
	entries, _ := fixture()
	c := measure(t, entries, Options{})
	want := []Server{
		{Name: "cmdb", Tools: 2, Bytes: 267 + 397, Tokens: 66 + 103, MarginalTokens: 65 + 102,
			Split: Split{Description: Size{37 + 56, 11 + 17}, Parameters: Size{142 + 251, 36 + 67}, Envelope: Size{88 + 90, 19 + 19}}},
		{Name: "docs", Tools: 2, Bytes: 424 + 886, Tokens: 108 + 197, MarginalTokens: 107 + 196,
			Split: Split{Description: Size{41 + 722, 12 + 160}, Parameters: Size{298 + 78, 79 + 19}, Envelope: Size{85 + 86, 17 + 18}}},
	}
	if diff := cmp.Diff(want, c.Servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}

// TestSmallCatalogs checks what no tool owns when there are too few tools
// for separators.
func TestSmallCatalogs(t *testing.T) {
	entries, _ := fixture()
	brackets := tokens.Count("[]")
	tests := []struct {
		name    string
		entries []Entry
		want    Total
	}{
		{"none", nil, Total{Bytes: 2, Tokens: brackets, SharedBytes: 2, SharedTokens: brackets, TurnBytes: 6, TurnTokens: 3 * brackets}},
		{"one", entries[:1], Total{
			Tools: 1, Bytes: 269, Tokens: tokens.Count("[" + defGetAsset + "]"), DefBytes: 267, DefTokens: 66,
			MarginalBytes: 267, MarginalTokens: tokens.Count("["+defGetAsset+"]") - brackets,
			SharedBytes: 2, SharedTokens: brackets,
			TurnBytes: 3 * 269, TurnTokens: 3 * tokens.Count("["+defGetAsset+"]"),
			Split: Split{Description: Size{37, 11}, Parameters: Size{142, 36}, Envelope: Size{88, 19}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := measure(t, tt.entries, Options{})
			if diff := cmp.Diff(tt.want, c.Total); diff != "" {
				t.Errorf("total (-want +got):\n%s", diff)
			}
			for _, f := range c.Findings {
				if f.Kind == KindLongDescription {
					t.Errorf("a lone tool's description is flagged as long: %+v", f)
				}
			}
		})
	}
}

func TestMeasureMismatch(t *testing.T) {
	entries, arr := fixture()
	tests := []struct {
		name  string
		array []byte
	}{
		{"indented", []byte("[\n" + defGetAsset + ",\n" + defFindAssets + ",\n" + defSearch + ",\n" + defExplain + "\n]")},
		{"reordered", array([]Entry{entries[1], entries[0], entries[2], entries[3]})},
		{"a tool missing", array(entries[:3])},
		{"escaped", func() []byte { b, _ := escapeHTML(arr); return b }()},
		{"empty", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Measure(context.Background(), entries, tt.array, Options{})
			if !errors.Is(err, ErrMismatch) {
				t.Errorf("Measure = %v, want ErrMismatch", err)
			}
		})
	}
}

func TestMeasureBadDefinition(t *testing.T) {
	tests := []struct {
		name string
		def  string
		want string
	}{
		{"not JSON", `{"type":`, "tool x: parse definition"},
		{"an array", `[1,2]`, "tool x: the definition is not a JSON object"},
		{"two values", `{}{}`, "tool x: parse definition: data after the JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries := []Entry{{Name: "x", Server: "s", Def: json.RawMessage(tt.def)}}
			_, err := Measure(context.Background(), entries, array(entries), Options{})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Measure = %v, want an error starting %q", err, tt.want)
			}
		})
	}
}

func TestMeasureCanceled(t *testing.T) {
	entries, arr := fixture()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Measure(ctx, entries, arr, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Measure = %v, want context.Canceled", err)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	entries, _ := fixture()
	c := measure(t, entries, Options{RequestsPerTurn: 4, LongTokens: 100})
	c.Compare = Compare(c, c)
	var buf bytes.Buffer
	if err := c.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := *c
	want.Compare = nil
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

func TestRead(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"a summary.json", `{"schema":1,"run":{}}`, `read catalog: kind "", want "hosteval.catalog" (the output of hosteval catalog -json)`},
		{"a newer schema", `{"kind":"hosteval.catalog","schema":2,"encoding":"o200k_base"}`, "read catalog: schema 2, want 1"},
		{"another tokenizer", `{"kind":"hosteval.catalog","schema":1,"encoding":"cl100k_base"}`, `read catalog: tokens counted with "cl100k_base", want "o200k_base"`},
		{"a tool without digest", `{"kind":"hosteval.catalog","schema":1,"encoding":"o200k_base","tools":[{"name":"a"}]}`, "read catalog: tool 0 has no name or sha256"},
		{"not JSON", `catalog`, "read catalog: invalid character 'c' looking for beginning of value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.doc))
			if err == nil || err.Error() != tt.want {
				t.Errorf("Read = %v, want %q", err, tt.want)
			}
		})
	}
}
