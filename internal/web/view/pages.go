package view

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/report"
	"github.com/hosteval/hosteval/internal/table"
	"github.com/hosteval/hosteval/internal/web"
)

// page is what every page's template gets: its title, which tab of the
// navigation it is, and its own data.
type page struct {
	Title string
	Nav   string
	// Live names the run whose events refresh the page ("*": any run).
	Live string
	Data any
}

func (v *Server) render(w http.ResponseWriter, status int, name string, p page) {
	var buf bytes.Buffer
	if err := v.pages[name].ExecuteTemplate(&buf, "frame.html", p); err != nil {
		http.Error(w, "page "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail shows an error page: what went wrong, in a sentence, and the way back.
func (v *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	v.render(w, status, "error", page{Title: http.StatusText(status), Data: struct {
		Status  int
		Message string
	}{status, msg}})
}

func runURL(key string) string { return "/runs/" + url.PathEscape(key) + "/" }

func caseURL(key string, n int) string { return runURL(key) + "cases/" + strconv.Itoa(n) }

func fileURL(key, rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return runURL(key) + "files/" + strings.Join(parts, "/")
}

// snapshotOf loads the run the request names, or shows why it can't.
func (v *Server) snapshotOf(w http.ResponseWriter, r *http.Request) (*snapshot, bool) {
	key := r.PathValue("run")
	e := v.store.entry(key)
	if e == nil {
		v.store.scan()
		if e = v.store.entry(key); e == nil {
			v.fail(w, r, http.StatusNotFound, fmt.Sprintf("There is no run %q in this folder.", key))
			return nil, false
		}
	}
	snap, err := v.store.load(e)
	if err != nil {
		v.fail(w, r, http.StatusInternalServerError, err.Error())
		return nil, false
	}
	return snap, true
}

// The runs page.

type runRow struct {
	overview
	URL      string
	State    string // finished, interrupted, running, incomplete
	Duration string
	P95      string
	TokReq   string
	Trend    int // 1-based number of its suite's trend, 0 when the suite ran once
	// CompareURL compares the run with the one before it of its suite.
	CompareURL string
}

type suiteTrend struct {
	N      int
	Files  string
	Runs   int
	Charts []sparkline
}

func (v *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	var rows []runRow
	for _, e := range v.store.entries() {
		ov := v.store.overview(e)
		row := runRow{overview: ov, URL: runURL(ov.Key), State: stateOf(e, ov), P95: "-", TokReq: "-"}
		if !ov.Started.IsZero() && !ov.Finished.IsZero() {
			row.Duration = web.FormatMS(float64(ov.Finished.Sub(ov.Started).Microseconds()) / 1000)
		}
		if ov.Totals.Latency.N > 0 {
			row.P95 = web.FormatMS(ov.Totals.Latency.P95)
		}
		if ov.Totals.ModelRequests > 0 {
			row.TokReq = strconv.FormatFloat(ov.Totals.ToolDefTokens, 'f', 0, 64)
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b runRow) int {
		return cmp.Or(b.Started.Compare(a.Started), cmp.Compare(a.Key, b.Key))
	})
	// rows are newest first: the run before one of a suite is the next
	// row of that suite.
	for i := range rows {
		for j := i + 1; j < len(rows); j++ {
			if rows[i].Suite != "" && rows[j].Suite == rows[i].Suite {
				rows[i].CompareURL = "/compare?" + url.Values{"old": {rows[j].Key}, "new": {rows[i].Key}}.Encode()
				break
			}
		}
	}
	trends := trendsOf(rows)
	for i := range rows {
		for _, t := range trends {
			if t.Files == rows[i].Suite {
				rows[i].Trend = t.N
			}
		}
	}
	v.render(w, http.StatusOK, "runs", page{Title: "Runs", Nav: "runs", Live: "*", Data: struct {
		Dir    string
		Runs   []runRow
		Trends []suiteTrend
	}{v.opts.Dir, rows, trends}})
}

func stateOf(e *runEntry, ov overview) string {
	switch {
	case ov.Interrupted:
		return "interrupted"
	case !ov.Finished.IsZero():
		return "finished"
	}
	e.mu.Lock()
	live := e.live()
	e.mu.Unlock()
	if live {
		return "running"
	}
	return "incomplete"
}

// trendsOf draws, for every suite run more than once, its pass rate, p95
// call latency and tool-definition tokens per request, oldest run first.
// rows are newest first.
func trendsOf(rows []runRow) []suiteTrend {
	bySuite := map[string][]runRow{}
	var suites []string
	for _, r := range rows {
		if r.Suite == "" || !r.Loaded {
			continue
		}
		if _, ok := bySuite[r.Suite]; !ok {
			suites = append(suites, r.Suite)
		}
		bySuite[r.Suite] = append(bySuite[r.Suite], r)
	}
	var trends []suiteTrend
	for _, s := range suites {
		runs := bySuite[s]
		if len(runs) < 2 {
			continue
		}
		slices.Reverse(runs)
		pts := func(get func(runRow) (float64, bool)) []point {
			var p []point
			for _, r := range runs {
				if y, ok := get(r); ok {
					p = append(p, point{Label: r.ID, Y: y})
				}
			}
			return p
		}
		trends = append(trends, suiteTrend{N: len(trends) + 1, Files: s, Runs: len(runs), Charts: []sparkline{
			newSparkline("pass rate", pts(func(r runRow) (float64, bool) { return r.Totals.PassRate, r.Totals.Cases > 0 }), table.FormatPercent, true),
			newSparkline("p95 call latency", pts(func(r runRow) (float64, bool) { return r.Totals.Latency.P95, r.Totals.Latency.N > 0 }), web.FormatMS, false),
			newSparkline("tool-definition tokens per request", pts(func(r runRow) (float64, bool) {
				return r.Totals.ToolDefTokens, r.Totals.ModelRequests > 0
			}), func(x float64) string { return strconv.FormatFloat(x, 'f', 0, 64) + " tok" }, false),
		}})
	}
	return trends
}

// The run page.

// filter is the cases table's query: each field a query parameter.
// Catalog, Expected and Chosen select the cases of one cell of a routing
// heat map: the catalog size, the row's class and the choice.
type filter struct {
	Status, Scenario, Model, Variant, Outcome, Q string
	Catalog, Expected, Chosen                    string
	Page                                         int
}

func filterOf(r *http.Request) filter {
	q := r.URL.Query()
	f := filter{
		Status: q.Get("status"), Scenario: q.Get("scenario"), Model: q.Get("model"),
		Variant: q.Get("variant"), Outcome: q.Get("outcome"), Q: strings.TrimSpace(q.Get("q")),
		Catalog: q.Get("catalog"), Expected: q.Get("expected"), Chosen: q.Get("chosen"),
	}
	f.Page, _ = strconv.Atoi(q.Get("page"))
	f.Page = max(f.Page, 1)
	return f
}

// query is the filter as a query string, on page n.
func (f filter) query(n int) string {
	q := url.Values{}
	for k, v := range map[string]string{"status": f.Status, "scenario": f.Scenario, "model": f.Model, "variant": f.Variant, "outcome": f.Outcome, "q": f.Q,
		"catalog": f.Catalog, "expected": f.Expected, "chosen": f.Chosen} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if n > 1 {
		q.Set("page", strconv.Itoa(n))
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// Active reports whether any filter is set.
func (f filter) Active() bool { return f.query(1) != "" }

// Routed reports whether the filter selects routing cases by their cell.
func (f filter) Routed() bool { return f.Catalog != "" || f.Expected != "" || f.Chosen != "" }

// routeMatches reports whether rec is a scored routing case of the cell
// the filter names (report.RouteCell places it), at its catalog size.
func (f filter) routeMatches(rec *record.Record) bool {
	r := rec.Route
	if r == nil || rec.Status == record.StatusError {
		return false
	}
	if f.Catalog != "" && strconv.Itoa(r.Distractors) != f.Catalog {
		return false
	}
	class, chosen := report.RouteCell(r)
	return (f.Expected == "" || class == f.Expected) && (f.Chosen == "" || chosen == f.Chosen)
}

// cellURL lists the cases of one cell of a routing group's matrix.
func cellURL(key string, g *report.RoutingStats, expected, chosen string) string {
	f := filter{Scenario: g.Scenario, Variant: g.Variant, Model: g.Model, Catalog: strconv.Itoa(g.Distractors), Expected: expected, Chosen: chosen}
	return runURL(key) + f.query(1) + "#cases"
}

type caseRow struct {
	N          int
	URL        string
	Name       string
	CaseID     string
	Status     string
	Outcomes   []outcomeCount
	Steps      int
	Requests   int
	Bytes      string
	P95        string
	MS         string
	Why        []string // every failed expectation with what was found, or the error
	Scenario   string
	Variant    string
	Model      string
	Asked      int
	Clipped    int
	Transcript string
	// Route is a routing case's verdict: what the row expected, what was
	// chosen.
	Route   string
	RouteOK bool
}

type outcomeCount struct {
	Outcome string
	N       int
}

// PageSize is how many cases one page of the cases table lists.
const PageSize = 100

type choice struct {
	Value, Label string
	Selected     bool
}

func choices(values []string, selected string) []choice {
	out := []choice{{Value: "", Label: "all", Selected: selected == ""}}
	for _, v := range values {
		label := v
		if v == "" {
			continue
		}
		out = append(out, choice{Value: v, Label: label, Selected: v == selected})
	}
	return out
}

func (v *Server) runPage(w http.ResponseWriter, r *http.Request) {
	snap, ok := v.snapshotOf(w, r)
	if !ok {
		return
	}
	data, err := runView(snap, filterOf(r))
	if err != nil {
		v.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	data.Files = runFiles(snap.key, v.store, snap)
	v.render(w, http.StatusOK, "run", page{Title: "Run " + data.ID, Nav: "runs", Live: snap.key, Data: data})
}

// runView is the run page's model, made from the run's records and
// summary (snap) and the cases table's filter f: the figures, tables and
// charts of the run, its gates, and the page of cases f selects (those that
// did not pass first). It reads no file: the run's files are the caller's.
func runView(snap *snapshot, f filter) (runData, error) {
	s := snap.summary
	cases := s.Cases()
	matched := caseRows(snap, cases, f)
	pages := max((len(matched)+PageSize-1)/PageSize, 1)
	f.Page = min(f.Page, pages)
	shown := matched[min((f.Page-1)*PageSize, len(matched)):min(f.Page*PageSize, len(matched))]

	var tables []template.HTML
	for _, t := range append([]*report.Table{report.GroupTable(s), report.LatencyTable(s)}, report.ABTables(s)...) {
		tables = append(tables, tableHTML(t))
	}
	var gates template.HTML
	var gateVerdict *report.Verdict
	if len(snap.gates) > 0 {
		t := report.GateTable(snap.gates)
		t.Title = "" // the section's heading says it, with the verdict
		gates = tableHTML(t)
		gv := report.GateVerdict(snap.gates)
		gateVerdict = &gv
	}
	charts, err := report.ChartsHTML(s)
	if err != nil {
		return runData{}, err
	}
	scenarios, models, variants := facets(cases)
	state := snapState(snap)
	warnings := snap.warnings
	if state != "running" {
		// Said now, not when the summary was made: a run seen running
		// may have died since without a record more.
		if why := record.Incomplete(snap.info, len(snap.records)); why != "" {
			warnings = append([]string{why}, warnings...)
		}
	}
	data := runData{
		Key: snap.key, ID: snap.id(), Info: snap.info, Summary: s, State: state,
		Warnings: warnings, Gates: gates, GateVerdict: gateVerdict, Charts: charts, Tables: tables,
		Filter: f, Cases: shown, Matched: len(matched), Total: len(cases), Page: f.Page, Pages: pages,
		Statuses: []choice{
			{Value: "", Label: "all", Selected: f.Status == ""},
			{Value: "failed", Label: "did not pass", Selected: f.Status == "failed"},
			{Value: record.StatusPass, Label: "pass", Selected: f.Status == record.StatusPass},
			{Value: record.StatusFail, Label: "fail", Selected: f.Status == record.StatusFail},
			{Value: record.StatusError, Label: "error", Selected: f.Status == record.StatusError},
		},
		Scenarios: choices(scenarios, f.Scenario), Models: choices(models, f.Model),
		Variants: choices(variants, f.Variant), Outcomes: choices(record.Outcomes(), f.Outcome),
		ClearURL: runURL(snap.key) + "#cases",
	}
	if f.Page > 1 {
		data.PrevURL = runURL(snap.key) + f.query(f.Page-1) + "#cases"
	}
	if f.Page < pages {
		data.NextURL = runURL(snap.key) + f.query(f.Page+1) + "#cases"
	}
	if len(shown) > 0 {
		data.From, data.To = (f.Page-1)*PageSize+1, (f.Page-1)*PageSize+len(shown)
	}
	for _, c := range shown {
		data.HasWhy = data.HasWhy || len(c.Why) > 0
		data.HasRoute = data.HasRoute || c.Route != ""
	}
	data.Routing, err = report.RoutingHTML(s.Routing, report.RoutingLinks{
		Cell: func(g *report.RoutingStats, expected, chosen string) string {
			return cellURL(snap.key, g, expected, chosen)
		},
	})
	if err != nil {
		return runData{}, err
	}
	if s.Totals.Latency.N > 0 {
		data.P95 = web.FormatMS(s.Totals.Latency.P95)
	}
	if snap.info != nil && !snap.info.Started.IsZero() && !snap.info.Finished.IsZero() {
		data.Duration = web.FormatMS(float64(snap.info.Finished.Sub(snap.info.Started).Microseconds()) / 1000)
	}
	return data, nil
}

// facets are the scenarios, models and variants of the run's cases, each
// sorted: the choices of the cases table's filter.
func facets(cases []report.CaseStats) (scenarios, models, variants []string) {
	for i := range cases {
		c := &cases[i]
		for _, p := range []struct {
			list *[]string
			v    string
		}{{&scenarios, c.Scenario}, {&models, c.Model}, {&variants, c.Variant}} {
			if !slices.Contains(*p.list, p.v) {
				*p.list = append(*p.list, p.v)
			}
		}
	}
	slices.Sort(scenarios)
	slices.Sort(models)
	slices.Sort(variants)
	return scenarios, models, variants
}

// caseRows are the rows of the cases f selects, those that did not pass
// first (errors, then failures), each with its calls' outcomes other than
// ok, its route when it is a routing case, and why it did not pass.
func caseRows(snap *snapshot, cases []report.CaseStats, f filter) []caseRow {
	pos := map[string]int{}
	for i := range snap.records {
		pos[snap.records[i].CaseID] = i
	}
	outcomes := map[string]map[string]int{}
	for i := range snap.records {
		rec := &snap.records[i]
		m := map[string]int{}
		for _, c := range rec.Calls {
			m[c.Outcome]++
		}
		outcomes[rec.CaseID] = m
	}
	q := strings.ToLower(f.Q)
	var matched []caseRow
	for i := range cases {
		c := &cases[i]
		p := pos[c.CaseID]
		rec := &snap.records[p]
		switch {
		case f.Status == "failed" && c.Passed():
			continue
		case f.Status != "" && f.Status != "failed" && c.Status != f.Status:
			continue
		case f.Scenario != "" && c.Scenario != f.Scenario:
			continue
		case f.Model != "" && c.Model != f.Model:
			continue
		case f.Variant != "" && c.Variant != f.Variant:
			continue
		case f.Outcome != "" && outcomes[c.CaseID][f.Outcome] == 0:
			continue
		case q != "" && !matches(rec, q):
			continue
		case f.Routed() && !f.routeMatches(rec):
			continue
		}
		n := report.CaseNumber(rec, p)
		row := caseRow{
			N: n, URL: caseURL(snap.key, n), Name: c.Name, CaseID: c.CaseID, Status: c.Status,
			Steps: c.Steps, Requests: c.ModelRequests, Bytes: web.FormatBytes(c.ResultBytes),
			P95: "-", MS: web.FormatMS(c.MS), Scenario: c.Scenario, Variant: c.Variant, Model: c.Model,
			Asked: c.AskedUser, Clipped: c.Clipped,
		}
		if c.Latency.N > 0 {
			row.P95 = web.FormatMS(c.Latency.P95)
		}
		for _, o := range record.Outcomes() {
			if n := outcomes[c.CaseID][o]; n > 0 && o != record.OutcomeOK {
				row.Outcomes = append(row.Outcomes, outcomeCount{o, n})
			}
		}
		if r := rec.Route; r != nil {
			class, chosen := report.RouteCell(r)
			row.Route, row.RouteOK = "expected "+class+", chose "+chosen, r.Correct
		}
		switch {
		case c.Error != "":
			row.Why = []string{c.Error}
		default:
			for _, e := range c.Failed {
				why := e.Name
				if e.Detail != "" {
					why += ": " + e.Detail
				}
				row.Why = append(row.Why, why)
			}
		}
		matched = append(matched, row)
	}
	// The cases that did not pass first: they are what a person opens.
	slices.SortStableFunc(matched, func(a, b caseRow) int {
		return cmp.Compare(passOrder(a.Status), passOrder(b.Status))
	})
	return matched
}

type runData struct {
	Key, ID     string
	Info        *record.RunInfo
	Summary     *report.Summary
	State       string
	Duration    string
	P95         string
	Warnings    []string
	Gates       template.HTML
	GateVerdict *report.Verdict
	Charts      template.HTML
	Tables      []template.HTML
	Filter      filter
	Cases       []caseRow
	HasWhy      bool // a listed case did not pass: the column that says why is shown
	HasRoute    bool // a listed case came from a dataset row: its routing is shown
	Routing     template.HTML
	Matched     int
	Total       int
	From, To    int
	Page, Pages int
	PrevURL     string
	NextURL     string
	Statuses    []choice
	Scenarios   []choice
	Models      []choice
	Variants    []choice
	Outcomes    []choice
	Files       []fileLink
	ClearURL    string
}

// passOrder puts errors, then failures, then passes.
func passOrder(status string) int {
	switch status {
	case record.StatusError:
		return 0
	case record.StatusPass:
		return 2
	}
	return 1
}

func snapState(s *snapshot) string {
	switch {
	case s.info != nil && s.info.Interrupted:
		return "interrupted"
	case s.info != nil && !s.info.Finished.IsZero():
		return "finished"
	case s.live:
		return "running"
	}
	return "incomplete"
}

// matches reports whether the lower-case q is in the record's case ID,
// error, failed expectations, questions or answers.
func matches(rec *record.Record, q string) bool {
	has := func(s string) bool { return strings.Contains(strings.ToLower(s), q) }
	if has(rec.CaseID) || has(rec.Error) {
		return true
	}
	for _, e := range rec.Expectations {
		if !e.Passed && (has(e.Name) || has(e.Detail)) {
			return true
		}
	}
	for _, t := range rec.Turns {
		if has(t.Question) || has(t.Answer) {
			return true
		}
	}
	for _, c := range rec.Calls {
		if has(c.Name) || has(c.Error) {
			return true
		}
	}
	return false
}

type fileLink struct {
	Name, URL string
}

// runFiles links the run's own files that are there.
func runFiles(key string, st *store, snap *snapshot) []fileLink {
	e := st.entry(key)
	if e == nil {
		return nil
	}
	var links []fileLink
	for _, name := range []string{report.HTMLFile, report.MarkdownFile, report.SummaryFile, record.RecordsFile, record.RunInfoFile, report.JUnitFile, report.GatesFile, report.SharedServersLog} {
		if _, err := st.root.Stat(e.path + "/" + name); err == nil {
			links = append(links, fileLink{Name: name, URL: fileURL(key, name)})
		}
	}
	return links
}

func tableHTML(t *report.Table) template.HTML {
	var b strings.Builder
	if err := t.WriteHTML(&b); err != nil {
		return template.HTML(template.HTMLEscapeString(err.Error()))
	}
	return template.HTML(b.String())
}

// The case page.

func (v *Server) caseOf(w http.ResponseWriter, r *http.Request) (*snapshot, *record.Record, int, bool) {
	snap, ok := v.snapshotOf(w, r)
	if !ok {
		return nil, nil, 0, false
	}
	n, err := strconv.Atoi(r.PathValue("n"))
	if err == nil {
		for i := range snap.records {
			if report.CaseNumber(&snap.records[i], i) == n {
				return snap, &snap.records[i], i, true
			}
		}
	}
	v.fail(w, r, http.StatusNotFound, fmt.Sprintf("Run %s has no case number %q.", snap.id(), r.PathValue("n")))
	return nil, nil, 0, false
}

func (v *Server) casePage(w http.ResponseWriter, r *http.Request) {
	snap, rec, p, ok := v.caseOf(w, r)
	if !ok {
		return
	}
	e := v.store.entry(snap.key)
	if e == nil {
		v.fail(w, r, http.StatusNotFound, fmt.Sprintf("There is no run %q in this folder.", snap.key))
		return
	}
	// The run's own root, opened inside the folder's: a record's log
	// paths cannot lead out of either.
	sub, err := v.store.root.OpenRoot(e.path)
	if err != nil {
		v.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	logs := report.RunLogsOf(sub)
	if err != nil {
		v.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	defer logs.Close()
	t := logs.Transcript(snap.id(), rec)
	body, err := report.TranscriptHTML(t, report.TranscriptLinks{Log: func(rel string) string { return fileURL(snap.key, rel) }})
	if err != nil {
		v.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	var raw strings.Builder
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false) // the page escapes it
	enc.SetIndent("", "  ")
	enc.Encode(rec)
	n := report.CaseNumber(rec, p)
	data := struct {
		Key, RunID, RunURL string
		N                  int
		Name, Status       string
		Transcript         template.HTML
		Record             string
		RecordURL          string
		Prev, Next         string
		PrevFailed         string
		NextFailed         string
	}{
		Key: snap.key, RunID: snap.id(), RunURL: runURL(snap.key), N: n, Name: t.Name, Status: rec.Status,
		Transcript: body, Record: raw.String(), RecordURL: caseURL(snap.key, n) + "/record.json",
	}
	// Neighbours in the run's case order, and the nearest ones that did not pass.
	cases := snap.summary.Cases()
	order := make([]int, len(cases))
	index := map[string]int{}
	for i := range snap.records {
		index[snap.records[i].CaseID] = i
	}
	here := -1
	for i := range cases {
		order[i] = index[cases[i].CaseID]
		if order[i] == p {
			here = i
		}
	}
	link := func(i int) string { return caseURL(snap.key, report.CaseNumber(&snap.records[order[i]], order[i])) }
	if here > 0 {
		data.Prev = link(here - 1)
	}
	if here >= 0 && here+1 < len(order) {
		data.Next = link(here + 1)
	}
	for i := here - 1; i >= 0 && here >= 0; i-- {
		if !cases[i].Passed() {
			data.PrevFailed = link(i)
			break
		}
	}
	for i := here + 1; i < len(order) && here >= 0; i++ {
		if !cases[i].Passed() {
			data.NextFailed = link(i)
			break
		}
	}
	v.render(w, http.StatusOK, "case", page{Title: t.Name + " · " + snap.id(), Nav: "runs", Data: data})
}

func (v *Server) recordJSON(w http.ResponseWriter, r *http.Request) {
	_, rec, _, ok := v.caseOf(w, r)
	if !ok {
		return
	}
	web.WriteJSON(w, http.StatusOK, rec)
}

// reportCSS serves the stylesheets of internal/report's fragments: the
// charts and the transcript. The page's policy allows no inline style.
func (v *Server) reportCSS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	http.ServeContent(w, r, "report.css", v.started, strings.NewReader(report.ChartCSS+report.TranscriptCSS+report.RoutingCSS))
}
