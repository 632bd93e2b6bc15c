package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
)

// abVerdict is the verdict line of variant v against the baseline base:
// the better of the two where a test found the difference significant
// (pass rate first, then call latency beyond the minimum effect), "no
// significant difference" otherwise; and, a fact rather than a test, how
// many tool-definition tokens v sends against the baseline.
//
// When the two variants answered the same dataset rows, routing accuracy
// by the paired test comes first: a routing row's case passes on its
// expectations alone, so a pass rate of 100% on both sides would
// otherwise read "no significant difference" beside a paired A/B that
// finds one.
func abVerdict(base, v *GroupStats, gc GroupChange, route *PairedRouting) string {
	s := caseVerdict(base, v, gc)
	if route != nil {
		s = routeVerdict(base, v, route) + "; cases: " + s
	}
	if tok := gc.ToolDefTokens; tok.Old > 0 && tok.New != tok.Old {
		more := "more"
		if tok.New < tok.Old {
			more = "fewer"
		}
		s += fmt.Sprintf("; %s sends %s%% %s tool-definition tokens per request (%s against %s)",
			variantName(v.Variant), fmtFloat(math.Abs(tok.New-tok.Old)/tok.Old*100), more, fmtFloat(tok.New), fmtFloat(tok.Old))
	}
	return "verdict: " + s
}

// routeVerdict compares the routing accuracy of v and base on the rows
// both answered, by McNemar's exact test (or the sign test with repeats).
func routeVerdict(base, v *GroupStats, p *PairedRouting) string {
	bn, vn := variantName(base.Variant), variantName(v.Variant)
	where := "without distractors"
	if p.Base.Distractors > 0 {
		where = fmt.Sprintf("with %d distractors", p.Base.Distractors)
	}
	figures := fmt.Sprintf("accuracy %s (%s) against %s (%s) on the same %s %s, %s",
		fmtPct(p.OtherAccuracy), vn, fmtPct(p.BaseAccuracy), bn, text.Count(p.Rows, "row"), where, FormatP(p.P))
	if !p.Significant {
		return fmt.Sprintf("no significant difference in routing between %s and %s: %s", vn, bn, figures)
	}
	better, worse := vn, bn
	if p.OtherAccuracy < p.BaseAccuracy {
		better, worse = bn, vn
	}
	return fmt.Sprintf("%s routes better than %s: %s", better, worse, figures)
}

// caseVerdict compares v and base by their cases: pass rate, then call
// latency beyond the minimum effect.
func caseVerdict(base, v *GroupStats, gc GroupChange) string {
	bn, vn := variantName(base.Variant), variantName(v.Variant)
	pr, lat := gc.PassRate, gc.P95
	latReal := lat.Significant && !lat.Small
	var s string
	switch {
	case pr.Significant:
		better, worse := vn, bn
		if pr.New < pr.Old {
			better, worse = bn, vn
		}
		s = fmt.Sprintf("%s is better than %s: pass rate %s (%s) against %s (%s), %s",
			better, worse, fmtPct(pr.New), vn, fmtPct(pr.Old), bn, FormatP(pr.P))
		if latReal && (lat.Shift < 0) != (better == vn) {
			s += fmt.Sprintf("; but its calls are slower (%s)", FormatP(lat.P))
		}
	case latReal:
		better, worse := vn, bn
		if lat.Shift > 0 {
			better, worse = bn, vn
		}
		s = fmt.Sprintf("%s is better than %s: its calls are faster, p95 %s ms (%s) against %s ms (%s), %s",
			better, worse, fmtMS(lat.New), vn, fmtMS(lat.Old), bn, FormatP(lat.P))
	default:
		s = fmt.Sprintf("no significant difference between %s and %s", vn, bn)
		var tests []string
		if pr.Tested {
			tests = append(tests, "pass rate "+FormatP(pr.P))
		}
		if lat.Tested {
			tests = append(tests, "call latency "+FormatP(lat.P))
		}
		if len(tests) > 0 {
			s += " (" + strings.Join(tests, ", ") + ")"
		} else {
			s += fmt.Sprintf(" (too few cases to test: n=%d+%d)", pr.OldN, pr.NewN)
		}
	}
	return s
}

