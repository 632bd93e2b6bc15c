package runner

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scenario"
)

// SelectShard returns shard s of the cases (all of them for the zero
// shard), in the suite's order. The slice depends on the case IDs alone,
// never on timing or the machine: the cases are ordered by a hash of their
// ID (the ID breaks a tie) and dealt out in turn, the first to shard 1, the
// second to shard 2, and so on. So every shard of one suite, on any
// machine, picks the same cases; the shards together hold every case once;
// their sizes differ by one at most; and the repeats of a scenario, whose
// IDs differ, spread over the shards instead of landing on one.
func SelectShard(cases []*scenario.Case, s record.Shard) []*scenario.Case {
	if s.IsZero() {
		return cases
	}
	type keyed struct {
		hash uint64
		c    *scenario.Case
	}
	order := make([]keyed, len(cases))
	for i, c := range cases {
		h := fnv.New64a()
		h.Write([]byte(c.ID))
		order[i] = keyed{h.Sum64(), c}
	}
	slices.SortFunc(order, func(a, b keyed) int {
		return cmp.Or(cmp.Compare(a.hash, b.hash), cmp.Compare(a.c.ID, b.c.ID))
	})
	var picked []*scenario.Case
	for i := s.K - 1; i < len(order); i += s.N {
		picked = append(picked, order[i].c)
	}
	slices.SortFunc(picked, func(a, b *scenario.Case) int { return cmp.Compare(a.Index, b.Index) })
	return picked
}

// SuiteID identifies a suite as expanded into cases: a hash of its source
// files (names and contents) and of the case IDs, in order. Two machines
// that load the same files with the same selection (-run, -repeat, -model)
// get the same ID; a changed file, filter or repeat count changes it.
func SuiteID(suite *scenario.Suite, cases []*scenario.Case) string {
	h := sha256.New()
	fmt.Fprintf(h, "hosteval suite 1\n%d sources\n", len(suite.Sources))
	for _, s := range suite.Sources {
		fmt.Fprintf(h, "%q %s\n", s.File, s.SHA256)
	}
	fmt.Fprintf(h, "%d cases\n", len(cases))
	for _, c := range cases {
		fmt.Fprintf(h, "%q\n", c.ID)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)[:16])
}
