package tokens

import (
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// splitPattern is o200k_base's pre-tokenisation, as OpenAI's tiktoken and
// tiktoken-go have it: the text is cut into pieces, and merges never cross
// pieces.
const splitPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// codec is the vocabulary and the split pattern, immutable once built.
type codec struct {
	vocab *vocab
	// library is regexp2's matcher for the split, when the library's
	// code was asked for (HOSTEVAL_TRANSPORT=sdk); nil: splitFast, its
	// hand-written equal (docs/perf.md, "Hand-written fast paths").
	library *regexp2.Regexp
}

// newCodec reads the vocabulary; library chooses regexp2's split over
// splitFast.
func newCodec(library bool) (*codec, error) {
	v, err := parseVocab(vocabFile)
	if err != nil {
		return nil, err
	}
	c := &codec{vocab: v}
	if library {
		c.library = interpretedSplit()
	}
	return c, nil
}

// interpretedSplit compiles the split pattern for regexp2's interpreter.
// Compiled as written, it would run the matcher tiktoken-go generated and
// registered for it, which departs from the pattern (splitFast says
// where), in any process that links tiktoken-go's codec package (the
// tests do); the group around it changes no match.
func interpretedSplit() *regexp2.Regexp {
	return regexp2.MustCompile("(?:"+splitPattern+")", regexp2.None)
}

// eachPiece calls piece with the [start, end) byte offsets of each piece
// of s, which must be valid UTF-8, in order. Its error is regexp2's giving
// up; splitFast does not.
func (c *codec) eachPiece(s string, piece func(start, end int)) error {
	if c.library == nil {
		splitFast(s, piece)
		return nil
	}
	spans, err := c.library.FindAllStringIndex(s, -1)
	if err != nil {
		return err
	}
	for _, sp := range spans {
		piece(sp[0], sp[1])
	}
	return nil
}

// pieces returns the [start, end) byte offsets of the pieces of s, which
// must be valid UTF-8.
func (c *codec) pieces(s string) ([][]int, error) {
	var spans [][]int
	err := c.eachPiece(s, func(start, end int) { spans = append(spans, []int{start, end}) })
	return spans, err
}

// count returns the number of tokens of one piece: one if it is a token,
// else as many as byte-pair merging leaves.
func (c *codec) count(piece string) int {
	if _, ok := c.vocab.rank(piece); ok {
		return 1
	}
	if len(piece) < mergeHeapMin {
		return c.mergeScan(piece)
	}
	return c.mergeHeap(piece)
}

// noRank marks a pair that is not a token.
const noRank = ^uint32(0)

// mergeHeapMin is the piece length from which merging keeps its candidate
// pairs in a heap rather than scanning them all after each merge.
const mergeHeapMin = 96

// mergeScan merges the lowest-ranked adjacent pair, the leftmost among
// equals, until no pair is a token, and returns how many parts are left.
// It is quadratic, and the fastest on short pieces.
func (c *codec) mergeScan(piece string) int {
	type part struct {
		offset int
		rank   uint32
	}
	var buf [mergeHeapMin + 1]part
	parts := buf[:len(piece)+1]
	rank := func(i, skip int) uint32 {
		if i+skip+2 < len(parts) {
			if r, ok := c.vocab.rank(piece[parts[i].offset:parts[i+skip+2].offset]); ok {
				return r
			}
		}
		return noRank
	}
	for i := range parts {
		parts[i] = part{i, noRank}
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = rank(i, 0)
	}
	for len(parts) > 1 {
		best, at := noRank, 0
		for i, p := range parts[:len(parts)-1] {
			if p.rank < best {
				best, at = p.rank, i
			}
		}
		if best == noRank {
			break
		}
		parts[at].rank = rank(at, 1)
		if at > 0 {
			parts[at-1].rank = rank(at-1, 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return len(parts) - 1
}

// mergeHeap merges as mergeScan does, in O(n log n): the boundaries form a
// linked list and the candidate pairs a heap ordered by rank, then offset.
func (c *codec) mergeHeap(piece string) int {
	type node struct {
		prev, next int32
		rank       uint32
	}
	n := int32(len(piece))
	nodes := make([]node, n+1)
	for i := range nodes {
		nodes[i] = node{prev: int32(i) - 1, next: int32(i) + 1, rank: noRank}
	}
	nodes[n].next = -1
	rankOf := func(i int32) uint32 {
		j := nodes[i].next
		if j < 0 {
			return noRank
		}
		k := nodes[j].next
		if k < 0 {
			return noRank
		}
		if r, ok := c.vocab.rank(piece[i:k]); ok {
			return r
		}
		return noRank
	}
	h := make(pairHeap, 0, n)
	for i := int32(0); i+2 <= n; i++ {
		if r := rankOf(i); r != noRank {
			nodes[i].rank = r
			h = append(h, pair{r, i})
		}
	}
	h.init()
	parts := int(n)
	for len(h) > 0 {
		top := h.pop()
		i := top.offset
		if nodes[i].rank != top.rank {
			continue // stale: the pair changed since it was pushed
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		parts--
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			nodes[b].rank = rankOf(b)
			if nodes[b].rank != noRank {
				h.push(pair{nodes[b].rank, b})
			}
		}
	}
	return parts
}

type pair struct {
	rank   uint32
	offset int32
}

// pairHeap is a binary min-heap by rank, then offset, so that the leftmost
// of equal ranks merges first.
type pairHeap []pair

func (h pairHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].offset < h[b].offset
}

func (h pairHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(p pair) {
	*h = append(*h, p)
	for i := len(*h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		(*h)[i], (*h)[parent] = (*h)[parent], (*h)[i]
		i = parent
	}
}

func (h *pairHeap) pop() pair {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h pairHeap) down(i int) {
	for {
		child := 2*i + 1
		if child >= len(h) {
			return
		}
		if right := child + 1; right < len(h) && h.less(right, child) {
			child = right
		}
		if !h.less(child, i) {
			return
		}
		h[i], h[child] = h[child], h[i]
		i = child
	}
}

// validUTF8 returns s with each byte that is not part of a valid UTF-8
// sequence replaced by U+FFFD, as the splitter reads it (tiktoken-go counts
// the pieces it gets back, which hold U+FFFD where s had such a byte).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}
