package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/table/tabletest"
)

// hostileFailures is a run whose failures carry every string that tries to
// break a format: HTML, Markdown table and code syntax, newlines, terminal
// escapes, and a case ID a shell would misread.
func hostileFailures() *Summary {
	evil := "<script>alert(1)</script> | `rm -rf` *b* [x](y) \x1b[2J\nsecond line"
	return Aggregate(&record.Run{Dir: "r", Records: []record.Record{
		{
			RunID: "r", Scenario: "s<script>|`x`", Model: "m", CaseID: "s<script>|`x`/m#0",
			File: "scenarios/my_file.yaml", Line: 3,
			Status: record.StatusFail,
			Expectations: []record.Expectation{
				{Name: "answer_matches " + evil, Line: 7, Detail: "answer " + evil},
				{Name: "unknown_tools == 0", Passed: true},
			},
		},
		{
			RunID: "r", Scenario: "plain", Model: "m", CaseID: "it's; rm -rf ~",
			Status: record.StatusError, Error: "server x: " + evil,
		},
	}})
}

func TestFailuresHostileGolden(t *testing.T) {
	fs := Failures(hostileFailures())
	if len(fs) != 2 {
		t.Fatalf("%d failures, want 2", len(fs))
	}
	var txt, md, html bytes.Buffer
	failuresText.write(&txt, fs, "results/run 1")
	failuresMarkdown.write(&md, fs, "")
	if err := htmlTemplate().ExecuteTemplate(&html, "failures", fs); err != nil {
		t.Fatal(err)
	}
	golden(t, "failures.txt", txt.Bytes())
	golden(t, "failures.md", md.Bytes())
	golden(t, "failures.html", html.Bytes())

	// Text: no control character reaches the terminal; a failure's every
	// line is one line; the show commands are quoted for a shell.
	if strings.ContainsAny(txt.String(), "\x1b") {
		t.Errorf("an escape sequence reached the terminal:\n%q", txt.String())
	}
	for _, want := range []string{
		`    transcript: hosteval show 'results/run 1' 's<script>|` + "`x`" + `/m#0'`,
		`    transcript: hosteval show 'results/run 1' 'it'\''s; rm -rf ~'`,
	} {
		if !strings.Contains(txt.String(), want+"\n") {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	if n := strings.Count(txt.String(), "\n"); n != 8 {
		t.Errorf("text has %d lines, want 8 (a newline in a message broke a line):\n%s", n, txt.String())
	}
	// Markdown: no raw HTML (every "<" escaped), no unescaped pipe or
	// backtick.
	if m := regexp.MustCompile("(^|[^\\\\])[|`<]").FindString(md.String()); m != "" {
		t.Errorf("unescaped %q in the Markdown:\n%s", m, md.String())
	}
	// HTML: escaped by html/template.
	if strings.Contains(html.String(), "<script>") {
		t.Errorf("raw <script> in the HTML:\n%s", html.String())
	}
}

func TestShowCommand(t *testing.T) {
	tests := []struct{ dir, id, want string }{
		{"results/r1", "lookup/scripted#0", "hosteval show results/r1 lookup/scripted#0"},
		{"results/r1", "search-desc/a-terse/openai:gpt-oss-120b#3", "hosteval show results/r1 search-desc/a-terse/openai:gpt-oss-120b#3"},
		{"my results", "#0", "hosteval show 'my results' '#0'"},
		{"r", "-x", "hosteval show r '-x'"},
		{"r", "a$(id)b", "hosteval show r 'a$(id)b'"},
		{"r", "it's", `hosteval show r 'it'\''s'`},
	}
	for _, tt := range tests {
		if got := ShowCommand(tt.dir, tt.id); got != tt.want {
			t.Errorf("ShowCommand(%q, %q) = %q, want %q", tt.dir, tt.id, got, tt.want)
		}
	}
}

// TestVerdictLines: whatever the order of the checks, what held comes
// before what failed, so that "no regression" never stands under "GATES
// FAILED", in every layout.
func TestVerdictLines(t *testing.T) {
	gates := Check{Verdict: Verdict{Regressed: true, Reasons: []string{"g.yaml:1: pass_rate >= 1: a/m: pass_rate = 50%, want >= 100%"}}, Failed: "gates failed", Held: "all gates held"}
	cmpHeld := Check{Verdict: Verdict{Notes: []string{"b/m: only in the new run"}}, Failed: "regressed", Held: "no regression"}
	v := Lines(gates, cmpHeld)
	want := VerdictLines{
		Notes:  []string{"b/m: only in the new run"},
		Held:   []string{"no regression"},
		Failed: []FailedCheck{{Headline: "gates failed", Reasons: gates.Reasons}},
	}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	var txt, md, html bytes.Buffer
	v.writeText(&txt)
	v.writeMarkdown(&md)
	if err := htmlTemplate().ExecuteTemplate(&html, "verdict", v); err != nil {
		t.Fatal(err)
	}
	wantText := "\n" +
		"note: b/m: only in the new run\n" +
		"no regression\n" +
		"GATES FAILED: 1 reason\n" +
		"  g.yaml:1: pass_rate >= 1: a/m: pass_rate = 50%, want >= 100%\n"
	if diff := cmp.Diff(wantText, txt.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	for name, out := range map[string]string{"text": txt.String(), "markdown": md.String(), "html": html.String()} {
		held := strings.Index(strings.ToLower(out), "no regression")
		failed := strings.Index(strings.ToLower(out), "gates failed")
		if held < 0 || failed < 0 || held > failed {
			t.Errorf("%s: \"no regression\" at %d, \"gates failed\" at %d; want both, the first first:\n%s", name, held, failed, out)
		}
	}
	if v := Lines(); !v.Empty() {
		t.Errorf("no checks gave %+v", v)
	}
}

// bigRun has n cases of one scenario, the first failed of them failing.
func bigRun(n, failed int) *Summary {
	run := &record.Run{Dir: "big"}
	for i := range n {
		status := record.StatusPass
		if i < failed {
			status = record.StatusFail
		}
		run.Records = append(run.Records, record.Record{
			RunID: "big", Scenario: "s", Model: "m", Repeat: i, Status: status,
			CaseID: "s/m#" + strconv.Itoa(i),
		})
	}
	return Aggregate(run)
}

func TestTextCasesTable(t *testing.T) {
	tests := []struct {
		name       string
		s          *Summary
		opts       Options
		wantRows   int
		wantTitle  string
		wantNote   string
		wantAbsent string
	}{
		{"small run: every case", bigRun(SmallRun, 1), Options{}, SmallRun, "Cases\n", "", ""},
		{"large run: failures only", bigRun(SmallRun+5, 2), Options{}, 2, "Cases that did not pass\n", "23 passed cases not listed (-cases lists them)", "s/m#2 "},
		{"large run, -cases: every case", bigRun(SmallRun+5, 2), Options{AllCases: true}, SmallRun + 5, "Cases\n", "", ""},
		{"large run, all passed", bigRun(SmallRun+1, 0), Options{}, 0, "Cases\nall 21 cases passed (-cases lists them)\n", "", "s/m#0 "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteText(&b, tt.s, tt.opts); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			cases, _, _ := strings.Cut(out[strings.Index(out, "\nCases")+1:], "\nSummary\n")
			if !strings.HasPrefix(cases, tt.wantTitle) {
				t.Errorf("cases section starts %q, want %q", cases[:min(len(cases), 40)], tt.wantTitle)
			}
			if got := len(regexp.MustCompile(`(?m)^s/m#\d+ `).FindAllString(cases, -1)); got != tt.wantRows {
				t.Errorf("%d case rows, want %d:\n%s", got, tt.wantRows, cases)
			}
			if tt.wantNote != "" && !strings.Contains(cases, tt.wantNote+"\n") {
				t.Errorf("no note %q:\n%s", tt.wantNote, cases)
			}
			if tt.wantAbsent != "" && strings.Contains(cases, tt.wantAbsent) {
				t.Errorf("a passed case is listed:\n%s", cases)
			}
		})
	}
}

func TestTextFitsTerminal(t *testing.T) {
	_, next, opts := fixtureVerdicts(t)
	opts.Width = 80
	opts.Dir = "testdata/runs/new"
	var b bytes.Buffer
	if err := WriteText(&b, next, opts); err != nil {
		t.Fatal(err)
	}
	golden(t, "new.80.txt", b.Bytes())
	problems, checked := tabletest.Overflows(b.String(), 80)
	for _, p := range problems {
		t.Error(p)
	}
	if checked < 100 {
		t.Errorf("only %d table lines checked", checked)
	}
	if !strings.Contains(b.String(), "hidden to fit 80 columns: ") || !strings.Contains(b.String(), "(-wide shows them)") {
		t.Error("no note says which columns were hidden")
	}
}

func TestCompareMarkdownAndJSON(t *testing.T) {
	_, _, opts := fixtureVerdicts(t)
	c := opts.Comparison
	var md bytes.Buffer
	if err := WriteCompareMarkdown(&md, c); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.md", md.Bytes())
	if !strings.HasPrefix(md.String(), CompareMarker+"\n") {
		t.Errorf("the Markdown does not start with %q", CompareMarker)
	}

	var js bytes.Buffer
	if err := WriteCompareJSON(&js, c); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema  int    `json:"schema"`
		OldRun  string `json:"old_run"`
		NewRun  string `json:"new_run"`
		Verdict struct {
			Regressed bool     `json:"regressed"`
			Reasons   []string `json:"reasons"`
		} `json:"verdict"`
		Groups []struct {
			Scenario string `json:"scenario"`
			InOld    bool   `json:"in_old"`
			InNew    bool   `json:"in_new"`
			P95      struct {
				Old    float64 `json:"old"`
				New    float64 `json:"new"`
				Tested bool    `json:"tested"`
			} `json:"p95_call_ms"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, js.String())
	}
	if doc.Schema != CompareSchema || doc.OldRun != "20260501T100000Z-base" || doc.NewRun != "20260508T100000Z-new" {
		t.Errorf("schema %d, runs %q %q", doc.Schema, doc.OldRun, doc.NewRun)
	}
	if !doc.Verdict.Regressed || len(doc.Verdict.Reasons) != 4 || !strings.Contains(doc.Verdict.Reasons[0], "legacy-pinned/scripted: vanished") {
		t.Errorf("verdict %+v, want regressed with 4 reasons, the vanished group first", doc.Verdict)
	}
	var order []string
	for _, g := range doc.Groups[:3] {
		order = append(order, g.Scenario)
	}
	if diff := cmp.Diff([]string{"legacy-pinned", "cmdb-find", "chaos-failures"}, order); diff != "" {
		t.Errorf("first groups (-want +got):\n%s", diff)
	}
	if g := doc.Groups[3]; g.Scenario != "search-desc" || !g.P95.Tested || g.P95.Old != 362.15 {
		t.Errorf("group 3 = %+v", g)
	}
}

// TestColumnNamesDistinct: every column of every table a report shows has
// a name of its own, so that a note on the columns hidden to fit a
// terminal says which went, and a reader of the Markdown knows which
// change a column is.
func TestColumnNamesDistinct(t *testing.T) {
	_, next, opts := fixtureVerdicts(t)
	routing := fixture(t, "routing")
	tables := append(runTables(next), GateTable(opts.Gates), CaseTable(next))
	tables = append(tables, opts.Comparison.Tables()...)
	tables = append(tables, routingTables(routing.Routing, textLimits, true)...)
	tables = append(tables, Compare(routing, fixture(t, "routing-new"), DefaultThresholds()).Tables()...)
	if len(tables) < 15 {
		t.Fatalf("only %d tables", len(tables))
	}
	for _, tbl := range tables {
		seen := map[string]bool{}
		for _, c := range tbl.Columns {
			if c.Name == "" || seen[c.Name] {
				t.Errorf("table %q: column %q is unnamed or named twice", tbl.Title, c.Name)
			}
			seen[c.Name] = true
		}
	}
}
