package lint

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/hosteval/hosteval/internal/lexical"
)

// Contract gaps: what a host and a model need to know of a tool and are
// not told.

func checkToolDescription(p *run) {
	for _, t := range p.tools() {
		if t.tree == nil {
			continue
		}
		if !t.hasDescription || strings.TrimSpace(t.description) == "" {
			what := "has no description"
			if t.hasDescription {
				what = "has an empty description"
			}
			p.report(t.server, t, &textAt{pointer: "/description", field: "description"}, 0, "",
				fmt.Sprintf("the tool %s %s: the model has only its name to go by", t.name, what))
		}
	}
}

func checkParamDescription(p *run) {
	for _, t := range p.tools() {
		var missing []string
		for _, prop := range t.properties() {
			if prop.schema == nil {
				continue
			}
			d, _ := prop.schema["description"].(string)
			if strings.TrimSpace(d) == "" {
				missing = append(missing, prop.name)
			}
		}
		for _, name := range missing {
			p.report(t.server, t, &textAt{pointer: "/inputSchema/properties/" + escapePointer(name), field: "inputSchema.properties." + name}, 0,
				"", fmt.Sprintf("the parameter %s has no description: the model guesses what it takes from its name", name))
		}
	}
}

// destructiveVerbs are the words that make a tool sound like it destroys
// or overwrites something.
var destructiveVerbs = map[string]bool{"delete": true, "remove": true, "drop": true, "destroy": true, "purge": true,
	"wipe": true, "erase": true, "truncate": true, "kill": true, "terminate": true, "revoke": true, "reset": true,
	"overwrite": true, "uninstall": true, "unlink": true, "rm": true, "del": true, "shutdown": true, "deprovision": true,
	"evict": true, "clear": true, "flush": true, "rmdir": true, "nuke": true}

// destructiveWord returns the first word of the tool's name or title that
// sounds destructive, or "".
func destructiveWord(t *tool) string {
	title, _ := t.tree["title"].(string)
	for _, text := range []string{t.name, title} {
		for _, w := range nameWords(text) {
			if destructiveVerbs[w] {
				return w
			}
		}
	}
	return ""
}

// nameWords splits a name into its lowercased words (delete_file,
// deleteFile, delete-file, "Delete file").
func nameWords(s string) []string {
	var out []string
	var b strings.Builder
	prev := rune(0)
	flush := func() {
		if b.Len() > 0 {
			out = append(out, strings.ToLower(b.String()))
			b.Reset()
		}
	}
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	flush()
	return out
}

func checkDestructive(p *run) {
	for _, t := range p.tools() {
		if t.tree == nil {
			continue
		}
		word := destructiveWord(t)
		if word == "" {
			continue
		}
		readOnly, roSet := t.hint("readOnlyHint")
		_, dSet := t.hint("destructiveHint")
		txt := t.textOf("/name", kindName)
		switch {
		case t.annotations == nil:
			p.report(t.server, t, txt, 0, "",
				fmt.Sprintf("the tool %s sounds destructive (%q) and has no annotations: a host decides whether to ask the person from readOnlyHint and destructiveHint", t.name, word))
		case roSet && readOnly:
			p.report(t.server, t, &textAt{pointer: "/annotations/readOnlyHint", field: "annotations.readOnlyHint"}, 0, "",
				fmt.Sprintf("the tool %s sounds destructive (%q) and says it is read-only: a host runs it without asking the person", t.name, word))
		case !roSet && !dSet:
			p.report(t.server, t, &textAt{pointer: "/annotations", field: "annotations"}, 0, "",
				fmt.Sprintf("the tool %s sounds destructive (%q) and its annotations set neither readOnlyHint nor destructiveHint", t.name, word))
		}
	}
}

func checkAdditionalProperties(p *run) {
	for _, t := range p.tools() {
		if t.input == nil {
			continue
		}
		if ro, _ := t.hint("readOnlyHint"); ro {
			continue
		}
		if props, _ := t.input["properties"].(map[string]any); len(props) == 0 {
			continue
		}
		ap, set := t.input["additionalProperties"]
		if b, ok := ap.(bool); set && (!ok || !b) {
			continue // false, or a schema for the extra properties
		}
		what := "leaves additionalProperties unset (open)"
		if set {
			what = "sets additionalProperties to true"
		}
		p.report(t.server, t, &textAt{pointer: "/inputSchema/additionalProperties", field: "inputSchema.additionalProperties"}, 0, "",
			fmt.Sprintf("the tool %s writes (it is not read-only) and its input schema %s: arguments it never declared reach it", t.name, what))
	}
}

