package web_test

import (
	"context"
	"embed"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/hosteval/hosteval/internal/web"
	"github.com/hosteval/hosteval/internal/web/webtest"
)

//go:embed testdata
var testdata embed.FS

// hostile is what a model or a server may put in any string a page shows.
const hostile = `<script>window.pwned = 1</script>"><img src=x onerror="window.pwned=2">`

// TestFrameInChromium serves a page built on the shared frame and checks,
// in a real browser, that hostile strings show as text and run nothing,
// that a javascript: link is neutralised, and that live events arrive.
func TestFrameInChromium(t *testing.T) {
	tmpl, err := web.Templates(testdata, "testdata/page.html")
	if err != nil {
		t.Fatal(err)
	}
	events := web.NewEvents(16)
	defer events.Close()
	mux := http.NewServeMux()
	mux.Handle(web.StaticPrefix, web.Static())
	mux.Handle("/events", events)
	mux.HandleFunc("/page.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, testdata, "testdata/page.js")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		data := map[string]string{"Title": "Frame", "Hostile": hostile, "Link": "javascript:window.pwned=3"}
		if err := tmpl.ExecuteTemplate(w, "frame.html", data); err != nil {
			t.Error(err)
		}
	})
	ln, err := web.Listen("", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go web.Serve(ctx, ln, mux)

	b := webtest.Browser(t)
	if _, err := chromedp.Run(b, chromedp.Steps(
		chromedp.Navigate(web.URL(ln)),
		chromedp.WaitVisible(chromedp.CSS("#title")),
	)); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(b, chromedp.Title())
	if err != nil || title != "Frame · hosteval" {
		t.Errorf("title = %q, %v", title, err)
	}
	text, err := chromedp.Run(b, chromedp.Text(chromedp.CSS("#hostile")))
	if err != nil || text != hostile {
		t.Errorf("hostile text shown as %q (%v), want it verbatim as text", text, err)
	}
	imgs, err := chromedp.Run(b, chromedp.Evaluate[float64](`document.querySelectorAll("main img, main script").length`))
	if err != nil || imgs != 0 {
		t.Errorf("hostile markup made %v elements (%v), want 0", imgs, err)
	}
	href, err := chromedp.Run(b, chromedp.AttributeValue(chromedp.CSS("#link"), "href"))
	if err != nil || href.Value != "#ZgotmplZ" {
		t.Errorf("javascript: link href = %q (%v), want html/template's #ZgotmplZ", href.Value, err)
	}
	webtest.Screenshot(t, b, "frame")

	if err := events.Publish("row", map[string]string{"text": hostile}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(b, chromedp.WaitVisible(chromedp.CSS("#live li"))); err != nil {
		t.Fatal(err)
	}
	live, err := chromedp.Run(b, chromedp.Text(chromedp.CSS("#live li")))
	if err != nil || live != hostile {
		t.Errorf("live row = %q (%v), want the event's text", live, err)
	}
	pwned, err := chromedp.Run(b, chromedp.Evaluate[string](`String(window.pwned)`))
	if err != nil || pwned != "undefined" {
		t.Errorf("window.pwned = %q (%v): a hostile string ran", pwned, err)
	}
}
