package report

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
)

// CaseNumber is the case's number in its run: the index the runner gave
// it (its files are cases/NNNN-…), else the number in its log's name,
// else pos+1, its place in records.jsonl.
func CaseNumber(rec *record.Record, pos int) int {
	if rec.Index > 0 {
		return rec.Index
	}
	if n := stemNumber(rec.Logs["log"]); n > 0 {
		return n
	}
	return pos + 1
}

// stemNumber is NNNN of "cases/NNNN-name.jsonl", or 0.
func stemNumber(p string) int {
	digits, _, ok := strings.Cut(path.Base(p), "-")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0
	}
	return n
}

// TranscriptStem is the name of a case's transcript files in the run
// folder, without the extension: transcripts/NNNN-<case>, the same stem
// as its log.
func TranscriptStem(rec *record.Record, pos int) string {
	return TranscriptsDir + "/" + record.CaseStem(CaseNumber(rec, pos)-1, rec.CaseID)
}

// TranscriptsDir is the folder of a run that holds the transcripts of
// its cases.
const TranscriptsDir = "transcripts"

// FindCase's errors wrap one of these.
var (
	ErrNoCase        = errors.New("no such case")
	ErrAmbiguousCase = errors.New("more than one case")
)

// FindCase finds the case that query names in run: its case ID, its
// number (7, 0007, or a file name such as 0007-lookup_0), the name of a
// scenario that has one case, or a prefix of one case ID only. It returns the record and its place in
// run.Records. When nothing or several cases match, the error lists the
// nearest case IDs.
func FindCase(run *record.Run, query string) (*record.Record, int, error) {
	q := strings.TrimSpace(query)
	for i := range run.Records {
		if run.Records[i].CaseID == q {
			return &run.Records[i], i, nil
		}
	}
	if n := queryNumber(q); n > 0 {
		for i := range run.Records {
			if CaseNumber(&run.Records[i], i) == n {
				return &run.Records[i], i, nil
			}
		}
	}
	// A scenario's name names its case, when it has one.
	var named []int
	for i := range run.Records {
		if run.Records[i].Scenario == q {
			named = append(named, i)
		}
	}
	if len(named) == 1 {
		return &run.Records[named[0]], named[0], nil
	}
	var prefixed []int
	for i := range run.Records {
		if strings.HasPrefix(run.Records[i].CaseID, q) {
			prefixed = append(prefixed, i)
		}
	}
	if len(prefixed) == 1 && q != "" {
		return &run.Records[prefixed[0]], prefixed[0], nil
	}
	if len(prefixed) > 1 && q != "" {
		return nil, -1, fmt.Errorf("case %q: %w: it is the start of %d case IDs in run %s:%s", q, ErrAmbiguousCase, len(prefixed), run.ID(), listCases(run, prefixed))
	}
	near := nearCases(run, q)
	if len(near) == 0 {
		return nil, -1, fmt.Errorf("case %q: %w in run %s (it has %s)", q, ErrNoCase, run.ID(), text.Count(len(run.Records), "case"))
	}
	return nil, -1, fmt.Errorf("case %q: %w in run %s; the nearest:%s", q, ErrNoCase, run.ID(), listCases(run, near))
}

// queryNumber reads "7", "0007" or "0007-lookup_0" as 7; 0 otherwise.
func queryNumber(q string) int {
	digits, _, _ := strings.Cut(q, "-")
	n, err := strconv.Atoi(digits)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// maxListed bounds the cases an error lists.
const maxListed = 8

func listCases(run *record.Run, idx []int) string {
	var b strings.Builder
	for _, i := range idx[:min(len(idx), maxListed)] {
		fmt.Fprintf(&b, "\n  %d  %s", CaseNumber(&run.Records[i], i), run.Records[i].CaseID)
	}
	if len(idx) > maxListed {
		fmt.Fprintf(&b, "\n  … and %d more", len(idx)-maxListed)
	}
	return b.String()
}

// nearCases are the cases whose IDs are closest to q: those that
// contain it (in any case) first, then those alike enough to be a typo
// (half their letter pairs or more in common), the most alike first.
func nearCases(run *record.Run, q string) []int {
	type scored struct {
		i     int
		score float64
	}
	var found []scored
	lq := strings.ToLower(q)
	qPairs := letterPairs(lq)
	for i := range run.Records {
		id := strings.ToLower(run.Records[i].CaseID)
		if lq != "" && strings.Contains(id, lq) {
			found = append(found, scored{i, 2})
			continue
		}
		// Against the ID's start as long as q too: a typo in a prefix.
		score := max(dice(qPairs, letterPairs(id)), dice(qPairs, letterPairs(id[:min(len(id), len(lq))])))
		if score >= 0.5 {
			found = append(found, scored{i, score})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	idx := make([]int, len(found))
	for k, f := range found {
		idx[k] = f.i
	}
	return idx
}

// letterPairs counts the pairs of adjacent bytes of s.
func letterPairs(s string) map[string]int {
	pairs := make(map[string]int, len(s))
	for i := 0; i+1 < len(s); i++ {
		pairs[s[i:i+2]]++
	}
	return pairs
}

// dice is the Sørensen-Dice coefficient of two pair counts: 1 for the
// same pairs, 0 for none in common.
func dice(a, b map[string]int) float64 {
	na, nb, common := 0, 0, 0
	for p, n := range a {
		na += n
		common += min(n, b[p])
	}
	for _, n := range b {
		nb += n
	}
	if na+nb == 0 {
		return 0
	}
	return 2 * float64(common) / float64(na+nb)
}
