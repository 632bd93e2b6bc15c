package view

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/hosteval/hosteval/internal/web/webtest"
)

// routingRun copies report's routing fixture (10 rows, two description
// variants, the lexical router, 0 and 25 distractors) into a results
// folder of its own.
func routingRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "routing"), os.DirFS(filepath.Join("..", "..", "report", "testdata", "runs", "routing"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRoutingHeatMapInChromium opens a routing run as a person checking a
// description change would: the heat map of each routing group, its
// cells linked to their cases. Following the cell "expected
// cmdb__find_assets, chose cmdb__get_asset" of a-terse lists exactly the
// case of that confusion (row 2), with its routing verdict, and the
// diagonal cell of the same row lists the one case routed right.
func TestRoutingHeatMapInChromium(t *testing.T) {
	base := start(t, routingRun(t), 0)
	b := webtest.Browser(t)
	do(t, b, "open the routing run", chromedp.Navigate(base+"/runs/routing/"), chromedp.WaitVisible(chromedp.CSS("#routing table.heatmap")))
	if n := count(t, b, "#routing table.heatmap"); n != 4 {
		t.Errorf("heat maps: %d, want one per routing group (2 variants x 2 catalog sizes)", n)
	}
	if n := count(t, b, "#routing .curves svg circle"); n != 4 {
		t.Errorf("points of the accuracy-against-tokens curve: %d, want 4", n)
	}
	if got := shown(t, b, "#routing h3.routing-group"); got != "routing/a-terse/lexical (lexical proxy)" {
		t.Errorf("first group is %q, want it marked a lexical proxy", got)
	}
	webtest.Screenshot(t, b, "routing")

	// The first heat map is a-terse's without distractors. Its cell of
	// row cmdb__find_assets, column cmdb__get_asset.
	links := run(t, b, "cell links", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#routing table.heatmap")[0].querySelectorAll("td.hm a")].map(a => a.title || a.parentElement.title)`))
	// Its matrix has 9 cells that are not zero: rows find_assets and
	// get_asset two each, search_knowledge, list_tickets and open_ticket
	// one each, no tool two.
	if len(links) != 9 {
		t.Errorf("linked cells: %d (%q), want the 9 cells that are not zero", len(links), links)
	}
	do(t, b, "follow a confusion's cell",
		chromedp.Click(chromedp.CSS(`#routing table.heatmap td[title="expected cmdb__find_assets, chose cmdb__get_asset: 1 of 2"] a`)),
		chromedp.WaitVisible(chromedp.CSS("#route-filter")))
	loc := run(t, b, "location", chromedp.Location())
	for _, want := range []string{"scenario=routing", "variant=a-terse", "model=lexical", "catalog=0", "expected=cmdb__find_assets", "chosen=cmdb__get_asset"} {
		if !strings.Contains(loc, want) {
			t.Errorf("cell led to %s, want %s in it", loc, want)
		}
	}
	cases := run(t, b, "cases listed", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#cases-table tr.case-row")].map(r => r.dataset.case)`))
	if len(cases) != 1 || cases[0] != "routing/a-terse/lexical/2#0" {
		t.Errorf("cases of the cell: %q, want routing/a-terse/lexical/2#0", cases)
	}
	if got := shown(t, b, "#cases-table td.route.wrong"); got != "expected cmdb__find_assets, chose cmdb__get_asset" {
		t.Errorf("the case's routing reads %q", got)
	}
	webtest.Screenshot(t, b, "routing-cell")

	// Back to the map, the diagonal cell of the same row.
	do(t, b, "follow a diagonal cell", chromedp.Navigate(base+"/runs/routing/"),
		chromedp.WaitVisible(chromedp.CSS("#routing table.heatmap")),
		chromedp.Click(chromedp.CSS(`#routing table.heatmap td.diag[title="expected cmdb__find_assets, chose cmdb__find_assets: 1 of 2"] a`)),
		chromedp.WaitVisible(chromedp.CSS("#route-filter")))
	cases = run(t, b, "cases listed", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#cases-table tr.case-row")].map(r => r.dataset.case)`))
	if len(cases) != 1 || cases[0] != "routing/a-terse/lexical/9#0" {
		t.Errorf("cases of the diagonal cell: %q, want routing/a-terse/lexical/9#0", cases)
	}
	if n := count(t, b, "#cases-table td.route.wrong"); n != 0 {
		t.Errorf("%d cases of a diagonal cell shown as routed wrong", n)
	}
}