// typedBy are the keywords that say what a value is, short of "type".
var typedBy = []string{"type", "enum", "const", "$ref", "anyOf", "oneOf", "allOf", "not", "properties", "items"}

func checkRequiredTypes(p *run) {
	for _, t := range p.tools() {
		required, _ := t.input["required"].([]any)
		props, _ := t.input["properties"].(map[string]any)
		for i, r := range required {
			name, ok := r.(string)
			if !ok {
				continue
			}
			at := &textAt{pointer: fmt.Sprintf("/inputSchema/required/%d", i), field: fmt.Sprintf("inputSchema.required[%d]", i)}
			prop, declared := props[name]
			if !declared {
				p.report(t.server, t, at, i, quoteAll(name),
					fmt.Sprintf("the required parameter %s is not among the properties: the model cannot know what it takes", name))
				continue
			}
			schema, ok := prop.(map[string]any)
			if !ok {
				continue // true or false: a schema of its own kind
			}
			typed := false
			for _, k := range typedBy {
				if _, ok := schema[k]; ok {
					typed = true
					break
				}
			}
			if !typed {
				p.report(t.server, t, &textAt{pointer: "/inputSchema/properties/" + escapePointer(name), field: "inputSchema.properties." + name}, i, "",
					fmt.Sprintf("the required parameter %s has no type: the model must guess what to send", name))
			}
		}
	}
}

// Ambiguity: tools a model can take for one another.

// Near-duplicates are measured with the lexical package, the tokenizer and
// BM25 index the routing evals' lexical router uses: two descriptions are
// near-duplicates when their terms (lexical.Terms: stemmed, stop words
// out) overlap by nearDuplicate or more (Jaccard), and the finding says
// how each, as a query, scores the other against its own BM25 score.
// Candidate pairs are found by prefix filtering: with every description's
// terms ordered rarest first, two sets that overlap by t share a term among
// their first len - ceil(t*len) + 1, and their sizes are within t of each
// other; so a catalog of thousands of tools is never compared pair by pair.
const (
	nearDuplicate = 0.75
	// minTerms is the fewest distinct terms a description needs to be
	// compared: shorter ones say too little to be told apart by words.
	minTerms = 3
)

