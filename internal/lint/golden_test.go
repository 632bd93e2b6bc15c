package lint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/goldenfile"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/lexical"
)

// goldenCatalog is a catalog every rule fires on, many times: the
// benchmark's generated catalog (1,000 tools), a catalog of short
// descriptions over a small vocabulary (near-duplicates at every overlap
// around the threshold), every rule's bad and good example, the poisoned
// catalog of the tests, and hostile text. Its findings are the golden
// file: what a change made for speed must leave as it was.
func goldenCatalog() []Server {
	servers := catalogOf(1000)
	servers = append(servers, nearCatalog(300)...)
	for _, r := range rules {
		for _, e := range []Example{r.Bad, r.Good} {
			for i, s := range e.servers(false) {
				s.Name = fmt.Sprintf("%s-%s%d", s.Name, r.ID, i)
				servers = append(servers, s)
			}
		}
	}
	servers = append(servers, poisoned()...)
	hostile := hostileText(8 << 10)
	servers = append(servers, Server{Name: "hostile", Instructions: hostile, Tools: raws(toolWith(hostile))})
	return servers
}

// nearCatalog is n tools over servers of 50, whose descriptions are 3 to
// 12 words of a vocabulary of 40, each either new or a copy of an earlier
// one with a few words changed, added or dropped: pairs at every overlap.
func nearCatalog(n int) []Server {
	r := rand.New(rand.NewPCG(3, 4))
	word := func() string { return fmt.Sprintf("term%02d", r.IntN(40)) }
	var descs [][]string
	var servers []Server
	for i := range n {
		if i%50 == 0 {
			servers = append(servers, Server{Name: fmt.Sprintf("near%02d", i/50)})
		}
		var d []string
		if i > 0 && r.IntN(2) == 0 {
			d = append(d, descs[r.IntN(len(descs))]...)
			for range r.IntN(4) {
				switch k := r.IntN(len(d) + 1); {
				case r.IntN(3) == 0 && len(d) > 3 && k < len(d):
					d = append(d[:k], d[k+1:]...)
				case k < len(d):
					d[k] = word()
				default:
					d = append(d, word())
				}
			}
		} else {
			for range 3 + r.IntN(10) {
				d = append(d, word())
			}
		}
		descs = append(descs, d)
		tool, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("near_%03d", i), "description": strings.Join(d, " "),
			"inputSchema": map[string]any{"type": "object"}, "annotations": map[string]any{"readOnlyHint": true}})
		s := &servers[len(servers)-1]
		s.Tools = append(s.Tools, tool)
	}
	return servers
}

// TestFindingsGolden: the findings of goldenCatalog, one JSON line each,
// suppressed ones too (without the rule's fix), are those of testdata/findings.golden.jsonl.
func TestFindingsGolden(t *testing.T) {
	servers := goldenCatalog()
	rep, err := Lint(context.Background(), servers, Options{Namespace: host.Namespaced,
		Config: Config{Suppress: []Suppression{{Rule: "near-duplicate-description", Server: "near03", Reason: "a test"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, list := range [][]Finding{rep.Findings, rep.Suppressed} {
		for _, f := range list {
			f.Fix = "" // the rule's, checked by TestRuleExamples
			line, err := json.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "counts %+v\n", rep.Counts)
	goldenfile.Check(t, filepath.Join("testdata", "findings.golden.jsonl"), b.Bytes())
	rules := map[string]int{}
	for _, f := range rep.Findings {
		rules[f.Rule]++
	}
	// Every rule but pin-changed (no pins here) fires on the catalog.
	for _, r := range Rules() {
		if r.ID != "pin-changed" && rules[r.ID] == 0 {
			t.Errorf("rule %s does not fire on the golden catalog", r.ID)
		}
	}
	if rules["near-duplicate-description"] < 20 || len(rep.Suppressed) < 5 {
		t.Errorf("%d near-duplicates found, %d suppressed: want many of both", rules["near-duplicate-description"], len(rep.Suppressed))
	}
}

// TestNearDuplicatesAllPairs: the candidate pruning of near-duplicate-
// description finds the pairs that comparing every description with
// every other finds.
func TestNearDuplicatesAllPairs(t *testing.T) {
	servers := append(nearCatalog(300), catalogOf(300)...)
	rep := lintOf(t, servers, Options{Config: only("near-duplicate-description")})
	got := map[string]bool{}
	for _, f := range rep.Findings {
		other, _, _ := strings.Cut(strings.TrimPrefix(f.Message, "nearly the same description as "), ":")
		got[f.Server+"/"+f.Tool+" ~ "+other] = true
	}
	type doc struct {
		name  string
		terms map[string]bool
	}
	var docs []doc
	for _, s := range servers {
		for _, raw := range s.Tools {
			var tl struct{ Name, Description string }
			if err := json.Unmarshal(raw, &tl); err != nil {
				t.Fatal(err)
			}
			terms := map[string]bool{}
			for _, w := range lexical.Terms(strings.ToLower(tl.Description)) {
				terms[w] = true
			}
			docs = append(docs, doc{s.Name + "/" + tl.Name, terms})
		}
	}
	want := map[string]bool{}
	for i, a := range docs {
		for _, b := range docs[:i] {
			if len(a.terms) < minTerms || len(b.terms) < minTerms {
				continue
			}
			common := 0
			for w := range a.terms {
				if b.terms[w] {
					common++
				}
			}
			if float64(common) >= nearDuplicate*float64(len(a.terms)+len(b.terms)-common) {
				want[a.name+" ~ "+b.name] = true
			}
		}
	}
	if len(want) < 50 {
		t.Fatalf("%d near-duplicate pairs in the catalog: want enough to test the pruning", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pairs (-all pairs +found):\n%s", diff)
	}
}

// FuzzScanHidden: the one pass over a text finds, for each kind of hidden
// character, what reading the text for that kind alone finds.
func FuzzScanHidden(f *testing.F) {
	f.Add(hostileText(512))
	f.Add("a\u200d👩\x1b[1m\u202e\U000E0041\ufe0f\ufe01\u00ad\xff\t")
	f.Fuzz(func(t *testing.T, s string) {
		got := scanHidden(s)
		for k, pick := range hiddenPicks {
			want := hiddenRun{from: -1, to: -1}
			for i, r := range s {
				if !pick(s, i, r) {
					continue
				}
				want.n++
				if want.from < 0 {
					want.from, want.first = i, r
				}
				if want.to < 0 || want.to == i {
					want.to = i + utf8.RuneLen(r)
				}
			}
			var g hiddenRun
			if got != nil {
				g = got[k]
			}
			if want.n == 0 && g.n == 0 {
				continue
			}
			if g != want {
				t.Errorf("kind %d of %q: one pass %+v, alone %+v", k, s, g, want)
			}
		}
	})
}
