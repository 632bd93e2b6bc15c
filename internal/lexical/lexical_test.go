package lexical

import (
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"cmdb__get_asset", []string{"cmdb", "get", "asset"}},
		{"getAssetV2 HTTPServer", []string{"get", "asset", "v2", "http", "server"}},
		{"Who owns jump-prod-02?", []string{"own", "jump", "prod", "02"}},
		{"List the tickets, policies and addresses of a class", []string{"list", "ticket", "policy", "address", "class"}},
		{"status analysis boxes e.g. P1", []string{"status", "analysis", "box", "p1"}},
		{"Ünïcode_wörter", []string{"ünïcode", "wörter"}},
		{"", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Terms(tt.text)); diff != "" {
			t.Errorf("Terms(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

// TestBM25ByHand: three tools' documents and two questions, each score
// worked out by hand from the formula in the package documentation
// (N = 3, avgdl = 11/3).
func TestBM25ByHand(t *testing.T) {
	ix := NewIndex([][]string{
		Terms("get_asset: a host by hostname"), // get, asset, host, hostname
		Terms("find_assets: by service, environment"),
		Terms("open_ticket: a host"), // open, ticket, host
	})
	// idf(asset) = idf(host) = ln(1 + 1.5/2.5) = ln 1.6 = 0.470004
	if got := ix.IDF("host"); math.Abs(got-0.470004) > 1e-6 {
		t.Errorf("idf(host) = %f, want 0.470004", got)
	}
	// A term of one document: ln(1 + 2.5/1.5) = 0.980829; of none: 0.
	if got := ix.IDF("ticket"); math.Abs(got-0.980829) > 1e-6 || ix.IDF("nope") != 0 {
		t.Errorf("idf(ticket) = %f, idf(nope) = %f, want 0.980829 and 0", got, ix.IDF("nope"))
	}
	// "asset host": doc 0 holds both (|d| = 4: each term
	// 0.470004 · 2.2 / (1 + 1.2 · (0.25 + 0.75 · 4 / (11/3))) = 0.453151),
	// doc 2 host (|d| = 3: 0.507772), doc 1 asset (0.453151).
	want := []Hit{{0, 0.906302}, {2, 0.507772}, {1, 0.453151}}
	got := ix.Rank(Terms("which asset is that host?"), 0)
	if len(got) != len(want) {
		t.Fatalf("Rank = %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Doc != want[i].Doc || math.Abs(got[i].Score-want[i].Score) > 1e-6 {
			t.Errorf("Rank[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	// A repeated term counts once; k cuts the list.
	got = ix.Rank(Terms("open a ticket, a ticket!"), 1)
	if len(got) != 1 || got[0].Doc != 2 || math.Abs(got[0].Score-2.119292) > 1e-6 {
		t.Errorf("Rank(open ticket) = %v, want doc 2 at 2.119292 alone", got)
	}
	if got := ix.Rank(Terms("the weather"), 0); len(got) != 0 {
		t.Errorf("Rank(the weather) = %v, want nothing", got)
	}
	// Score is one document's entry of Scores.
	for _, q := range [][]string{Terms("which asset is that host?"), Terms("open a ticket, a ticket!"), nil} {
		all := ix.Scores(q)
		for d := range all {
			if got := ix.Score(q, d); math.Abs(got-all[d]) > 1e-12 {
				t.Errorf("Score(%v, %d) = %f, want %f", q, d, got, all[d])
			}
		}
	}
	if ix.Score([]string{"host"}, 3) != 0 || ix.Score([]string{"host"}, -1) != 0 {
		t.Error("Score of a document out of range is not 0")
	}
	if ix.DocFreq("host") != 2 || ix.DocFreq("nope") != 0 || !slices.Equal(slices.Collect(ix.Docs("host")), []int{0, 2}) {
		t.Errorf("host: DocFreq %d, Docs %v; want 2 and [0 2]", ix.DocFreq("host"), slices.Collect(ix.Docs("host")))
	}
	if NewIndex(nil).Rank([]string{"x"}, 3) != nil {
		t.Error("an empty index ranks something")
	}
}

func BenchmarkRank(b *testing.B) {
	var docs [][]string
	for i := range 150 {
		docs = append(docs, Terms("tool number "+string(rune('a'+i%26))+" does get and list of assets tickets policies hosts"))
	}
	ix := NewIndex(docs)
	q := Terms("who owns the host jump-prod-02 and what tickets does it have?")
	for b.Loop() {
		ix.Rank(q, 3)
	}
}
