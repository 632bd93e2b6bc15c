// Package lexical owns one lexical measure of how well a text answers a
// question: a tokenizer (Terms) and an Okapi BM25 index over a set of
// documents (Index). The lexical router (internal/model) ranks a
// catalog's tools by it for each question, and the catalog lint uses the
// same measure for descriptions that are near-duplicates: one definition,
// so that what a description A/B moves in CI is what the lint flags.
//
// It is a leaf: it imports the standard library only, and is
// deterministic (no map order reaches a result).
//
// Terms are words split on everything that is not a letter or a digit
// (`_` and `-` among them) and at case changes (getAsset, HTTPServer),
// lowercased, plural endings stemmed (tickets -> ticket, policies ->
// policy, addresses -> address), English stop words (the, of, who, ...)
// and single characters dropped. BM25 is Robertson and Spärck Jones's with Lucene's idf:
//
//	score(d, q) = Σ over distinct terms t of q:
//	    idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
//	idf(t) = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))
//
// with k1 = 1.2 and b = 0.75: N documents, n(t) of them holding t, |d| the
// document's length in terms, avgdl the mean length.
package lexical

import (
	"iter"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// BM25's parameters.
const (
	K1 = 1.2
	B  = 0.75
)

// Terms splits text into its terms, in order, repeats kept.
func Terms(text string) []string {
	var out []string
	for _, w := range words(text) {
		w = strings.ToLower(w)
		if stopWords[w] || utf8.RuneCountInString(w) < 2 {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// words splits text at every rune that is not a letter or a digit, and
// within a run of them at case changes: "getAssetV2" is get, Asset, V2;
// "HTTPServer" is HTTP, Server.
func words(text string) []string {
	var out []string
	start := -1
	var prev rune
	for i, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 {
				out = append(out, text[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start, prev = i, r
			continue
		}
		split := false
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			split = true // getAsset
		case unicode.IsLower(r) && unicode.IsUpper(prev) && i-start > utf8.RuneLen(prev):
			// HTTPServer: the S starts a word, so the split is before it.
			j := i - utf8.RuneLen(prev)
			out = append(out, text[start:j])
			start = j
		}
		if split {
			out = append(out, text[start:i])
			start = i
		}
		prev = r
	}
	if start >= 0 {
		out = append(out, text[start:])
	}
	return out
}

// stem takes a plural ending off a lowercased word: policies -> policy,
// addresses -> address, tickets -> ticket; words of three letters or less,
// and -ss, -us, -is endings (class, status, analysis), stay.
func stem(w string) string {
	n := len(w)
	switch {
	case n <= 3:
		return w
	case strings.HasSuffix(w, "ies") && n > 4:
		return w[:n-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
		return w[:n-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return w
	case strings.HasSuffix(w, "s"):
		return w[:n-1]
	}
	return w
}

// stopWords carry no meaning of their own in a question or a
// description.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(`a about an and any are as at be been but by can could did do does doing
		for from had has have how i if in into is it its just me my no not of on or our please should so
		than that the their them then there these they this those to too us was we were what when where
		which while who whom why will with would you your`) {
		m[w] = true
	}
	return m
}()

// Index is a BM25 index over documents, each a list of terms. It is
// read-only once made and safe for concurrent use.
type Index struct {
	n     int
	avgdl float64
	lens  []int
	// postings lists, per term, the documents holding it and how often,
	// in document order.
	postings map[string][]posting
}

type posting struct {
	doc int
	tf  int
}

// NewIndex indexes documents, each a list of terms (Terms of its text).
func NewIndex(docs [][]string) *Index {
	ix := &Index{n: len(docs), lens: make([]int, len(docs)), postings: map[string][]posting{}}
	total := 0
	// One map of counts, cleared for each document: each term gets one
	// posting per document, appended in document order, so the order the
	// map yields its terms in reaches nothing.
	counts := map[string]int{}
	for d, terms := range docs {
		ix.lens[d] = len(terms)
		total += len(terms)
		clear(counts)
		for _, t := range terms {
			counts[t]++
		}
		for t, n := range counts {
			ix.postings[t] = append(ix.postings[t], posting{d, n})
		}
	}
	if ix.n > 0 {
		ix.avgdl = float64(total) / float64(ix.n)
	}
	return ix
}

// Len is the number of documents.
func (ix *Index) Len() int { return ix.n }

// IDF is a term's inverse document frequency: 0 for a term no document
// holds, small but never negative for one that every document holds.
func (ix *Index) IDF(term string) float64 {
	df := len(ix.postings[term])
	if df == 0 {
		return 0
	}
	return math.Log(1 + (float64(ix.n)-float64(df)+0.5)/(float64(df)+0.5))
}

// Scores are every document's BM25 score for the query's terms (each
// distinct term counted once), in document order.
func (ix *Index) Scores(query []string) []float64 {
	scores := make([]float64, ix.n)
	seen := make(map[string]bool, len(query))
	for _, t := range query {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := ix.postings[t]
		if len(ps) == 0 {
			continue
		}
		idf := ix.IDF(t)
		for _, p := range ps {
			tf := float64(p.tf)
			norm := 1 - B + B*float64(ix.lens[p.doc])/ix.avgdl
			scores[p.doc] += idf * tf * (K1 + 1) / (tf + K1*norm)
		}
	}
	return scores
}

// Score is one document's BM25 score for the query (each distinct term
// counted once): the doc'th of Scores, computed alone, in time that grows
// with the query and the log of the postings, not with the index.
func (ix *Index) Score(query []string, doc int) float64 {
	if doc < 0 || doc >= ix.n {
		return 0
	}
	score := 0.0
	seen := make(map[string]bool, len(query))
	for _, t := range query {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := ix.postings[t]
		i, ok := slices.BinarySearchFunc(ps, doc, func(p posting, d int) int { return p.doc - d })
		if !ok {
			continue
		}
		tf := float64(ps[i].tf)
		norm := 1 - B + B*float64(ix.lens[doc])/ix.avgdl
		score += ix.IDF(t) * tf * (K1 + 1) / (tf + K1*norm)
	}
	return score
}

// DocFreq is how many documents hold the term.
func (ix *Index) DocFreq(term string) int { return len(ix.postings[term]) }

// Docs are the documents that hold the term, in document order.
func (ix *Index) Docs(term string) iter.Seq[int] {
	return func(yield func(int) bool) {
		for _, p := range ix.postings[term] {
			if !yield(p.doc) {
				return
			}
		}
	}
}

// Hit is a document and its score.
type Hit struct {
	Doc   int
	Score float64
}

// Rank returns the documents that score above zero for the query, best
// first (ties in document order), at most k of them (all for k <= 0).
func (ix *Index) Rank(query []string, k int) []Hit {
	var hits []Hit
	for d, s := range ix.Scores(query) {
		if s > 0 {
			hits = append(hits, Hit{d, s})
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	if k > 0 && len(hits) > k {
		hits = hits[:k]
	}
	return hits
}
