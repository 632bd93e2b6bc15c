package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"

	"github.com/hosteval/hosteval/internal/goldenfile"
	"github.com/hosteval/hosteval/internal/tokens"
)

// readArray reads a tools array from testdata (see testdata/mkarrays) and
// its entries, each tool's server being its name's prefix.
func readArray(t testing.TB, file string) ([]Entry, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	arr := bytes.TrimSuffix(data, []byte("\n"))
	var defs []json.RawMessage
	if err := json.Unmarshal(arr, &defs); err != nil {
		t.Fatal(err)
	}
	entries := make([]Entry, len(defs))
	for i, d := range defs {
		var fn struct {
			Function struct{ Name string } `json:"function"`
		}
		if err := json.Unmarshal(d, &fn); err != nil {
			t.Fatal(err)
		}
		server, _, _ := strings.Cut(fn.Function.Name, "__")
		entries[i] = Entry{Name: fn.Function.Name, Server: server, Def: d}
	}
	return entries, arr
}

// recount is the slow reference: each tool's marginal cost from counting
// the whole array, and the array without the tool, from scratch.
func recount(entries []Entry) (arrayTokens int, marginals []Size) {
	defs := make([][]byte, len(entries))
	for i, e := range entries {
		defs[i] = e.Def
	}
	arr := joinArray(defs, -1)
	arrayTokens = tokens.Count(string(arr))
	for i := range defs {
		without := joinArray(defs, i)
		marginals = append(marginals, Size{len(arr) - len(without), arrayTokens - tokens.Count(string(without))})
	}
	return arrayTokens, marginals
}

// TestMarginalsMatchRecount checks the marginal costs, computed around each
// cut, against the slow reference, on real catalogs (the fixture servers;
// the first servers of the 138-tool catalog of the npm reference servers)
// and hand-written ones of one to four tools. The whole 138-tool catalog
// is checked against the reference's figures kept in testdata (below): the
// reference takes a minute under the race detector.
func TestMarginalsMatchRecount(t *testing.T) {
	fixtureEntries, _ := fixture()
	fixtures, _ := readArray(t, "fixtures.json")
	peers, _ := readArray(t, "peers138.json")
	tests := []struct {
		name    string
		entries []Entry
	}{
		{"fixture", fixtureEntries},
		{"one tool", fixtureEntries[3:]},
		{"two tools", fixtureEntries[1:3]},
		{"fixture servers", fixtures},
		{"fixture and npm servers", append(append([]Entry{}, fixtures...), peers[:37]...)},
	}
	lib, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arr := array(tt.entries)
			c, err := Measure(context.Background(), tt.entries, arr, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// The array's tokens are tiktoken's for the exact bytes.
			if want, err := lib.Count(string(arr)); err != nil || c.Total.Tokens != want {
				t.Fatalf("array tokens = %d; tiktoken-go says %d (%v)", c.Total.Tokens, want, err)
			}
			_, want := recount(tt.entries)
			for i, tool := range c.Tools {
				if got := (Size{tool.MarginalBytes, tool.MarginalTokens}); got != want[i] {
					t.Errorf("%s: marginal bytes, tokens = %v; recounting the array without it: %v", tool.Name, got, want[i])
				}
			}
		})
	}
}

// TestMarginalsPeers138 checks every marginal cost of the 138-tool catalog
// against the slow reference's, which -update computes and writes to
// testdata/peers138.marginals.
func TestMarginalsPeers138(t *testing.T) {
	entries, arr := readArray(t, "peers138.json")
	render := func(arrayTokens int, marginals []Size) []byte {
		var b bytes.Buffer
		fmt.Fprintf(&b, "# %d tools, %d bytes, %d tokens; each tool's marginal bytes and tokens\n", len(entries), len(arr), arrayTokens)
		for i, m := range marginals {
			fmt.Fprintf(&b, "%s %d %d\n", entries[i].Name, m.Bytes, m.Tokens)
		}
		return b.Bytes()
	}
	if goldenfile.Updating() {
		golden(t, "peers138.marginals", render(recount(entries)))
		return
	}
	c, err := Measure(context.Background(), entries, arr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	marginals := make([]Size, len(c.Tools))
	for i, tool := range c.Tools {
		marginals[i] = Size{tool.MarginalBytes, tool.MarginalTokens}
	}
	golden(t, "peers138.marginals", render(c.Total.Tokens, marginals))
}
