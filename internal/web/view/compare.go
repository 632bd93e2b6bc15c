package view

import (
	"fmt"
	"html/template"
	"net/http"
	"slices"

	"github.com/hosteval/hosteval/internal/report"
	"github.com/hosteval/hosteval/internal/table"
	"github.com/hosteval/hosteval/internal/text"
)

// compareView is two runs side by side, from report.Compare: the verdict,
// what appeared or vanished, then one row per scenario group with each
// metric old → new and its change.
type compareView struct {
	OldID, NewID   string
	OldURL, NewURL string
	Regressed      bool
	Reasons        []string
	ReasonCount    string // "1 reason", "3 reasons"
	Notes          []string
	Vanished       []string
	Appeared       []string
	OnlyOld        []caseLink
	OnlyNew        []caseLink
	Metrics        []string
	Rows           []compareRow
	// Routing are the tables of the routing rows both runs answered.
	Routing []template.HTML
}

type caseLink struct {
	ID, URL string
}

type compareRow struct {
	Group     string
	State     string // vanished, appeared, or ""
	Regressed bool
	Reasons   []string
	Cells     []compareCell
}

type compareCell struct {
	Old, New, Delta string
	Bad             bool
	Title           string
}

func (v *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	oldKey, newKey := q.Get("old"), q.Get("new")
	var runs []string
	for _, e := range v.store.entries() {
		runs = append(runs, e.key)
	}
	slices.Sort(runs)
	data := struct {
		Old, New   []choice
		Comparison *compareView
		Problem    string
	}{Old: choices(runs, oldKey), New: choices(runs, newKey)}
	data.Old[0].Label, data.New[0].Label = "choose a run", "choose a run"

	if oldKey != "" && newKey != "" {
		cv, problem := v.compare(oldKey, newKey)
		data.Comparison, data.Problem = cv, problem
	}
	title := "Compare"
	if data.Comparison != nil {
		title = "Compare " + data.Comparison.OldID + " → " + data.Comparison.NewID
	}
	v.render(w, http.StatusOK, "compare", page{Title: title, Nav: "compare", Data: data})
}

func (v *Server) compare(oldKey, newKey string) (*compareView, string) {
	snaps := make([]*snapshot, 2)
	for i, key := range []string{oldKey, newKey} {
		e := v.store.entry(key)
		if e == nil {
			return nil, fmt.Sprintf("There is no run %q in this folder.", key)
		}
		snap, err := v.store.load(e)
		if err != nil {
			return nil, err.Error()
		}
		snaps[i] = snap
	}
	c := report.Compare(snaps[0].summary, snaps[1].summary, report.DefaultThresholds())
	cv := &compareView{
		OldID: c.OldID, NewID: c.NewID, OldURL: runURL(oldKey), NewURL: runURL(newKey),
		Regressed: c.Verdict.Regressed, Reasons: c.Verdict.Reasons, Notes: c.Verdict.Notes,
		ReasonCount: text.Count(len(c.Verdict.Reasons), "reason"),
	}
	// The side-by-side table has a row per group in every metric table;
	// the routing tables have rows of their own, shown after it.
	tables := c.MetricTables()
	for _, t := range tables {
		cv.Metrics = append(cv.Metrics, t.Title)
	}
	for _, t := range c.Tables()[len(tables):] {
		cv.Routing = append(cv.Routing, tableHTML(t))
	}
	for i := range c.Groups {
		g := &c.Groups[i]
		row := compareRow{Group: g.GroupKey.String(), Reasons: c.Regressions(g.GroupKey)}
		row.Regressed = len(row.Reasons) > 0
		switch {
		case g.Vanished():
			row.State = "vanished"
			cv.Vanished = append(cv.Vanished, row.Group)
		case g.Appeared():
			row.State = "appeared"
			cv.Appeared = append(cv.Appeared, row.Group)
		}
		for _, t := range tables {
			cells := t.Rows[i]
			cell := compareCell{Old: cells[1].Text, New: cells[2].Text, Delta: cells[3].Text, Bad: cells[3].Bad, Title: cells[4].Text}
			if cells[3].Kind == table.KindDelta {
				cell.Title = cells[3].Sig.String() + " " + cell.Title
			}
			row.Cells = append(row.Cells, cell)
		}
		cv.Rows = append(cv.Rows, row)
	}
	// The cases each run has and the other has not.
	in := func(s *snapshot) map[string]int {
		m := map[string]int{}
		for i := range s.records {
			m[s.records[i].CaseID] = report.CaseNumber(&s.records[i], i)
		}
		return m
	}
	oldCases, newCases := in(snaps[0]), in(snaps[1])
	for _, s := range snaps[0].summary.Cases() {
		if _, ok := newCases[s.CaseID]; !ok {
			cv.OnlyOld = append(cv.OnlyOld, caseLink{s.CaseID, caseURL(oldKey, oldCases[s.CaseID])})
		}
	}
	for _, s := range snaps[1].summary.Cases() {
		if _, ok := oldCases[s.CaseID]; !ok {
			cv.OnlyNew = append(cv.OnlyNew, caseLink{s.CaseID, caseURL(newKey, newCases[s.CaseID])})
		}
	}
	return cv, ""
}