// maxChangeText is how much of one changed text (a description, a system
// prompt) a note shows: the scenario file has it all.
const maxChangeText = 160

// abChanges says what variant v changes against the baseline base, from
// their records' settings: each tool description that differs (a word diff
// when run.json kept the texts), the system prompt, then every other host
// setting that differs, by its name in the records.
func abChanges(base, v *GroupStats, texts map[string]string) string {
	vn := variantName(v.Variant)
	if base.settings == nil || v.settings == nil {
		return vn + " changes: not recorded (records written before settings were)"
	}
	b, s := base.settings, v.settings
	var parts []string
	for _, tool := range slices.Sorted(maps.Keys(unionKeys(b.Descriptions, s.Descriptions))) {
		if old, cur := b.Descriptions[tool], s.Descriptions[tool]; old != cur {
			parts = append(parts, "description of "+tool+textChange(old, cur, texts, "the server's"))
		}
	}
	if b.System != s.System {
		parts = append(parts, "system prompt"+textChange(b.System, s.System, texts, "none"))
	}
	parts = append(parts, settingChanges(b, s)...)
	if len(parts) == 0 {
		return vn + " changes: nothing the records keep (host settings, descriptions, system prompt)"
	}
	return vn + " changes: " + strings.Join(parts, "; ")
}

func unionKeys(a, b map[string]string) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

// textChange describes the change of a text named by its hash: a word
// diff when both texts are known and share most of their words, else the
// two texts, each cut to maxChangeText; absent is what an empty hash
// stands for ("the server's" description, "none").
func textChange(oldHash, newHash string, texts map[string]string, absent string) string {
	show := func(h string) (string, bool) {
		if h == "" {
			return absent, true
		}
		t, ok := texts[h]
		if !ok {
			return "", false
		}
		return `"` + text.Shorten(text.OneLine(t), maxChangeText) + `"`, true
	}
	old, okOld := show(oldHash)
	cur, okNew := show(newHash)
	if !okOld || !okNew {
		return " (its text is not in run.json)"
	}
	if oldHash != "" && newHash != "" {
		if d, ok := wordDiff(texts[oldHash], texts[newHash]); ok {
			return ": " + text.Shorten(d, maxChangeText)
		}
	}
	return ": " + old + " -> " + cur
}

// wordDiff shows the change from a to b word by word, git's way: removed
// words in [-...-], added ones in {+...+}. It is ok only when most of the
// words are common, where it reads better than the two texts.
func wordDiff(a, b string) (string, bool) {
	x, y := strings.Fields(text.OneLine(a)), strings.Fields(text.OneLine(b))
	if len(x)*len(y) > 1<<16 {
		return "", false
	}
	// lcs[i][j] is the longest common subsequence of x[i:] and y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	if 2*lcs[0][0] < max(len(x), len(y)) {
		return "", false
	}
	var out, del, ins []string
	flush := func() {
		if len(del) > 0 {
			out = append(out, "[-"+strings.Join(del, " ")+"-]")
		}
		if len(ins) > 0 {
			out = append(out, "{+"+strings.Join(ins, " ")+"+}")
		}
		del, ins = nil, nil
	}
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			flush()
			out = append(out, x[i])
			i++
			j++
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			ins = append(ins, y[j])
			j++
		default:
			del = append(del, x[i])
			i++
		}
	}
	flush()
	return strings.Join(out, " "), true
}

// settingChanges lists the host settings, other than the descriptions and
// the system prompt, that differ between a and b: "max_steps 8 -> 4", by
// their names in the records, so that a budget added later shows too.
func settingChanges(a, b *record.Settings) []string {
	fields := func(s *record.Settings) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		data, err := json.Marshal(s)
		if err == nil {
			err = json.Unmarshal(data, &m)
		}
		if err != nil {
			return nil
		}
		delete(m, "descriptions")
		delete(m, "system")
		return m
	}
	am, bm := fields(a), fields(b)
	keys := map[string]bool{}
	for k := range am {
		keys[k] = true
	}
	for k := range bm {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		av, bv := string(am[k]), string(bm[k])
		if av == bv {
			continue
		}
		out = append(out, k+" "+cmp.Or(av, "none")+" -> "+cmp.Or(bv, "none"))
	}
	return out
}
