package view

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hosteval/hosteval/internal/web"
	"github.com/hosteval/hosteval/internal/web/webtest"
)

// docsShot, when set, also saves the case page's screenshot as the
// README's picture (docs/view-case.png).
var docsShot = flag.Bool("docs-screenshot", false, "save the case page's screenshot as docs/view-case.png")

// start serves the pages over dir on a loopback port as `hosteval view`
// does, watching the folder, until the test ends.
func start(t *testing.T, dir string, poll time.Duration) string {
	t.Helper()
	v, err := New(Options{Dir: dir, Poll: poll})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := web.Listen("", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- v.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		v.Close()
	})
	return strings.TrimSuffix(web.URL(ln), "/")
}

func run[T any](t *testing.T, b context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(b, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func do(t *testing.T, b context.Context, what string, actions ...chromedp.Action[struct{}]) {
	t.Helper()
	if _, err := chromedp.Run(b, chromedp.Steps(actions...)); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func count(t *testing.T, b context.Context, selector string) int {
	t.Helper()
	return int(run(t, b, "count "+selector, chromedp.Evaluate[float64](`document.querySelectorAll(`+jsString(selector)+`).length`)))
}

// shown is the text of the first element selector matches, as shown. A
// page is complete when it is asked (the caller waited for it), so a
// missing element fails at once rather than at the browser's deadline.
func shown(t *testing.T, b context.Context, selector string) string {
	t.Helper()
	got := run(t, b, "text of "+selector, chromedp.Evaluate[*string](`document.querySelector(`+jsString(selector)+`)?.innerText ?? null`))
	if got == nil {
		t.Errorf("no element %s on the page", selector)
		return ""
	}
	return *got
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// TestViewInChromium walks the pages as a person debugging a red run
// would, in a real browser: the runs, the new run, its failures only, the
// failing case's transcript (the unknown tool, the declined form, the cut
// result), a case full of hostile strings, and the comparison with the
// base run. Each page is kept as a screenshot (webtest.Screenshot).
func TestViewInChromium(t *testing.T) {
	base := start(t, fixtureRuns, 0)
	b := webtest.Browser(t)

	// The runs.
	do(t, b, "open the runs page", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#runs")))
	if n := count(t, b, "#runs tr.run-row"); n != 2 {
		t.Errorf("runs listed: %d, want base and new", n)
	}
	if n := count(t, b, "#trends figure.spark svg"); n != 3 {
		t.Errorf("trend charts: %d, want pass rate, p95 latency and tokens per request", n)
	}
	webtest.Screenshot(t, b, "runs")

	// The new run, then only its failures.
	do(t, b, "open the new run",
		chromedp.Click(chromedp.CSS(`tr[data-run="new"] a.run-link`)),
		chromedp.WaitVisible(chromedp.CSS("#cases-table")))
	if n := count(t, b, "#cases-table tr.case-row"); n != 8 {
		t.Errorf("cases of the new run: %d rows, want 8", n)
	}
	if n := count(t, b, "#charts svg"); n != 5 {
		t.Errorf("charts of the new run: %d, want 5", n)
	}
	webtest.Screenshot(t, b, "run")
	// Choosing a status applies the filter: the page's script submits the
	// form on a change, with only the fields that are set.
	do(t, b, "filter to the cases that did not pass",
		chromedp.SetValue(chromedp.CSS(`#filters select[name="status"]`), "failed"),
		chromedp.WaitVisible(chromedp.CSS("#clear-filters")))
	if loc := run(t, b, "location", chromedp.Location()); !strings.HasSuffix(loc, "/runs/new/?status=failed#cases") {
		t.Errorf("filtered page at %s, want /runs/new/?status=failed#cases", loc)
	}
	if got := count(t, b, "#cases-table tr.case-row"); got != 2 {
		t.Errorf("failures listed: %d, want 2", got)
	}
	if got := count(t, b, "#cases-table tr.case-row.status-pass"); got != 0 {
		t.Errorf("%d passing cases listed among the failures", got)
	}
	webtest.Screenshot(t, b, "run-failures")

	// The failing case: an unknown tool, the person's declined form, a cut result.
	do(t, b, "open the failing case",
		chromedp.Click(chromedp.CSS(`tr[data-case="triage#0"] a.case-link`)),
		chromedp.WaitVisible(chromedp.CSS("#transcript")))
	if got := shown(t, b, "#case-status"); got != "fail" {
		t.Errorf("case status shown as %q, want fail", got)
	}
	unknown := shown(t, b, ".call.unknown_tool .decision")
	if !strings.Contains(unknown, "unknown tool") || !strings.Contains(unknown, "nothing sent") {
		t.Errorf("the unknown tool's decision reads %q", unknown)
	}
	if got := shown(t, b, ".call.unknown_tool .call-head .tool"); got != "cmdb__delete_asset" {
		t.Errorf("the unknown tool is %q, want cmdb__delete_asset", got)
	}
	form := shown(t, b, `.call[id] .round .answer-line.no`)
	if !strings.Contains(form, "decline") {
		t.Errorf("the person's answer to the form reads %q, want a decline", form)
	}
	question := shown(t, b, `.call[id] .round .ask`)
	if !strings.Contains(question, "tickets asks the person") || !strings.Contains(question, "Open an incident ticket for jump-prod-02?") {
		t.Errorf("the server's question reads %q", question)
	}
	cut := shown(t, b, "mark.cut")
	if !strings.Contains(cut, "cut here") || !strings.Contains(cut, "result cut to 4000 bytes by the host") {
		t.Errorf("the cut reads %q", cut)
	}
	if got := shown(t, b, ".call.ok .result .muted"); !strings.Contains(got, "cut by the result budget from") {
		t.Errorf("the cut result's size line reads %q", got)
	}
	webtest.Screenshot(t, b, "case")
	if *docsShot {
		// Tall enough for the three calls, not for the whole page.
		do(t, b, "size the window", chromedp.EmulateViewport(1280, 1900))
		png := run(t, b, "screenshot the case page", chromedp.CaptureScreenshot())
		if err := os.WriteFile(filepath.Join("..", "..", "..", "docs", "view-case.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Hostile strings show as text, and run nothing.
	do(t, b, "open the hostile case", chromedp.Navigate(base+"/runs/new/cases/2"), chromedp.WaitVisible(chromedp.CSS("#transcript")))
	if got := shown(t, b, "#turn-1 pre.question"); got != `<script>window.pwned=1</script>"><img src=x onerror="window.pwned=2">` {
		t.Errorf("the hostile question shows as %q, want it verbatim", got)
	}
	if got := shown(t, b, ".call .result-text"); !strings.Contains(got, `<script>window.pwned=3</script>`) {
		t.Errorf("the hostile tool result shows as %q, want the <script> as text", got)
	}
	if n := count(t, b, "main script, main img, main iframe"); n != 0 {
		t.Errorf("hostile strings made %d elements", n)
	}
	do(t, b, "open its raw record", chromedp.Click(chromedp.CSS("#record summary")))
	if pwned := run(t, b, "window.pwned", chromedp.Evaluate[string](`String(window.pwned)`)); pwned != "undefined" {
		t.Errorf("window.pwned = %s: a hostile string ran", pwned)
	}
	webtest.Screenshot(t, b, "hostile")

	// The comparison: what vanished and appeared first, the regression marked.
	do(t, b, "compare base with new", chromedp.Navigate(base+"/"),
		chromedp.Click(chromedp.CSS(`tr[data-run="new"] a[href^="/compare"]`)),
		chromedp.WaitVisible(chromedp.CSS("#compare-table")))
	if got := shown(t, b, `#compare-table tr.regressed[data-group="lookup/scripted"] td`); !strings.Contains(got, "regressed") || !strings.Contains(got, "pass rate 100% -> 0%") {
		t.Errorf("the regression row reads %q", got)
	}
	rows := run(t, b, "row order", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#compare-table tr.group-row")].map(r => r.dataset.group)`))
	if len(rows) < 3 || rows[0] != "retired/scripted" || rows[1] != "fresh/scripted" {
		t.Errorf("compare rows in order %q, want the vanished and the appeared groups first", rows)
	}
	if got := shown(t, b, "#verdict"); !strings.Contains(got, "Regressed") {
		t.Errorf("verdict reads %q", got)
	}
	webtest.Screenshot(t, b, "compare")

	do(t, b, "open the catalog", chromedp.Navigate(base+"/catalog"), chromedp.WaitVisible(chromedp.CSS("#catalog-tokens")))
	if got := shown(t, b, "#catalog-tokens"); got == "" || got == "0" {
		t.Errorf("catalog tokens per request = %q", got)
	}
	webtest.Screenshot(t, b, "catalog")
}

// TestLiveRunInChromium watches a run being written: the run page counts
// each case the moment its record is appended, without a reload.
func TestLiveRunInChromium(t *testing.T) {
	results := t.TempDir()
	live := newLiveRun(t, results)
	live.add()
	base := start(t, results, 20*time.Millisecond)
	b := webtest.Browser(t)
	do(t, b, "open the live run", chromedp.Navigate(base+"/runs/live/"), chromedp.WaitVisible(chromedp.CSS("#cases-table")))
	do(t, b, "wait for the event stream", chromedp.WaitVisible(chromedp.CSS(`body[data-watching="1"]`)))
	if got := shown(t, b, "#total-cases"); got != "1" {
		t.Fatalf("cases before = %q, want 1", got)
	}
	live.add()
	live.add()
	do(t, b, "wait for the page to count 3 cases", chromedp.Poll[struct{}](`document.getElementById("total-cases").textContent === "3"`, chromedp.WithPollingTimeout(time.Minute)))
	if n := count(t, b, "#cases-table tr.case-row"); n != 3 {
		t.Errorf("rows after two more records: %d, want 3", n)
	}
	webtest.Screenshot(t, b, "live")
}