func checkNearDuplicates(p *run) {
	type doc struct {
		t     *tool
		terms []string
		ids   []int32 // distinct terms, rarest first
	}
	var docs []*doc
	for _, t := range p.tools() {
		if !t.hasDescription {
			continue
		}
		lower, _ := (&textAt{text: t.description, plain: isPlain(t.description)}).folded()
		docs = append(docs, &doc{t: t, terms: lexical.Terms(lower)})
	}
	all := make([][]string, len(docs))
	for i, d := range docs {
		all[i] = d.terms
	}
	ix := lexical.NewIndex(all)
	// Term IDs in the order of rarity, so that a sorted ID list is a doc's
	// terms rarest first.
	vocab := map[string]bool{}
	for _, d := range docs {
		for _, w := range d.terms {
			vocab[w] = true
		}
	}
	words := sortedSet(vocab)
	slices.SortStableFunc(words, func(a, b string) int { return ix.DocFreq(a) - ix.DocFreq(b) })
	id := make(map[string]int32, len(words))
	for i, w := range words {
		id[w] = int32(i)
	}
	// Prefix filtering with positions (PPJoin): the index holds each
	// description's prefix terms and where they stand in its list; a pair
	// met through a term at positions pa and pb can share at most what it
	// has shared so far, the term, and the shorter of the two rests.
	type entry struct{ doc, pos int32 }
	prefixes := map[int32][]entry{}
	// A description probes with its first n - ceil(t*n) + 1 terms, and is
	// indexed under its first n - ceil(2t/(1+t)*n) + 1: between two sets
	// of overlap t, the one probed later always meets the indexed
	// prefix of the other (PPJoin's mid-prefix).
	prefixLen := func(n int) int { return n - int(math.Ceil(nearDuplicate*float64(n))) + 1 }
	indexLen := func(n int) int { return n - int(math.Ceil(2*nearDuplicate/(1+nearDuplicate)*float64(n))) + 1 }
	for _, d := range docs {
		for _, w := range d.terms {
			d.ids = append(d.ids, id[w])
		}
		slices.Sort(d.ids)
		d.ids = slices.Compact(d.ids)
	}
	// Descriptions are probed shortest first, each against those probed
	// before it, and indexed once probed (which the mid-prefix needs: the
	// indexed set is never the longer one). So every list of the index
	// runs from short descriptions to long, and a probe skips, for good,
	// the start of a list too short to overlap it enough (start).
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(docs[a].ids) - len(docs[b].ids) })
	start := map[int32]int{}
	type pair struct{ a, b int }
	var pairs []pair
	shared := make([]int32, len(docs)) // overlap seen so far with doc i; -1: pruned
	var touched []int32
	for _, i := range order {
		a := docs[i]
		n := len(a.ids)
		if n < minTerms {
			continue
		}
		for _, j := range touched {
			shared[j] = 0
		}
		touched = touched[:0]
		for pa, w := range a.ids[:prefixLen(n)] {
			list := prefixes[w]
			k := start[w]
			for k < len(list) && float64(len(docs[list[k].doc].ids)) < nearDuplicate*float64(n) {
				k++ // too short to overlap enough, now and for every later probe
			}
			start[w] = k
			for _, e := range list[k:] {
				j := int(e.doc)
				if shared[j] < 0 {
					continue
				}
				m := len(docs[j].ids)
				need := int32(math.Ceil(nearDuplicate / (1 + nearDuplicate) * float64(n+m)))
				if shared[j] == 0 {
					touched = append(touched, int32(j))
				}
				if shared[j]+1+int32(min(n-pa-1, m-int(e.pos)-1)) < need {
					shared[j] = -1
					continue
				}
				shared[j]++
			}
		}
		for _, j32 := range touched {
			j := int(j32)
			if shared[j] <= 0 {
				continue
			}
			b := docs[j]
			if a.t.server != b.t.server && a.t.server.root() == b.t.server.root() {
				continue
			}
			// Most candidates fall short: the count stops as soon as
			// they cannot reach the overlap (a term short, for rounding).
			m := len(b.ids)
			common, ok := overlapAtLeast(a.ids, b.ids, int(math.Ceil(nearDuplicate/(1+nearDuplicate)*float64(n+m)))-1)
			if !ok || float64(common) < nearDuplicate*float64(n+m-common) {
				continue
			}
			// The finding is on the tool listed later.
			pairs = append(pairs, pair{max(i, j), min(i, j)})
		}
		for pos, w := range a.ids[:indexLen(n)] {
			prefixes[w] = append(prefixes[w], entry{int32(i), int32(pos)})
		}
	}
	slices.SortFunc(pairs, func(x, y pair) int { return cmp.Or(x.a-y.a, x.b-y.b) })
	for _, pr := range pairs {
		i, j := pr.a, pr.b
		a, b := docs[i], docs[j]
		common := intersect(a.ids, b.ids)
		union := len(a.ids) + len(b.ids) - common
		ab := ix.Score(a.terms, j) / ix.Score(a.terms, i)
		ba := ix.Score(b.terms, i) / ix.Score(b.terms, j)
		txt := a.t.textOf("/description", kindDescription)
		p.report(a.t.server, a.t, txt, 0, quoteAll(a.t.description),
			fmt.Sprintf("nearly the same description as %s/%s: %d of %d terms shared; as queries, each scores the other at %.0f%% and %.0f%% of its own BM25 score; a model can take one for the other",
				b.t.server.Name, b.t.name, common, union, 100*min(ab, 1), 100*min(ba, 1)))
	}
}

// overlapAtLeast counts the IDs two sorted lists share, or reports false
// as soon as they cannot share need.
func overlapAtLeast(a, b []int32, need int) (int, bool) {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		if n+min(len(a)-i, len(b)-j) < need {
			return n, false
		}
		switch {
		case a[i] == b[j]:
			n++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return n, n >= need
}

// intersect counts the IDs two sorted lists share.
func intersect(a, b []int32) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			n++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return n
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func checkNameCollisions(p *run, caseOnly bool) {
	type named struct {
		t    *tool
		name string
	}
	seen := map[string]named{}
	for _, t := range p.tools() {
		if t.name == "" {
			continue
		}
		full := p.opts.Namespace(t.server.Name, t.name)
		key := full
		if caseOnly {
			key = strings.ToLower(full)
		}
		prev, ok := seen[key]
		if !ok {
			seen[key] = named{t, full}
			continue
		}
		txt := t.textOf("/name", kindName)
		switch {
		case !caseOnly:
			p.report(t.server, t, txt, 0, quoteAll(t.name),
				fmt.Sprintf("the tool %s of %s and the tool %s of %s both become %s: the host refuses the catalog", prev.t.name, prev.t.server.Name, t.name, t.server.Name, full))
		case prev.name != full:
			p.report(t.server, t, txt, 0, quoteAll(t.name),
				fmt.Sprintf("%s and %s (of %s) differ only in case: a model, and some hosts, take one for the other", full, prev.name, prev.t.server.Name))
		}
	}
}
